"""What a trace may hold: the value types of its fields, and the relations between them.

`specviz.generator.trace` declares `Round` and `Trace` with these types (pydantic checks them
field by field); `check_trace` and `check_round` check what no single field can say: that a
round's lists have its proposal count, that the counts follow from round to round, that every
token id is inside the recorded vocabulary, that the verifier's record agrees with what it kept.
The engine runs `check_round` on every round it records; a file loaded for replay runs all of it.

A problem is one sentence naming the first thing wrong (`refusal`):

    round 3: accepted 99 exceeds the 4 proposals

What it leaves out: whether the numbers came from a real model (a consistent, hand-made trace
replays), and the size of a file (the upload limit in .streamlit/config.toml bounds it).
"""
import math
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, Strict, ValidationError, with_config
from typing_extensions import NotRequired, TypedDict

from specviz.generator.settings import Settings

MAX_VOCAB = 1 << 24          # far above any tokenizer (the largest have about 2**18 tokens)
MAX_TOP = 100
NOTICE_MARKUP = set("[]<>`$\\")   # notices are shown as markdown: no links, images, html, code or formulas

TokenId = Annotated[int, Strict(), Field(ge=0)]      # and below the trace's vocab_size (check_round)
Count = Annotated[int, Strict(), Field(ge=0)]
Probability = Annotated[float, Strict(), Field(ge=0, le=1, allow_inf_nan=False)]
Millis = Annotated[float, Strict(), Field(ge=0, allow_inf_nan=False)]
Finite = Annotated[float, Strict(), Field(allow_inf_nan=False)]
Flag = Annotated[bool, Strict()]
Text = Annotated[str, Strict()]


def _plain(text: str) -> str:
    if NOTICE_MARKUP & set(text):
        raise ValueError(f"a notice is a plain sentence, without any of {''.join(sorted(NOTICE_MARKUP))}")
    return text


Notice = Annotated[str, Strict(), AfterValidator(_plain)]
TopEntry = tuple[TokenId, Text, Probability]      # [id, text, probability], one of a top-k list
TopRow = list[TopEntry]


@with_config(extra="forbid")
class Emitted(TypedDict):
    id: TokenId
    text: Text
    kind: Literal["accepted", "correction", "bonus", "stop"]


@with_config(extra="forbid")
class Decision(TypedDict):
    """Greedy records `accepted` alone; sampling adds p, q, ratio, u; matching adds target_draw."""
    accepted: Flag
    p: NotRequired[Probability]
    q: NotRequired[Probability]
    ratio: NotRequired[Probability]
    u: NotRequired[Probability]
    target_draw: NotRequired[TokenId]


@with_config(extra="forbid")
class Greedy(TypedDict):
    mismatch: list[Annotated[int, Strict(), Field(ge=0, le=1)]]
    cumsum: list[Count]
    n_matches: Count
    stop_rule_applied: Flag


# "continue" is a keyword, hence the functional form
Stage = with_config(extra="forbid")(TypedDict("Stage", {
    "start": Count, "end": Count, "logprob_sum": Annotated[Finite, Field(le=0)], "continue": Flag}))


@with_config(extra="forbid")
class DrafterInfo(TypedDict, total=False):
    """What a block drafter adds about its round (specviz.generator.drafters.block); others add nothing."""
    stages: list[Stage]
    threshold: Annotated[float, Strict(), Field(le=0)] | None    # may be -inf: every stage runs
    max_stages: Annotated[int, Strict(), Field(ge=1, le=8)]
    confidence: list[Probability]
    survival: list[Probability]
    confidence_logit: list[Finite]


def check_trace(trace, most_new_tokens: int | None = None) -> None:
    """Every relation of a whole trace, first problem first; `most_new_tokens` is the host's limit."""
    if len(trace.prompt_ids) < 1:
        raise ValueError("prompt_ids is empty: a trace starts from at least the end-of-text marker")
    if trace.prompt_tokens and len(trace.prompt_tokens) != len(trace.prompt_ids):
        raise ValueError(f"prompt_tokens holds {len(trace.prompt_tokens)} texts for {len(trace.prompt_ids)} "
                         f"prompt ids")
    _in_vocab(trace, "prompt_ids", trace.prompt_ids)
    for i, r in enumerate(trace.rounds):
        check_round(trace, i, r)
    new = sum(len(r.emitted) for r in trace.rounds)
    if most_new_tokens is not None and new > most_new_tokens:
        raise ValueError(f"the trace holds {new} new tokens; this server replays at most {most_new_tokens}")


def check_round(trace, i: int, r) -> None:
    """Round `i` of `trace` (recorded before it: trace.rounds[:i]) against everything before it.

    Which token is end-of-text a trace does not record (a chat template's prompt does not start
    with it), so a round that stops there is judged by its counts alone.
    """
    try:
        _check_round(trace, i, r)
    except ValueError as e:
        raise ValueError(f"round {i + 1}: {e}") from None


