"""Cost per committed token: the seed's accounting identity, break-even, and the width probe.

    ms per token = total elapsed decode time / total newly committed tokens

Committed tokens are accepted proposals plus the target's correction or bonus; discarded
proposals cost time and add nothing. Dividing totals (not averaging per-round ratios) weights
each round by the output it actually delivered.

`verification_cost_by_width` times one target forward of w tokens on top of a fixed context:
how much more a check of w candidates costs than a one-token step on the running hardware.
`regimes` prices a measurement's rounds on this machine and on a hypothetical large target on a GPU
(specviz.lessons.pricing), so the two regimes are compared on the same accepted tokens.

What it leaves out: overlapping phases (this engine runs draft, verify and commit one after
another, so their times add), batch serving, prefill and time to first token.
"""
import math
import statistics
from dataclasses import dataclass

import torch
from transformers import DynamicCache

from specviz.generator.clock import Stopwatch
from specviz.generator.engine import Generation, encode_prompt
from specviz.generator.settings import Settings
from specviz.lessons.pricing import Comparison, Profile, compare, measured_profiles, shapes
from specviz.lessons.protocol import alternate, cost_line, paired_spread, spread, versus_plain


def ms_per_token(total_ms: float, tokens: int) -> float:
    """Elapsed time divided by committed tokens.

    >>> ms_per_token(14.0, 4)
    3.5
    """
    if tokens <= 0:
        raise ValueError("no committed tokens: cost per token is undefined")
    return total_ms / tokens


def speedup(baseline_ms_per_token: float, method_ms_per_token: float) -> float:
    """How many times faster than the baseline (below 1: slower).

    >>> round(speedup(10.0, 3.5), 2)
    2.86
    """
    return baseline_ms_per_token / method_ms_per_token


@dataclass(frozen=True)
class Calculator:
    """The seed's worked example: plain decoding at `baseline_ms` per token against one
    speculative round of `round_ms` that commits `tokens` tokens.

    >>> c = Calculator(baseline_ms=10, round_ms=14, tokens=4)
    >>> c.ms_per_token, round(c.speedup, 2), c.faster
    (3.5, 2.86, True)
    >>> Calculator(10, 14, 1).ms_per_token, Calculator(10, 14, 1).faster
    (14.0, False)
    """
    baseline_ms: float = 10.0
    round_ms: float = 14.0
    tokens: int = 4

    def __post_init__(self):
        if self.baseline_ms <= 0 or self.round_ms <= 0:
            raise ValueError("times must be positive")
        if self.tokens < 1:
            raise ValueError("a round commits at least one token (the target's correction or bonus)")

    @property
    def ms_per_token(self) -> float:
        return ms_per_token(self.round_ms, self.tokens)

    @property
    def speedup(self) -> float:
        return speedup(self.baseline_ms, self.ms_per_token)

    @property
    def faster(self) -> bool:
        return self.ms_per_token < self.baseline_ms

    @property
    def break_even_tokens(self) -> float:
        return break_even_tokens(self.round_ms, self.baseline_ms)


def calculator_delta(calc: Calculator) -> tuple[str, str]:
    """The calculator's speedup label and its colour: faster, slower, or the same at break-even, so a round
    exactly at break-even (the question's own "the same") is never labelled slower.

    >>> calculator_delta(Calculator(10, 14, 4)), calculator_delta(Calculator(10, 14, 1))
    (('faster', 'normal'), ('slower', 'inverse'))
    >>> calculator_delta(Calculator(10, 20, 2))
    ('the same', 'off')
    """
    if math.isclose(calc.ms_per_token, calc.baseline_ms):
        return "the same", "off"
    return ("faster", "normal") if calc.faster else ("slower", "inverse")


