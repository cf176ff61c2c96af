"""The one way every live figure measures: alternate the sides, repeat, summarise with the spread,
and say when a difference is inside the noise.

A live number on a shared machine (a teacher's laptop serving the page and drawing it, a server
with other sessions) is one draw from a noisy process. So every comparison the lessons and the
bench show is measured the same way:

  alternate   the sides run A, B, A, B, ... so a busy moment falls on all of them alike;
  repeat      several runs per side, so the spread can be seen;
  summarise   the median (one slow run does not move it) and the range of the runs;
  compare     a ratio is taken run by run (A's i-th run against B's i-th run), and a
              difference whose ranges overlap is labelled "within this machine's noise".

Costs that only grow with interference (one forward over w tokens, repeated on a fixed context)
keep the fastest run instead: nothing on the machine makes a forward faster than it is.

What it leaves out: confidence intervals with a distributional model; a handful of runs shows
the spread honestly, and the lessons never claim more than it.
"""
import statistics
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Spread:
    """The median of some runs and their range.

    >>> s = spread([1.41, 1.60, 1.52, 1.55, 1.47])
    >>> s.median, s.low, s.high, s.n
    (1.52, 1.41, 1.6, 5)
    >>> s.label(unit="×")
    '1.52× (1.41–1.60× over 5 runs)'
    >>> spread([9.87]).label(" ms", digits=1)
    '9.9 ms (one run)'
    """
    median: float
    low: float
    high: float
    n: int

    def label(self, unit: str = "", digits: int = 2) -> str:
        f = f"{{:.{digits}f}}"
        if self.n == 1:
            return f"{f.format(self.median)}{unit} (one run)"
        return f"{f.format(self.median)}{unit} ({f.format(self.low)}–{f.format(self.high)}{unit} over {self.n} runs)"

    def as_dict(self) -> dict:
        return {"median": self.median, "low": self.low, "high": self.high, "runs": self.n}


def spread(values) -> Spread:
    """Median and range of a non-empty list of numbers."""
    values = [float(v) for v in values]
    if not values:
        raise ValueError("no runs to summarise")
    return Spread(statistics.median(values), min(values), max(values), len(values))


def ratio_spread(numerators, denominators) -> Spread:
    """Run-by-run ratios (a speedup: plain ms/token over speculative ms/token, repeat by repeat).

    >>> ratio_spread([10.0, 12.0, 11.0], [5.0, 8.0, 5.5]).label(unit="×")
    '2.00× (1.50–2.00× over 3 runs)'
    """
    if len(numerators) != len(denominators):
        raise ValueError("a ratio needs as many runs on each side")
    return spread([a / b for a, b in zip(numerators, denominators)])


