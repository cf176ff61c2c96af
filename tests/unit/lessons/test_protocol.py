"""The words every live sentence uses (specviz.lessons.protocol): a measurement's median and range, and
"above", "below", "faster", "slower" or "within this machine's noise"."""
import statistics

import pytest
from hypothesis import given, strategies as st

from specviz.lessons.protocol import Spread, beats, ratio_spread, spread, versus_plain, within_noise

NOISE = "within this machine's noise"
runs = st.lists(st.floats(0.01, 100.0), min_size=1, max_size=9)


def test_a_spread_is_the_median_and_the_range_of_its_runs():
    """Catches a summary by the mean (1.80 here: one slow run moves it) or by the first run."""
    s = spread([1.6, 1.5, 3.3, 1.4, 1.2])
    assert (s.median, s.low, s.high, s.n) == (1.5, 1.2, 3.3, 5)
    assert spread([2.0, 1.0]).median == 1.5                     # an even count: the middle two's mean
    with pytest.raises(ValueError, match="no runs"):
        spread([])


def test_a_ratio_is_taken_run_by_run():
    """Catches a ratio of medians (12/6 = 2.00 here), which pairs runs that did not run side by side."""
    assert ratio_spread([10.0, 12.0, 20.0], [10.0, 6.0, 5.0]) == Spread(2.0, 1.0, 4.0, 3)
    with pytest.raises(ValueError, match="as many runs"):
        ratio_spread([1.0], [1.0, 2.0])


@pytest.mark.parametrize("a, b, said", [
    (spread([2.0, 2.1]), spread([1.0, 1.1]), "above"),
    (spread([1.0, 1.1]), spread([2.0, 2.1]), "below"),
    (spread([1.0, 1.2]), spread([1.1, 1.3]), NOISE),            # overlapping ranges
    (spread([1.0, 1.2]), spread([1.2, 1.3]), NOISE),            # touching at 1.2: not a finding
    (spread([0.5, 1.9, 2.0]), spread([1.95]), NOISE),           # medians apart, but 1.95 lies inside 0.5–2.0
])
def test_an_order_is_said_only_where_the_ranges_are_apart(a, b, said):
    """Catches a comparison of medians alone (the last two cases) and a strict overlap test (the touching one)."""
    assert beats(a, b) == said
    assert within_noise(a, b) == (said == NOISE) == within_noise(b, a)


@pytest.mark.parametrize("runs_, said", [
    ([1.2, 1.4, 1.3], "faster"),
    ([0.7, 0.9, 0.8], "slower"),
    ([0.9, 1.3, 1.1], NOISE),
    ([1.0, 1.3, 1.1], NOISE),                                   # a run level with plain decoding is no win
    ([0.7, 1.0], NOISE),                                        # nor a loss
])
def test_a_speedup_is_called_faster_or_slower_only_when_every_run_was(runs_, said):
    assert versus_plain(spread(runs_)) == said


@given(runs)
def test_a_spread_holds_its_runs(values):
    s = spread(values)
    assert s.low == min(values) and s.high == max(values) and s.n == len(values)
    assert s.low <= s.median <= s.high and s.median == statistics.median(values)


@given(runs, runs)
def test_the_order_said_is_the_order_of_every_run(a, b):
    said = beats(spread(a), spread(b))
    assert said == ("above" if min(a) > max(b) else "below" if max(a) < min(b) else NOISE)
    opposite = {"above": "below", "below": "above", NOISE: NOISE}
    assert beats(spread(b), spread(a)) == opposite[said]


@given(runs)
def test_faster_or_slower_is_said_only_of_a_side_every_run_took(values):
    said = versus_plain(spread(values))
    assert said == ("faster" if min(values) > 1 else "slower" if max(values) < 1 else NOISE)