def one_token_answer(example: Calculator) -> str:
    """Lesson 7's answer to "plain decoding costs `baseline_ms` a token, a round `round_ms`: if the
    round commits only one token, is speculation faster or slower?", then what `example`'s own
    token count buys, so the one-token verdict is read first.

    >>> print(one_token_answer(Calculator(10, 14, 4)))  # doctest: +NORMALIZE_WHITESPACE
    **Answer: slower (0.71×).** Committing one token, the round costs **14 ms per token** against 10 ms for
    plain decoding. The extra latency is repaid only when several delivered tokens share it: the round breaks
    even at 1.40 tokens. Committing 4, it costs 3.50 ms per token (2.86×).
    >>> one_token_answer(Calculator(10, 8, 4)).split(".** ")[0]
    '**Answer: faster (1.25×)'
    """
    one = Calculator(example.baseline_ms, example.round_ms, 1)
    verdict = ("the same" if math.isclose(one.ms_per_token, one.baseline_ms)
               else "faster" if one.faster else "slower")
    said = (f"**Answer: {verdict} ({one.speedup:.2f}×).** Committing one token, the round costs "
            f"**{one.ms_per_token:g} ms per token** against {one.baseline_ms:g} ms for plain decoding.")
    if verdict == "slower":
        said += (" The extra latency is repaid only when several delivered tokens share it: the round breaks even "
                 f"at {example.break_even_tokens:.2f} tokens.")
    else:
        said += (" A round that costs no more than a plain step needs no sharing; a real round drafts and checks "
                 "several positions, so it usually costs more.")
    if example.tokens > 1:
        said += (f" Committing {example.tokens}, it costs {example.ms_per_token:.2f} ms per token "
                 f"({example.speedup:.2f}×).")
    return said


def break_even_tokens(round_ms: float, baseline_ms: float) -> float:
    """Committed tokens per round at which speculation only ties plain decoding.

    >>> break_even_tokens(14.0, 10.0)
    1.4
    """
    return round_ms / baseline_ms


def speedup_sentence(speed) -> str:
    """The measured speedup over its runs (a protocol.Spread), and which side of 1× every run fell on.

    >>> from specviz.lessons.protocol import Spread
    >>> speedup_sentence(Spread(1.3, 1.1, 1.5, 5))
    'Speedup over the runs: **1.30× (1.10–1.50× over 5 runs)**: faster than plain decoding in every run.'
    >>> speedup_sentence(Spread(1.1, 0.9, 1.5, 5))
    "Speedup over the runs: **1.10× (0.90–1.50× over 5 runs)**: faster or slower is **within this machine's noise** here."
    """
    said = f"Speedup over the runs: **{speed.label(unit='×')}**"
    side = versus_plain(speed)
    if side in ("faster", "slower"):
        return f"{said}: {side} than plain decoding in every run."
    return f"{said}: faster or slower is **within this machine's noise** here."


def if_drafting_were_free(plain_ms_per_token: float, verify_ms_per_token: float) -> str:
    """What the same rounds would give if drafting and bookkeeping cost nothing: plain ms per token over
    the check's ms per committed token, said as faster only where the figure shown is above 1.00.

    >>> print(if_drafting_were_free(10.0, 4.0))
    If drafting and bookkeeping cost nothing, these rounds would be **2.50×** faster than plain decoding: the most a cheaper drafter with the same acceptance could reach. Past it, only more tokens a round or a cheaper check help.
    >>> print(if_drafting_were_free(10.0, 12.5))
    Even if drafting and bookkeeping cost nothing, these rounds would run at **0.80×** plain decoding's speed: their checks alone cost more a committed token than a plain step, so no cheaper drafter with the same acceptance could win here. Only more tokens a round or a cheaper check can.
    """
    free = speedup(plain_ms_per_token, verify_ms_per_token)
    shown = float(f"{free:.2f}")   # the words follow the figure printed: 1.004 reads 1.00×, which is level
    if shown > 1.0:
        return (f"If drafting and bookkeeping cost nothing, these rounds would be **{free:.2f}×** faster than plain "
                "decoding: the most a cheaper drafter with the same acceptance could reach. Past it, only more tokens "
                "a round or a cheaper check help.")
    if shown == 1.0:
        return ("Even if drafting and bookkeeping cost nothing, these rounds would run level with plain decoding "
                "(**1.00×**): their checks alone cost a plain step a committed token, so no cheaper drafter with the "
                "same acceptance could win here. Only more tokens a round or a cheaper check can.")
    return (f"Even if drafting and bookkeeping cost nothing, these rounds would run at **{free:.2f}×** plain decoding's "
            "speed: their checks alone cost more a committed token than a plain step, so no cheaper drafter with the "
            "same acceptance could win here. Only more tokens a round or a cheaper check can.")


