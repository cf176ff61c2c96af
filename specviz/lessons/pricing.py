"""Price recorded rounds under a cost profile: the same accepted tokens on this machine and on a
hypothetical large target on a GPU.

A round's price is the sum of its parts, each read from the profile:

    round ms = check(width) + stages × stage_ms + bookkeeping_ms
    check(w) = step_ms + position_ms × (w − 1)

width is the round's proposals + 1 (the newest committed token rides along in the check), stages
its drafting stages (1 for a one-pass drafter, more where DLoop's gate drafted again). step_ms is
what plain decoding pays a token, position_ms what each further position adds to a check,
stage_ms one drafting stage, bookkeeping_ms what a speculative round's acceptance and commit cost
beyond a plain step's. Over the rounds:

    ms per token  = Σ round ms ÷ Σ committed tokens
    speedup       = step_ms ÷ ms per token
    round, steps  = mean round ms ÷ step_ms      (a round's cost in one-token steps)

The last is also the break-even (the tokens a round must commit to tie plain decoding), and
speedup = tokens per round ÷ round steps. Priced on the same rounds, two regimes share the tokens
per round, so a round's cost in one-token steps is the one quantity that differs between them.

Profiles: `measured_profiles` reads one per run from a live measurement (specviz.lessons.cost.measure),
on whatever device it ran, and priced under its own profile a run costs exactly what it was measured
to cost; `LARGE_GPU` is hypothetical: the worked example of one source completed with this app's
assumptions, each number labelled with where it comes from (`LARGE_GPU_ORIGIN` says which is which).
It is a model, never a measurement: a figure priced under it says "priced, <profile>".

What it leaves out: load (on a busy server a wide check competes with other requests' tokens), a
check whose cost is not a straight line in its width, drafting overlapped with checking.
"""
from dataclasses import dataclass, field, replace

from specviz.lessons import glossary
from specviz.lessons.protocol import Spread, median_pair, spread

CHECKS_AHEAD, DRAFT_VERIFY = f"“{glossary.CHECKS_AHEAD}”", f"“{glossary.DRAFT_VERIFY}”"   # as a source is cited
FIELDS = {"step_ms": "one-token step, ms", "position_ms": "each further position checked, ms",
          "stage_ms": "one drafting stage, ms", "bookkeeping_ms": "a round's bookkeeping beyond a step's, ms"}


@dataclass(frozen=True)
class Profile:
    """What the parts of a round cost somewhere, in ms; `sources` says where each number comes from.

    >>> LARGE_GPU.check_ms(5), LARGE_GPU.round_ms(width=5, stages=1)     # the seed's 14 ms round
    (12.0, 14.0)
    >>> LARGE_GPU.label
    'priced, a hypothetical large target on a GPU'
    """
    name: str
    step_ms: float
    position_ms: float
    stage_ms: float
    bookkeeping_ms: float = 0.0
    sources: dict = field(default_factory=dict, compare=False)

    def __post_init__(self):
        if self.step_ms <= 0:
            raise ValueError("a one-token step must cost some time")

    def check_ms(self, width: int) -> float:
        return self.step_ms + self.position_ms * (width - 1)

    def round_ms(self, width: int, stages: int) -> float:
        return self.check_ms(width) + stages * self.stage_ms + self.bookkeeping_ms

    @property
    def label(self) -> str:
        return f"priced, {self.name}"


LARGE_GPU = Profile(
    "a hypothetical large target on a GPU", step_ms=10.0, position_ms=0.5, stage_ms=2.0, bookkeeping_ms=0.0,
    sources={
        "step_ms": f"{CHECKS_AHEAD}, its worked example: “For hypothetical arithmetic, suppose ordinary target "
                   "decoding costs 10 milliseconds per token”",
        "position_ms": f"{CHECKS_AHEAD}: some conditions “can make checking several positions only modestly slower "
                       f"than a one-token step”; {DRAFT_VERIFY}: a single token “barely uses the GPU”. Neither gives "
                       "a cost per position. This app's assumption: 0.5 ms, so a check of 5 positions (k = 4) costs "
                       "12 ms, 1.2 steps",
        "stage_ms": f"{DRAFT_VERIFY}: parallel drafters produce “the whole block in a single pass”, so drafting is "
                    "fast. Neither source gives its cost. This app's assumption: 2 ms, a fifth of a step, so that a "
                    f"round of k = 4 (also assumed) costs the 14 ms of the worked example ({CHECKS_AHEAD}: “A "
                    "speculative round taking 14 milliseconds”), which states no k",
        "bookkeeping_ms": f"{CHECKS_AHEAD}: “round time includes drafting, verification, and overhead”. This app's "
                          "assumption: the example's 14 ms holds it all, so nothing is added"})
