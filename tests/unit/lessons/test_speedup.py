"""Lesson 8's checklist column "this app, measured now": what it says about a measurement it is given."""
import re

import pytest
from hypothesis import given, strategies as st

from specviz.generator.engine import Generation
from specviz.generator.settings import Settings
from specviz.lessons import speedup, cost
from specviz.lessons.pricing import LARGE_GPU, Profile, compare

PROMPT = "The best way to learn is to"


@pytest.fixture(scope="module")
def measured(models) -> dict:
    """A real, short measurement (one counted run a side) as lesson 8 stores it: greedy, so lossless."""
    settings = Settings.greedy("ar", 6, k=3)
    return {"prompt": PROMPT, "settings": settings, **cost.measure(models, PROMPT, settings, repeats=1)}


def test_a_lossless_measurement_is_said_to_match_its_baseline(models, measured):
    assert measured["plain"]["trace"].new_ids == measured["speculative"]["trace"].new_ids   # the premise
    assert speedup.ours(models, measured)["sampling rule"] == (
        "greedy (temperature 0); output identical to the baseline: yes")


def test_a_measurement_whose_output_differs_from_its_baseline_says_no(models, measured):
    """The baseline's trace planted from another prompt's real run, so the two outputs differ. Catches a
    row that says "yes" without comparing the outputs (the NO side had never been exercised)."""
    other = Generation(models, "Once upon a time", Settings.greedy(None, 6)).run()
    planted = dict(measured, plain=dict(measured["plain"], trace=other))
    assert other.new_ids != measured["speculative"]["trace"].new_ids                        # the premise
    assert speedup.ours(models, planted)["sampling rule"] == (
        "greedy (temperature 0); output identical to the baseline: NO")


def test_the_result_row_reads_the_measurement_it_was_given(models, measured):
    row = speedup.ours(models, measured, str.upper)
    spec, plain = measured["speculative"]["costs"], measured["plain"]["costs"]
    assert row["result"] == (
        f"{plain['ms_per_token']:.2f} → {spec['ms_per_token']:.2f} ms/token, speedup "
        f"{measured['speedup_spread'].label(unit='×')}, acceptance length {spec['acceptance_length']:.2f} tokens per "
        "target forward")
    assert "drafter “AR”, k = 3 proposals per round" in row["target"]
    assert "each side ran 1 times, alternating" in row["timed boundary"]
    assert list(row) == speedup.ITEMS


def test_the_hardware_row_compares_the_median_run_s_round_with_the_same_rounds_priced_there():
    """Three runs priced here at 1.70, 2.70 and 2.10 one-token steps a round (step 10 ms; a check of width 5
    costs 10 + 4 × position ms, a stage 4 ms, bookkeeping 1 ms): the median, 2.10, not the first run's 1.70
    nor the mean 2.17. Catches a sentence that reads any run but the median, and the old "a large target on a
    GPU (from the sources)": the profile is hypothetical, and only its 10 ms step is the source's."""
    here = [Profile(f"run {i}", 10.0, position, 4.0, 1.0) for i, position in enumerate((0.5, 3.0, 1.5))]
    assert speedup.steps_compared(compare([(5, 1, 3)], here, LARGE_GPU)) == (
        "A round of these rounds costs 2.10 one-token steps here (measured) against 1.40 priced, a hypothetical "
        "large target on a GPU, for the same 3.00 tokens a round. That profile's 10 ms step is from the worked "
        "example of “How speculative decoding checks ahead”; its 0.5 ms a further position and 2 ms a stage are "
        "this app's assumptions (lesson 7 sets the two side by side).")


ms = st.floats(0.01, 100.0)
rounds_strategy = st.lists(st.tuples(st.integers(1, 17), st.integers(0, 3), st.integers(1, 17)), min_size=1, max_size=9)


@given(rounds_strategy, st.lists(st.tuples(ms, st.floats(-1.0, 20.0), st.floats(-1.0, 20.0), st.floats(-1.0, 5.0)),
                                 min_size=1, max_size=6))
def test_the_hardware_row_states_the_median_run_and_the_priced_round_and_no_direction(rounds, runs):
    """The 'here' figure is the run of median speedup (the lower middle of an even count: the run pair a
    measurement's headline shows, specviz.lessons.cost.pair_up), the
    other the same rounds priced on the sources' profile, the tokens a round the rounds' own; the sentence sets
    them side by side and says neither is cheaper. Catches the first or the fastest run read as 'here', the two
    sides swapped, and a direction word ("more", "cheaper") added without comparing the two."""
    c = compare(rounds, [Profile(f"run {i}", *run) for i, run in enumerate(runs)], LARGE_GPU)
    said = speedup.steps_compared(c)
    middle = sorted(c.here, key=lambda p: p.speedup)[(len(runs) - 1) // 2].round_steps
    tokens = sum(t for _, _, t in rounds) / len(rounds)
    assert said.startswith(f"A round of these rounds costs {middle:.2f} one-token steps here (measured) against "
                           f"{c.there.round_steps:.2f} {LARGE_GPU.label}, for the same {tokens:.2f} tokens a round. ")
    assert not re.search(r"\b(more|fewer|less|cheaper|dearer|smaller|larger|faster|slower)\b", said)