def forwards_help(plain_rounds: int, rounds: int, tokens: int) -> dict:
    """The help beside lesson 8's "target forwards" and "tokens per target forward" metrics, read off the
    same counts: fewer, as many or more target forwards than plain decoding, and whether any proposal
    survived a check (more committed tokens than forwards). Counts, not timings: nothing here is noisy.

    >>> for said in (forwards_help(32, 12, 32), forwards_help(32, 32, 32)):
    ...     print(said["rounds"]); print(said["per_forward"])
    12 target forwards against plain decoding's 32: fewer target rounds.
    32 tokens from 12 target forwards, more than one a forward: proposals survived the checks (a longer surviving prefix).
    32 target forwards, as many as plain decoding: speculation saved no target round here.
    32 tokens from 32 target forwards, one a forward: no proposal survived a check here.
    """
    if rounds < plain_rounds:
        said = f"{rounds} target forwards against plain decoding's {plain_rounds}: fewer target rounds."
    elif rounds == plain_rounds:
        said = f"{rounds} target forwards, as many as plain decoding: speculation saved no target round here."
    else:
        said = f"{rounds} target forwards against plain decoding's {plain_rounds}: more target rounds here."
    if tokens > rounds:
        each = (f"{tokens} tokens from {rounds} target forwards, more than one a forward: proposals survived the "
                "checks (a longer surviving prefix).")
    else:
        each = (f"{tokens} tokens from {rounds} target forwards, {'one' if tokens == rounds else 'under one'} a "
                "forward: no proposal survived a check here.")
    return {"rounds": said, "per_forward": each}


def width_sentence(rows: list[dict]) -> str:
    """What the width probe (`verification_cost_by_width`) shows: the widest check's cost in one-token
    steps on the fitted line, against the w steps of checking its tokens one at a time.

    >>> print(width_sentence([{"width": 1, "relative": 1.0}, {"width": 16, "relative": 2.5}]))
    Checking **16 tokens costs 2.50×** a one-token step here (on the fitted line): less than the 16 steps of checking them one at a time, 0.16 of a step a token.
    >>> print(width_sentence([{"width": 1, "relative": 1.0}, {"width": 16, "relative": 17.0}]))
    Checking **16 tokens costs 17.00×** a one-token step here (on the fitted line): no less than the 16 steps of checking them one at a time, so on this machine a wider check shares nothing.
    """
    widest = rows[-1]
    w, x = widest["width"], widest["relative"]
    said = f"Checking **{w} tokens costs {x:.2f}×** a one-token step here (on the fitted line): "
    if x < w:
        return said + f"less than the {w} steps of checking them one at a time, {x / w:.2f} of a step a token."
    return said + f"no less than the {w} steps of checking them one at a time, so on this machine a wider check shares nothing."