LARGE_GPU_ORIGIN = (
    f"This profile is hypothetical, and this app's reading. From the worked example of {CHECKS_AHEAD}: a 10 ms "
    "one-token step, and a 14 ms round that commits four tokens; the example names no model, hardware or k. This "
    "app's assumptions: 0.5 ms for each further position checked, 2 ms a drafting stage and k = 4 proposals a "
    "round, so that the example's round costs 10 + 4 × 0.5 + 2 = 14 ms, with nothing added for bookkeeping.")


def shapes(rounds) -> list[tuple[int, int, int]]:
    """(width, stages, committed tokens) of each recorded round: all a price needs from it.

    >>> from types import SimpleNamespace as R
    >>> shapes([R(proposed=[5, 6, 7, 8], emitted=[1, 2, 3], drafter_info={}),
    ...         R(proposed=[5] * 8, emitted=[1] * 9, drafter_info={"stages": [{}, {}]}),
    ...         R(proposed=[], emitted=[1], drafter_info={})])
    [(5, 1, 3), (9, 2, 9), (1, 0, 1)]
    """
    return [(len(r.proposed) + 1, len(r.drafter_info.get("stages", [])) or (1 if r.proposed else 0), len(r.emitted))
            for r in rounds]


@dataclass(frozen=True)
class Priced:
    """Rounds priced under one profile: totals in ms, and the figures read off them.

    >>> p = price([(5, 1, 4)], LARGE_GPU)
    >>> p.ms_per_token, round(p.speedup, 4), p.round_steps, p.break_even
    (3.5, 2.8571, 1.4, 1.4)
    """
    label: str
    step_ms: float
    rounds: int
    tokens: int
    check_ms: float
    draft_ms: float
    bookkeeping_ms: float

    @property
    def total_ms(self) -> float:
        return self.check_ms + self.draft_ms + self.bookkeeping_ms

    @property
    def ms_per_token(self) -> float:
        return self.total_ms / self.tokens

    @property
    def speedup(self) -> float:
        return self.step_ms / self.ms_per_token

    @property
    def tokens_per_round(self) -> float:
        return self.tokens / self.rounds

    @property
    def round_steps(self) -> float:
        """A round's mean cost in one-token steps."""
        return self.total_ms / self.rounds / self.step_ms

    @property
    def break_even(self) -> float:
        """Tokens a round must commit to tie plain decoding: the round's cost in steps, read as tokens."""
        return self.round_steps

    def steps(self, part: str) -> float:
        """One part of a round ("check_ms", "draft_ms", "bookkeeping_ms") in one-token steps, per round."""
        return getattr(self, part) / self.rounds / self.step_ms


def price(round_shapes: list[tuple[int, int, int]], profile: Profile) -> Priced:
    """The rounds (`shapes`) priced under `profile`.

    >>> p = price([(5, 1, 4), (5, 1, 1)], LARGE_GPU)        # 28 ms over 5 tokens
    >>> p.total_ms, p.ms_per_token, p.round_steps
    (28.0, 5.6, 1.4)
    """
    if not round_shapes or sum(t for _, _, t in round_shapes) < 1:
        raise ValueError("no committed tokens to price")
    p = profile
    return Priced(p.label, p.step_ms, len(round_shapes), sum(t for _, _, t in round_shapes),
                  check_ms=sum(p.check_ms(w) for w, _, _ in round_shapes),
                  draft_ms=sum(s * p.stage_ms for _, s, _ in round_shapes),
                  bookkeeping_ms=p.bookkeeping_ms * len(round_shapes))


