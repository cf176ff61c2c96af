"""Plain-data records of a generation: one `Round` per draft -> verify -> commit.

Everything a page draws is in these records, so a recorded trace can be scrubbed, saved as
JSON and replayed without loading a model. Token ids are ints, probabilities floats, times
milliseconds.

Timed boundary: `prefill_ms` covers the prompt pass of the target (and of a drafter that needs
one) and is kept apart; decode time is the sum over rounds of `total_ms`, measured from the
start of drafting to the end of committing.
"""
import json
from dataclasses import asdict, dataclass, field, fields


@dataclass
class Round:
    index: int
    proposed: list[int]                 # drafted token ids x_1..x_k
    proposed_tokens: list[str]
    q: list[float]                      # q_i(x_i): probability the drafter gave its proposal
    q_top: list[list]                   # per proposal: [[id, text, prob], ...] top of q
    p_top: list[list]                   # per candidate history H, H x1, ...: top of p (k+1 rows)
    p_proposed: list[float]             # p_i(x_i)
    target_choice: list[int]            # argmax of p at each candidate history (k+1)
    decisions: list[dict]               # per proposal: accepted, and u / ratio / target_draw
    greedy: dict | None                 # the n_matches computation (greedy verifier only)
    accepted: int                       # proposals kept
    emitted: list[dict]                 # [{"id", "text", "kind": accepted|correction|bonus}]
    processed_before: int               # target cache length before / after this round
    processed_after: int
    committed_before: int               # committed token count before / after
    committed_after: int
    draft_ms: float
    verify_ms: float
    overhead_ms: float
    total_ms: float
    drafter_info: dict = field(default_factory=dict)

    @property
    def emitted_ids(self) -> list[int]:
        return [e["id"] for e in self.emitted]


@dataclass
class Trace:
    prompt: str
    settings: dict
    prompt_ids: list[int]
    prefill_ms: float
    rounds: list[Round] = field(default_factory=list)
    prompt_tokens: list[str] = field(default_factory=list)   # text of each prompt id, for replay
    notices: list[str] = field(default_factory=list)   # e.g. the prompt was truncated
    finished: bool = False

    @property
    def new_ids(self) -> list[int]:
        return [i for r in self.rounds for i in r.emitted_ids]

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @staticmethod
    def from_json(text: str) -> "Trace":
        """Parse a trace saved by `to_json`; raises ValueError with a readable reason if not."""
        try:
            d = json.loads(text)
            names = {f.name for f in fields(Round)}
            rounds = [Round(**{k: v for k, v in r.items() if k in names}) for r in d.pop("rounds")]
            trace = Trace(**d, rounds=rounds)
        except (json.JSONDecodeError, TypeError, KeyError, AttributeError) as e:
            raise ValueError(f"not a specviz trace: {e}") from e
        if not all(isinstance(i, int) for i in trace.prompt_ids + trace.new_ids):
            raise ValueError("not a specviz trace: token ids must be integers")
        if not all(isinstance(t, str) for t in trace.prompt_tokens):
            raise ValueError("not a specviz trace: token texts must be strings")
        return trace
