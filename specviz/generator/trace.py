"""Plain-data records of a generation: one `Round` per draft -> verify -> commit.

Everything a page draws is in these records, so a recorded trace can be scrubbed, saved as
JSON and replayed without loading a model. Token ids are ints, probabilities floats, times
milliseconds.

The records are the trace's schema: pydantic checks every field's type and range when the
engine builds a record and when a file is read, and `check_round` / `check_trace`
(specviz.generator.trace_schema) check the relations between fields, on every round the engine
records (`Trace.record`) and on a whole file (`Trace.from_json`). A file that breaks any of
them is refused with one sentence naming the first thing wrong.

Timed boundary: `prefill_ms` covers the prompt pass of the target (and of a drafter that needs
one) and is kept apart; decode time is the sum over rounds of `total_ms`, measured from the
start of drafting to the end of committing.

What it leaves out: the relations of a `Round` built on its own (the viz tests draw hand-made
rounds); they are checked where a round joins a trace.
"""
import json
from dataclasses import asdict, field
from typing import Annotated

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, ValidationInfo, model_validator
from pydantic.dataclasses import dataclass

from specviz.generator.settings import Settings
from specviz.generator.trace_schema import (MAX_TOP, MAX_VOCAB, Count, Decision, DrafterInfo, Emitted, Flag, Greedy,
                                            Millis, Notice, Probability, Text, TokenId, TopRow, check_round,
                                            check_trace, refusal)

RECORD = ConfigDict(extra="forbid")


@dataclass(config=RECORD)
class Round:
    index: Count
    proposed: list[TokenId]             # drafted token ids x_1..x_k
    proposed_tokens: list[Text]
    q: list[Probability]                # q_i(x_i): probability the drafter gave its proposal
    q_top: list[TopRow]                 # per proposal: [[id, text, prob], ...] top of q
    p_top: list[TopRow]                 # per candidate history H, H x1, ...: top of p (k+1 rows)
    p_proposed: list[Probability]       # p_i(x_i)
    target_choice: list[TokenId]        # argmax of p at each candidate history (k+1)
    decisions: list[Decision]           # per proposal: accepted, and u / ratio / target_draw
    greedy: Greedy | None               # the n_matches computation (greedy verifier only)
    accepted: Count                     # proposals kept
    emitted: Annotated[list[Emitted], Field(min_length=1)]   # [{"id", "text", "kind": accepted|correction|bonus|stop}]
    processed_before: Count             # target cache length before / after this round
    processed_after: Count
    committed_before: Count             # committed token count before / after
    committed_after: Count
    draft_ms: Millis
    verify_ms: Millis
    overhead_ms: Millis
    total_ms: Millis
    drafter_info: DrafterInfo = field(default_factory=dict)

    @property
    def emitted_ids(self) -> list[int]:
        return [e["id"] for e in self.emitted]


@dataclass(config=RECORD)
class Trace:
    prompt: Text
    settings: Settings                  # saved as an object of its fields, read back strictly
    prompt_ids: list[TokenId]
    prefill_ms: Millis
    vocab_size: Annotated[int, Field(strict=True, ge=1, le=MAX_VOCAB)]   # every token id is below it
    top_k: Annotated[int, Field(strict=True, ge=1, le=MAX_TOP)]          # entries of each p_top / q_top row, at most
    rounds: list[Round] = field(default_factory=list)
    prompt_tokens: list[Text] = field(default_factory=list)   # text of each prompt id, for replay
    notices: list[Notice] = field(default_factory=list)       # e.g. the prompt was truncated
    finished: Flag = False

    @model_validator(mode="after")
    def _relations(self, info: ValidationInfo) -> "Trace":
        check_trace(self, (info.context or {}).get("max_new_tokens"))
        return self

    @property
    def new_ids(self) -> list[int]:
        return [i for r in self.rounds for i in r.emitted_ids]

    def record(self, r: Round) -> None:
        """Append the engine's next round once it agrees with the rounds before it."""
        check_round(self, len(self.rounds), r)
        self.rounds.append(r)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @staticmethod
    def from_json(text: str | bytes, max_new_tokens: int | None = None) -> "Trace":
        """Read a trace saved by `to_json`, refusing one longer than `max_new_tokens` new tokens.

        Raises ValueError with one sentence naming the first thing wrong; nothing else escapes.

        >>> Trace.from_json('{"prompt": "Hi"}')
        Traceback (most recent call last):
        ValueError: settings is missing
        """
        try:
            return _TRACE.validate_json(_saved_k(text), strict=True, context={"max_new_tokens": max_new_tokens})
        except ValidationError as e:
            raise ValueError(refusal(e)) from None
        except RecursionError:   # pydantic's parser stops deep nesting itself; this is a second guard
            raise ValueError("not a specviz trace: its lists are nested too deeply") from None


_TRACE = TypeAdapter(Trace)


def _saved_k(text: str | bytes) -> str | bytes:
    """A trace saved before the block size took the sources' name k holds it as settings.block_size:
    renamed, so that it replays with the k it ran at (unknown settings are otherwise dropped).

    >>> _saved_k('{"settings": {"block_size": 6}}')
    '{"settings": {"k": 6}}'
    """
    if "block_size" not in (text.decode(errors="replace") if isinstance(text, bytes) else text):
        return text
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return text   # refused, with its reason, by the validation that follows
    settings = data.get("settings") if isinstance(data, dict) else None
    if not isinstance(settings, dict) or "block_size" not in settings or "k" in settings:
        return text
    settings["k"] = settings.pop("block_size")
    return json.dumps(data)