def measured_profiles(plain_runs: list[dict], spec_runs: list[dict], round_shapes: list[tuple[int, int, int]],
                      name: str) -> list[Profile]:
    """One profile per run of a live measurement, read off plain decoding's i-th run (`plain_runs`:
    specviz.lessons.cost.trace_costs of each) and the speculative i-th run (`spec_runs`, whose rounds
    have `round_shapes`: greedy repeats commit the same tokens, so every run has the same shapes):

        step_ms         plain decoding's mean round (one token each)
        position_ms     (speculative verify ms − its rounds × plain's forward) ÷ Σ (width − 1)
        stage_ms        speculative draft ms ÷ Σ stages
        bookkeeping_ms  speculative overhead a round − (plain's round − plain's forward)

    so that pricing a run's rounds under its own profile gives back its measured decode time.
    Differences of measured times, so a part can come out a little below zero in a noisy run.

    >>> plain = [{"rounds": 4, "mean_round_ms": 10.0, "verify_ms": 36.0}]
    >>> spec = [{"rounds": 2, "verify_ms": 22.0, "draft_ms": 4.0, "overhead_ms": 4.0, "decode_ms": 30.0}]
    >>> p = measured_profiles(plain, spec, [(5, 1, 4), (5, 1, 2)], "here")[0]
    >>> p.step_ms, p.position_ms, p.stage_ms, p.bookkeeping_ms, price([(5, 1, 4), (5, 1, 2)], p).total_ms
    (10.0, 0.5, 2.0, 1.0, 30.0)
    """
    if len(plain_runs) != len(spec_runs):
        raise ValueError("a profile needs as many runs on each side")
    positions = sum(w - 1 for w, _, _ in round_shapes)
    stages = sum(s for _, s, _ in round_shapes)
    out = []
    for pc, sc in zip(plain_runs, spec_runs):
        forward = pc["verify_ms"] / pc["rounds"]
        step = pc["mean_round_ms"]
        out.append(Profile(
            f"{name} (measured)", step_ms=step,
            position_ms=(sc["verify_ms"] - sc["rounds"] * forward) / positions if positions else 0.0,
            stage_ms=sc["draft_ms"] / stages if stages else 0.0,
            bookkeeping_ms=sc["overhead_ms"] / sc["rounds"] - (step - forward),
            sources={f: "measured now: plain and speculative runs alternated (lesson 7's measurement)"
                     for f in FIELDS}))
    return out


def profile_with(profile: Profile, **values: float) -> Profile:
    """`profile` with some numbers changed (a page's edits); a changed number is no longer the source's.

    >>> p = profile_with(LARGE_GPU, stage_ms=4.0)
    >>> p.round_ms(5, 1), p.sources["stage_ms"]
    (16.0, 'edited on this page')
    """
    changed = {k: v for k, v in values.items() if v != getattr(profile, k)}
    return replace(profile, **changed, sources={**profile.sources, **{k: "edited on this page" for k in changed}})


@dataclass(frozen=True)
class Comparison:
    """The same rounds priced under this machine's profiles (one a run) and another profile; `middle` is
    the run a page shows whole (`here_median`)."""
    here: list[Priced]
    there: Priced
    middle: int

    @property
    def here_steps(self) -> Spread:
        return spread([p.round_steps for p in self.here])

    @property
    def here_speedup(self) -> Spread:
        return spread([p.speedup for p in self.here])

    @property
    def here_median(self) -> Priced:
        """The run of median speedup: priced under its own profile it gives back its measured time, so it is
        the run pair a measurement's headline shows."""
        return self.here[self.middle]


def compare(round_shapes, here: list[Profile], there: Profile, middle: int | None = None) -> Comparison:
    """Price the same rounds under every run's profile of this machine and under `there`; `middle` is the
    run of median speedup (specviz.lessons.protocol.median_pair), found here when not given. A measurement
    gives it from its own timings, since two runs of equal speedup can price a hair apart."""
    if not here:
        raise ValueError("no measured profile to compare")
    priced = [price(round_shapes, p) for p in here]
    return Comparison(priced, price(round_shapes, there),
                      median_pair([p.speedup for p in priced]) if middle is None else middle)


PARTS = {"check_ms": "the check", "draft_ms": "drafting", "bookkeeping_ms": "bookkeeping"}