def _check_round(trace, i: int, r) -> None:
    s, k = trace.settings, len(r.proposed)
    before = trace.rounds[:i]
    new_before = sum(len(x.emitted) for x in before)
    left = s.max_new_tokens - new_before
    if r.index != i:
        raise ValueError(f"index {r.index} should be {i} (rounds are numbered in order)")
    if left < 1:
        raise ValueError(f"comes after all {s.max_new_tokens} new tokens the settings allow")
    # counts that follow from the round before (the cache holds every committed token but the newest)
    committed = len(trace.prompt_ids) + new_before
    _equal("committed_before", r.committed_before, committed)
    _equal("processed_before", r.processed_before, committed - 1)
    _equal("committed_after", r.committed_after, committed + len(r.emitted))
    _equal("processed_after", r.processed_after, committed + len(r.emitted) - 1)
    # the proposals and the lists that have one entry per proposal (or per candidate history)
    most = s.k * s.max_stages if s.drafter else 0
    if k > most:
        raise ValueError(f"{k} proposals exceed the {most} a round of these settings can draft")
    if k > left:
        raise ValueError(f"{k} proposals exceed the {left} new tokens the settings leave")
    for name in ("proposed_tokens", "q", "p_proposed"):
        _length(name, getattr(r, name), k)
    _length("q_top", r.q_top, k)
    _length("p_top", r.p_top, k + 1)
    _length("target_choice", r.target_choice, k + 1)
    for name in ("q_top", "p_top"):
        for j, row in enumerate(getattr(r, name)):
            if not 1 <= len(row) <= trace.top_k:
                raise ValueError(f"{name}[{j}] lists {len(row)} tokens; the trace records 1 to {trace.top_k}")
    ids = [*r.proposed, *r.target_choice, *(e["id"] for e in r.emitted),
           *(t for rows in (r.q_top, r.p_top) for row in rows for t, _, _ in row),
           *(d["target_draw"] for d in r.decisions if "target_draw" in d)]
    _in_vocab(trace, "a token id", ids)
    # what was kept, and what was emitted for it
    if r.accepted > k:
        raise ValueError(f"accepted {r.accepted} exceeds the {k} proposal{'s' if k != 1 else ''}")
    _check_emitted(r, k, left)
    _check_verifier(s, r, k, left)
    _check_stages(r.drafter_info)


def _check_emitted(r, k: int, left: int) -> None:
    e, n = r.emitted, r.accepted
    if len(e) > left:
        raise ValueError(f"emits {len(e)} tokens but only {left} new tokens were left")
    for j, x in enumerate(e[:n]):
        if x["kind"] != "accepted" or x["id"] != r.proposed[j] or x["text"] != r.proposed_tokens[j]:
            raise ValueError(f"emitted[{j}] should be accepted proposal {j + 1} ({r.proposed[j]})")
    if len(e) == n + 1:
        # under the stop rule the target supplies the last matched proposal itself: kind "stop"
        stopped = bool(r.greedy and r.greedy["stop_rule_applied"])
        kind = "stop" if stopped else "bonus" if n == k else "correction"
        if e[-1]["kind"] != kind:
            raise ValueError(f"the token after {n} accepted of {k} proposals is a {kind}, not a {e[-1]['kind']}")
    elif not len(e) == n == k > 0:   # every proposal kept, the bonus cut off by end-of-text or the limit
        raise ValueError(f"emits {len(e)} tokens for {n} accepted: expected the accepted proposals and "
                         f"one correction or bonus")


def _check_verifier(s: Settings, r, k: int, left: int) -> None:
    n, verifier, d = r.accepted, s.verifier, r.decisions
    keys = {"greedy": {"accepted"}, "sampling": {"accepted", "p", "q", "ratio", "u"},
            "match": {"accepted", "target_draw"}}[verifier]
    _length("decisions", d, k if verifier == "greedy" else min(n + 1, k))
    for j, x in enumerate(d):
        if set(x) != keys:
            raise ValueError(f"decisions[{j}] should hold {', '.join(sorted(keys))} under the {verifier} verifier")
        if x["accepted"] != (j < n):
            raise ValueError(f"decisions[{j}] says {'accepted' if x['accepted'] else 'rejected'}, "
                             f"but the round kept {n}")
    if (r.greedy is not None) != (verifier == "greedy"):
        raise ValueError(f"greedy should be {'recorded' if verifier == 'greedy' else 'null'} "
                         f"under the {verifier} verifier")
    last = r.emitted[-1]
    if verifier == "greedy":
        g = r.greedy
        mismatch = [int(x != y) for x, y in zip(r.proposed, r.target_choice)]
        cumsum = [sum(mismatch[:j + 1]) for j in range(k)]
        matched = sum(c < 1 for c in cumsum)
        if g["mismatch"] != mismatch or g["cumsum"] != cumsum:
            raise ValueError("greedy's mismatch and cumsum do not follow from proposed and target_choice")
        # transformers' stop rule: a block that reaches end-of-text or the length limit and matched
        # whole gives up its last match, so the target supplies that token itself
        stop = g["stop_rule_applied"]
        if stop and not matched == k > 0:
            raise ValueError("greedy applies the stop rule, though not every proposal matched")
        if not stop and matched == k > 0 and k >= left:
            raise ValueError("greedy should apply the stop rule: the block matched whole and reached the limit")
        if g["n_matches"] != matched - stop or g["n_matches"] != n:
            raise ValueError(f"greedy's n_matches {g['n_matches']} should be {matched - stop}, which accepted "
                             f"({n}) should equal")
        if last["id"] != r.target_choice[n]:
            raise ValueError(f"the {last['kind']} {last['id']} is not the target's choice {r.target_choice[n]}")
    elif verifier == "sampling":
        for j, x in enumerate(d):
            if x["p"] != r.p_proposed[j] or x["q"] != r.q[j]:
                raise ValueError(f"decisions[{j}]'s p and q differ from p_proposed and q")
            if not math.isclose(x["ratio"], min(1.0, x["p"] / x["q"]) if x["q"] > 0 else 1.0, rel_tol=1e-9) \
                    or x["accepted"] != (x["u"] < x["ratio"]):
                raise ValueError(f"decisions[{j}] does not follow min(1, p/q) and u < ratio")
    else:
        for j, x in enumerate(d):
            if (x["target_draw"] == r.proposed[j]) != x["accepted"]:
                raise ValueError(f"decisions[{j}] draws {x['target_draw']} against proposal {r.proposed[j]} "
                                 f"but says {'accepted' if x['accepted'] else 'rejected'}")
        if n < k and last["id"] != d[n]["target_draw"]:
            raise ValueError(f"the correction {last['id']} is not the target's draw {d[n]['target_draw']}")