def probe_versus_rounds(rows: list[dict], check_steps: float, width: int) -> str:
    """The width probe (`verification_cost_by_width` rows) beside the check of the rounds measured above
    (`check_steps`: their check in one-token steps, a check of `width` tokens), so a student who sets the
    two figures side by side reads why they differ. The probe's figure at `width` is read off its fitted
    line, between the widths it timed.

    >>> rows = [{"width": 4, "relative": 1.2}, {"width": 6, "relative": 1.4}]
    >>> print(probe_versus_rounds(rows, 1.31, 5))
    In the rounds measured above, a check of 5 tokens cost **1.31** one-token steps; the probe's line puts a 5-token forward at **1.30**: the two agree.
    >>> print(probe_versus_rounds(rows, 1.71, 5))  # doctest: +NORMALIZE_WHITESPACE
    In the rounds measured above, a check of 5 tokens cost **1.71** one-token steps; the probe's line puts a
    5-token forward at **1.30**. They time different things, so they need not agree: the probe keeps each
    width's fastest of 5 forwards on the prompt alone and divides by the fastest one-token forward; the rounds
    keep every check as it ran, at a growing context and with whatever else ran on the cores, and divide by
    plain decoding's step timed the same way. What the rounds paid is their figure.
    """
    pts = sorted((r["width"], r["relative"]) for r in rows)
    below = max((p for p in pts if p[0] <= width), default=pts[0])
    above = min((p for p in pts if p[0] >= width), default=pts[-1])
    probe = below[1] if above[0] == below[0] else below[1] + (above[1] - below[1]) * (width - below[0]) / (above[0] - below[0])
    said = (f"In the rounds measured above, a check of {width} tokens cost **{check_steps:.2f}** one-token steps; "
            f"the probe's line puts a {width}-token forward at **{probe:.2f}**")
    if abs(check_steps - probe) <= 0.1 * probe:
        return said + ": the two agree."
    return said + (". They time different things, so they need not agree: the probe keeps each width's fastest of 5 "
                   "forwards on the prompt alone and divides by the fastest one-token forward; the rounds keep every "
                   "check as it ran, at a growing context and with whatever else ran on the cores, and divide by plain "
                   "decoding's step timed the same way. What the rounds paid is their figure.")


OUTLIER = 10.0   # a layout reading this many times its row's median is a busy moment at load, not a layout's speed


def layout_gap(layouts: list[dict]) -> str:
    """How far apart the weight layouts timed at load are (`specviz.generator.cpu_linear.report`): the
    largest ratio of a shape and row count's slowest layout to its fastest, and where it fell. A reading
    OUTLIER times its row's median or more is left out of the ratio and named as an outlier, so one busy
    moment is never the headline.

    >>> print(layout_gap([{"layer": "384 → 6144", "rows": 1, "as stored, µs": 30, "Wᵀ copy, µs": 90},
    ...                   {"layer": "384 → 6144", "rows": 5, "as stored, µs": 40, "Wᵀ copy, µs": 50}]))
    On this machine the layouts of one shape and row count differ by up to **3.0×** (the 384 → 6144 layer at 1 row).
    >>> print(layout_gap([{"layer": "384 → 1024", "rows": 5, "as stored, µs": 4114, "Wᵀ copy, µs": 39,
    ...                    "W·xᵀ, µs": 28, "packed, µs": 30}]))  # doctest: +NORMALIZE_WHITESPACE
    On this machine the layouts of one shape and row count differ by up to **1.4×** (the 384 → 1024 layer at 5
    rows). Left out as an outlier: 4,114 µs (as stored, the 384 → 1024 layer at 5 rows), over 10× the other
    layouts of its row, a moment when something else ran while the layouts were timed.
    """
    def times(row):
        return {key[:-4]: t for key, t in row.items() if key.endswith(", µs") and t > 0}

    def kept(row):
        t = times(row)
        middle = statistics.median(t.values()) if t else 0
        return {k: v for k, v in t.items() if v < OUTLIER * middle}

    def gap(row):
        t = kept(row)
        return max(t.values()) / min(t.values()) if t else 1.0

    def where(row):
        return f"the {row['layer']} layer at {row['rows']} row{'' if row['rows'] == 1 else 's'}"
    worst = max(layouts, key=gap)
    said = f"On this machine the layouts of one shape and row count differ by up to **{gap(worst):.1f}×** ({where(worst)})."
    dropped = [f"{t:,} µs ({name}, {where(row)})" for row in layouts for name, t in times(row).items()
               if name not in kept(row)]
    if dropped:
        said += (f" Left out as {'an outlier' if len(dropped) == 1 else 'outliers'}: {'; '.join(dropped)}, over "
                 f"{OUTLIER:g}× the other layouts of its row, a moment when something else ran while the layouts were timed.")
    return said