def comparison_rows(c: Comparison) -> list[dict]:
    """A narrow table of the comparison: one row per quantity, a column per regime headed by its
    profile's label ("priced, ..."), the measured side by its median run.

    >>> here = Profile("here", 10.0, position_ms=1.5, stage_ms=4.0, bookkeeping_ms=1.0)
    >>> rows = comparison_rows(compare([(5, 1, 3)], [here], LARGE_GPU))
    >>> list(rows[0])
    ['quantity', 'priced, here', 'priced, a hypothetical large target on a GPU']
    >>> [tuple(r.values()) for r in rows]   # doctest: +NORMALIZE_WHITESPACE
    [('tokens a round', '3.00', '3.00'), ('round, in steps', '2.10', '1.40'), ('· the check', '1.60', '1.20'),
     ('· drafting', '0.40', '0.20'), ('· bookkeeping', '0.10', '0.00'), ('ms per token', '7.00', '4.67'),
     ('speedup', '1.43×', '2.14×')]
    """
    h, g = c.here_median, c.there
    rows = [("tokens a round", f"{h.tokens_per_round:.2f}", f"{g.tokens_per_round:.2f}"),
            ("round, in steps", f"{h.round_steps:.2f}", f"{g.round_steps:.2f}")]
    rows += [(f"· {name}", f"{h.steps(part):.2f}", f"{g.steps(part):.2f}") for part, name in PARTS.items()]
    rows += [("ms per token", f"{h.ms_per_token:.2f}", f"{g.ms_per_token:.2f}"),
             ("speedup", f"{h.speedup:.2f}×", f"{g.speedup:.2f}×")]
    return [{"quantity": q, h.label: a, g.label: b} for q, a, b in rows]


def why_question(c: Comparison, here_name: str = "this machine", there_name: str = "the large-target profile") -> str:
    """The question `why_smaller` answers, asked the way the comparison came out: a smaller speedup here,
    a larger one, or one inside this machine's spread of round costs.

    >>> here = Profile("here", 10.0, position_ms=1.5, stage_ms=4.0, bookkeeping_ms=1.0)
    >>> why_question(compare([(5, 1, 3)], [here], LARGE_GPU))
    "Why is this machine's speedup smaller than the large-target profile's?"
    >>> why_question(compare([(5, 1, 3)], [Profile("here", 10.0, position_ms=0.25, stage_ms=1.5)], LARGE_GPU))
    "Why is this machine's speedup larger than the large-target profile's?"
    """
    steps, there = c.here_steps, c.there.round_steps
    if steps.low <= there <= steps.high:
        return f"Is {here_name}'s speedup different from {there_name}'s?"
    return f"Why is {here_name}'s speedup {'smaller' if there < steps.low else 'larger'} than {there_name}'s?"


def why_smaller(c: Comparison, here_name: str = "this machine", there_name: str = "the large-target profile") -> str:
    """Why this machine's speedup differs from the other profile's on the same rounds, computed from the
    comparison: the tokens a round commit are the same, so the answer is what a round costs in
    one-token steps, and which part of it differs most. Inside this machine's spread of round costs, the
    two are not told apart.

    >>> here = Profile("here", 10.0, position_ms=1.5, stage_ms=4.0, bookkeeping_ms=1.0)
    >>> print(why_smaller(compare([(5, 1, 3)], [here], LARGE_GPU)))  # doctest: +NORMALIZE_WHITESPACE
    Both prices use the same 1 round, 3.00 committed tokens a round. On this machine a round costs 2.10
    one-token steps, so 3.00 ÷ 2.10 = 1.43×; on the large-target profile it costs 1.40 steps, so
    3.00 ÷ 1.40 = 2.14×. The speedup here is smaller because a round costs more steps here, most of all
    the check (1.60 steps against 1.20).
    """
    h, g = c.here_median, c.there
    steps = c.here_steps
    said = (f"Both prices use the same {h.rounds} round{'s' if h.rounds != 1 else ''}, "
            f"{h.tokens_per_round:.2f} committed tokens a round. On {here_name} a round costs {h.round_steps:.2f} one-token steps"
            + (f" ({steps.low:.2f}–{steps.high:.2f} over {steps.n} runs)" if steps.n > 1 else "")
            + f", so {h.tokens_per_round:.2f} ÷ {h.round_steps:.2f} = {h.speedup:.2f}×; on {there_name} it costs "
            f"{g.round_steps:.2f} steps, so {g.tokens_per_round:.2f} ÷ {g.round_steps:.2f} = {g.speedup:.2f}×.")
    if steps.low <= g.round_steps <= steps.high:
        return said + (f" The two round costs are within this machine's noise, so {here_name} is not told apart "
                       f"from {there_name} here.")
    smaller = g.round_steps < steps.low
    part = max(PARTS, key=lambda k: (h.steps(k) - g.steps(k)) * (1 if smaller else -1))
    return said + (f" The speedup here is {'smaller' if smaller else 'larger'} because a round costs "
                   f"{'more' if smaller else 'fewer'} steps here, most of all {PARTS[part]} "
                   f"({h.steps(part):.2f} steps against {g.steps(part):.2f}).")