def median_pair(ratios: list[float]) -> int:
    """Index of the run pair whose ratio is the median (the lower middle one of an even count): the one
    pair a page shows whole, so the ratio it prints is the division of the two times printed beside it.

    >>> median_pair([0.8, 0.7, 0.9]), median_pair([1.2, 1.0, 1.4, 1.1])
    (0, 3)
    """
    if not ratios:
        raise ValueError("no runs to summarise")
    order = sorted(range(len(ratios)), key=lambda i: ratios[i])
    return order[(len(ratios) - 1) // 2]


def paired_spread(numerators, denominators) -> tuple[Spread, int]:
    """Run-by-run ratios (a speedup: plain ms/token over speculative ms/token, repeat by repeat) as a
    Spread whose middle is the ratio of the median pair (`median_pair`), and that pair's index.

    >>> s, i = paired_spread([10.0, 12.0, 11.0, 9.0], [5.0, 8.0, 5.5, 5.0])
    >>> s.label(unit="×"), i, 9.0 / 5.0
    ('1.80× (1.50–2.00× over 4 runs)', 3, 1.8)
    """
    if len(numerators) != len(denominators):
        raise ValueError("a ratio needs as many runs on each side")
    ratios = [a / b for a, b in zip(numerators, denominators)]
    i = median_pair(ratios)
    return Spread(ratios[i], min(ratios), max(ratios), len(ratios)), i


def within_noise(a: Spread, b: Spread) -> bool:
    """Whether two measurements' ranges overlap: then their order is not a finding.

    >>> within_noise(spread([1.0, 1.2]), spread([1.1, 1.3])), within_noise(spread([1.0, 1.1]), spread([1.2, 1.3]))
    (True, False)
    """
    return a.low <= b.high and b.low <= a.high


def beats(a: Spread, b: Spread) -> str:
    """How a page says that `a` compares with `b`: "above", "below" or "within this machine's noise".

    >>> beats(spread([2.0, 2.1]), spread([1.0, 1.1])), beats(spread([1.0, 1.2]), spread([1.1, 1.3]))
    ('above', "within this machine's noise")
    """
    if within_noise(a, b):
        return "within this machine's noise"
    return "above" if a.median > b.median else "below"


def versus_plain(speed: Spread) -> str:
    """Where a speedup's runs fell against 1×, plain decoding's pace: "faster" when every run was above
    it, "slower" when every run was below, else "within this machine's noise" (a run at 1× included).

    >>> versus_plain(spread([1.2, 1.4])), versus_plain(spread([0.7, 0.9])), versus_plain(spread([0.9, 1.3]))
    ('faster', 'slower', "within this machine's noise")
    """
    said = beats(speed, Spread(1.0, 1.0, 1.0, 1))
    return {"above": "faster", "below": "slower"}.get(said, said)


def alternate(sides: dict[str, Callable[[], object]], repeats: int, progress=None) -> dict[str, list]:
    """Run every side once per repeat, in turn, after one uncounted warm-up run of each:
    {name: [result of each counted run]}. `progress(done, total, name)` is told before each run.

    >>> calls = []
    >>> out = alternate({"a": lambda: calls.append("a") or 1, "b": lambda: calls.append("b") or 2}, repeats=2)
    >>> "".join(calls), out
    ('ababab', {'a': [1, 1], 'b': [2, 2]})
    """
    if repeats < 1:
        raise ValueError("need at least one counted run")
    total, done = (repeats + 1) * len(sides), 0
    out = {name: [] for name in sides}
    for rep in range(repeats + 1):      # repeat 0 warms up: first calls pay one-off costs
        for name, run in sides.items():
            if progress:
                progress(done, total, name)
            result = run()
            done += 1
            if rep:
                out[name].append(result)
    return out


def cost_line(widths: list[float], ms: list[float]) -> list[float]:
    """The straight line a + b·w (a, b >= 0) closest in least squares to measured costs: the cost
    of a forward as its width grows, with the zig-zags of noise gone.

    A line, not any non-decreasing curve: with a staircase (a jump, then a flat stretch) more
    requests sharing the target can make a request's next token cheaper to admit, and a scheduler
    pricing with the fit would hand it more tokens under more load. With a line (and a >= 0) it
    never does; test_admission checks that on random drafts.

    >>> cost_line([1, 2, 3, 4], [10.0, 12.5, 11.5, 14.0])
    [10.35, 11.45, 12.55, 13.65]
    >>> cost_line([1, 2, 3], [10.0, 9.0, 8.0])        # falling costs are noise: flat at their mean
    [9.0, 9.0, 9.0]
    """
    n = len(widths)
    mx, my = sum(widths) / n, sum(ms) / n
    sxx = sum((x - mx) ** 2 for x in widths)
    b = max(0.0, sum((x - mx) * (y - my) for x, y in zip(widths, ms)) / sxx) if sxx else 0.0
    a = my - b * mx
    if a < 0:                        # a line through the origin, fitted again
        a, b = 0.0, sum(x * y for x, y in zip(widths, ms)) / sum(x * x for x in widths)
    return [round(a + b * x, 10) for x in widths]


def outlier_cap(values: list[float], factor: float = 3.0) -> float | None:
    """Where a bar chart's axis should stop so that one outlier does not squash the rest: `factor`
    times the median, when some value lies above it; None when none does.

    >>> outlier_cap([10, 11, 9, 200]), outlier_cap([10, 11, 9, 12])
    (31.5, None)
    """
    if not values:
        return None
    cap = factor * statistics.median(values)
    return cap if max(values) > cap else None