def break_even_curve(round_ms: float, baseline_ms: float, max_tokens: int) -> list[dict]:
    """ms/token and speedup for a round committing 1..max_tokens tokens.

    >>> [row["ms_per_token"] for row in break_even_curve(14.0, 10.0, 2)]
    [14.0, 7.0]
    """
    return [{"tokens": n, "ms_per_token": round_ms / n, "speedup": baseline_ms / (round_ms / n)}
            for n in range(1, max_tokens + 1)]


def trace_costs(trace) -> dict:
    """Totals of a recorded trace (prefill excluded: the timed boundary is the decode loop).

    Returns decode_ms, tokens, rounds, ms_per_token, acceptance_length (committed tokens per
    target verification), stages_per_round (drafting stages a round: above 1 only where DLoop's
    gate drafted again), the summed draft/verify/overhead times, the mean round time, the mean
    verify forward, drafting's share of the decode time, and verify_ms_per_token: verification alone over committed tokens, what a token would cost if
    drafting and bookkeeping were free (no cheaper drafter of the same acceptance beats it).
    """
    rounds = trace.rounds
    tokens = sum(len(r.emitted) for r in rounds)
    decode = sum(r.total_ms for r in rounds)
    return {"rounds": len(rounds), "tokens": tokens, "decode_ms": decode,
            "ms_per_token": ms_per_token(decode, tokens),
            "acceptance_length": tokens / len(rounds),
            "stages_per_round": sum(len(r.drafter_info.get("stages", [])) or 1 for r in rounds) / len(rounds),
            "draft_ms": sum(r.draft_ms for r in rounds), "verify_ms": sum(r.verify_ms for r in rounds),
            "overhead_ms": sum(r.overhead_ms for r in rounds), "mean_round_ms": decode / len(rounds),
            "mean_verify_ms": sum(r.verify_ms for r in rounds) / len(rounds),
            "draft_share": sum(r.draft_ms for r in rounds) / decode if decode else 0.0,
            "verify_ms_per_token": ms_per_token(sum(r.verify_ms for r in rounds), tokens),
            "prefill_ms": trace.prefill_ms}


@torch.no_grad()
def cost_by_width_after(models, prompt: str, widths: list[int]) -> list[dict]:
    """`verification_cost_by_width` on the context of `prompt`, as a lesson's prompt box gives it."""
    ids, _ = encode_prompt(models, prompt, Settings(max_new_tokens=1))
    return verification_cost_by_width(models, widths, ids)