def _check_stages(info: dict) -> None:
    if info.get("stages") and info.get("threshold") is not None and "max_stages" not in info:
        # the gate's rule reads the stage limit beside g (lessons.inside.gate_reason)
        raise ValueError("drafter_info gives the gate's threshold without max_stages, the stage limit it read")
    end = 0
    for j, st in enumerate(info.get("stages", [])):
        if st["start"] != end or st["end"] <= st["start"]:
            raise ValueError(f"drafter_info.stages[{j}] should start at {end} and end after it")
        end = st["end"]
    if len(info.get("confidence", [])) != len(info.get("survival", [])):
        raise ValueError("drafter_info holds a different number of confidences and survivals")


def _equal(name: str, value: int, expected: int) -> None:
    if value != expected:
        raise ValueError(f"{name} {value} should be {expected}")


def _length(name: str, values: list, expected: int) -> None:
    if len(values) != expected:
        raise ValueError(f"{name} holds {len(values)} entries, not {expected}")


def _in_vocab(trace, what: str, ids) -> None:
    for t in ids:
        if t >= trace.vocab_size:
            raise ValueError(f"{what} {t} is outside the vocabulary of {trace.vocab_size} tokens")


def refusal(error: ValidationError, most: int = 300) -> str:
    """The first problem pydantic found, as one sentence that names where it is, cut to `most`
    characters (a value quoted from the file can be as long as the file).

    >>> from pydantic import TypeAdapter
    >>> try:
    ...     TypeAdapter(dict[str, list[Probability]]).validate_python({"q": [0.5, "abc"]})
    ... except ValidationError as e:
    ...     print(refusal(e))
    q[1] should be a valid number, not 'abc'
    """
    text = _first_problem(error.errors(include_url=False)[0])
    return text if len(text) <= most else text[:most - 1] + "…"


def _first_problem(e: dict) -> str:
    loc = tuple(e["loc"])
    where = ""
    if len(loc) >= 2 and loc[0] == "rounds" and isinstance(loc[1], int):
        where, loc = f"round {loc[1] + 1}: ", loc[2:]
    elif len(loc) >= 2 and loc[0] == "settings":   # "settings: seed ...", as for a range Settings refuses
        where, loc = "settings: ", loc[1:]
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    kind, msg = e["type"], e["msg"]
    if kind == "json_invalid":
        return f"not a specviz trace: the file is not JSON ({msg.removeprefix('Invalid JSON: ')})"
    if not path:
        if kind == "value_error":
            return where + msg.removeprefix("Value error, ")
        return f"not a specviz trace: the file holds {_json_kind(e['input'])}, not an object of named fields"
    if kind == "value_error":
        return f"{where}{path}: {msg.removeprefix('Value error, ')}"
    if kind == "missing":
        return f"{where}{path} is missing"
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):
        return f"{where}{path} is not part of a specviz trace"
    shown = repr(e["input"])
    shown = shown if len(shown) <= 40 else shown[:40] + "…"
    return f"{where}{path} {msg.removeprefix('Input ')[0].lower()}{msg.removeprefix('Input ')[1:]}, not {shown}"


def _json_kind(value) -> str:
    """What a JSON value is, in words.

    >>> _json_kind([1]), _json_kind(None)
    ('a list', 'null')
    """
    kinds = [(bool, "true or false"), ((int, float), "a number"), (str, "a string"), (list, "a list"),
             (dict, "an object")]
    return "null" if value is None else next((w for t, w in kinds if isinstance(value, t)), "something else")