def verification_cost_by_width(models, widths: list[int], context_ids: list[int], repeats: int = 5,
                               progress=None) -> list[dict]:
    """Time of one target forward over w new tokens after `context_ids`, per width (ascending):
    {"width", "ms": the fastest of `repeats` calls, "fitted_ms", "relative": fitted_ms over the
    narrowest width's}.

    The fastest, not the median: a forward on a fixed context only gets slower when something
    else runs on the cores (a browser drawing the page, another session), and that can cover half
    the calls. Widths are interleaved within each repeat so a busy moment falls on all of them
    alike; the cache is cropped back after every call so each sees the same context; repeat 0
    warms up and is not counted. What remains of the noise still zig-zags, and a wider check
    cannot really cost less than a narrower one, so "fitted_ms" is the closest line that never
    falls (specviz.lessons.protocol.cost_line): what lessons price with, raw points beside it.
    `progress(done, total)` is told before each pass over the widths, the warm-up first.
    """
    if not context_ids or not widths:
        raise ValueError("need a context and at least one width")
    dev, target = models.device, models.target
    cache = DynamicCache()
    target(torch.tensor([context_ids], device=dev), cache=cache, use_cache=True)
    filler = (context_ids * (max(widths) // len(context_ids) + 1))[:max(widths)]
    times = {w: [] for w in widths}
    for rep in range(repeats + 1):
        if progress:
            progress(rep, repeats + 1)
        for w in widths:
            x = torch.tensor([filler[:w]], device=dev)
            watch = Stopwatch(dev)
            watch.mark()
            target(x, cache=cache, use_cache=True)
            watch.mark()
            if rep:
                times[w].append(watch.laps()[0])
            cache.crop(-w)
    widths = sorted(widths)
    fitted = cost_line(widths, [min(times[w]) for w in widths])
    return [{"width": w, "ms": min(times[w]), "fitted_ms": f, "relative": f / fitted[0]}
            for w, f in zip(widths, fitted)]


def repeated_runs(models, prompt: str, settings: dict, repeats: int = 3, progress=None) -> dict:
    """Decode `prompt` under each of `settings` ({name: Settings}) `repeats` times, the settings
    alternated after an uncounted warm-up of each (specviz.lessons.protocol):
    {name: {"trace", "costs", "runs_ms", "runs_ms_per_token", "runs_costs", "ms_per_token": Spread}}.

    "trace" and "costs" are the run of median decode time, the one a page takes apart; a
    setting's repeats use its seed, so they commit the same tokens and differ only in time.
    """
    def decode(s):
        trace = Generation(models, prompt, s).run()
        return {"trace": trace, "costs": trace_costs(trace)}

    runs = alternate({name: (lambda s=s: decode(s)) for name, s in settings.items()}, repeats, progress)
    out = {}
    for name, rs in runs.items():
        by_time = sorted(range(len(rs)), key=lambda i: rs[i]["costs"]["decode_ms"])
        out[name] = taken_apart(rs, by_time[(len(rs) - 1) // 2])
    return out


def taken_apart(runs: list[dict], i: int) -> dict:
    """One setting's runs ({"trace", "costs"} each) with run `i` as the one a page takes apart.

    >>> out = taken_apart([{"trace": "a", "costs": {"decode_ms": 20.0, "ms_per_token": 2.0}},
    ...                    {"trace": "b", "costs": {"decode_ms": 30.0, "ms_per_token": 3.0}}], 1)
    >>> out["trace"], out["runs_ms_per_token"], out["ms_per_token"].label(" ms")
    ('b', [2.0, 3.0], '2.50 ms (2.00–3.00 ms over 2 runs)')
    """
    per_token = [run["costs"]["ms_per_token"] for run in runs]
    return {**runs[i], "runs_ms": [run["costs"]["decode_ms"] for run in runs], "runs_ms_per_token": per_token,
            "runs_costs": [run["costs"] for run in runs], "runs": runs, "ms_per_token": spread(per_token)}


def measure(models, prompt: str, settings, repeats: int = 3, progress=None) -> dict:
    """Plain decoding and speculative decoding of the same prompt, same target, same verifier,
    through `repeated_runs`, then `pair_up`."""
    return pair_up(repeated_runs(models, prompt, {"plain": settings.plain(), "speculative": settings}, repeats, progress))


def pair_up(sides: dict) -> dict:
    """Two sides' runs (`repeated_runs`' "plain" and "speculative") read as run pairs, plain's i-th against
    speculative's i-th: "speedup_spread" is their ratios' range around the median pair's ratio
    (specviz.lessons.protocol.paired_spread), "speedup" that ratio, and each side's "trace" and "costs"
    are the median pair's runs, so the speedup a page prints is the division of the two ms per token it
    prints beside it, and every table and chart of the rounds reads those same rounds.
    """
    plain, spec = sides["plain"], sides["speculative"]
    speed, i = paired_spread(plain["runs_ms_per_token"], spec["runs_ms_per_token"])
    return {**sides, "plain": taken_apart(plain["runs"], i), "speculative": taken_apart(spec["runs"], i),
            "speedup_spread": speed, "speedup": speed.median, "pair": i}


def regimes(measurement: dict, there: Profile, here_name: str = "this machine") -> Comparison:
    """The speculative rounds of a `measure` result priced in two regimes (specviz.lessons.pricing): under
    this machine's profile, read off each run pair, and under `there` (a hypothetical large target on a GPU)."""
    plain, spec = measurement["plain"], measurement["speculative"]
    rounds = shapes(spec["trace"].rounds)
    here = measured_profiles(plain["runs_costs"], spec["runs_costs"], rounds, here_name)
    return compare(rounds, here, there, measurement["pair"])   # the run pair `pair_up` shows
