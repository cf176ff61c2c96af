"""Lesson 8's checklist column "this app, measured now": what it says about a measurement it is given."""
import re
from types import SimpleNamespace as Stand

import pytest
import torch
from hypothesis import given, strategies as st

from specviz.generator.engine import Generation
from specviz.generator.sampling import SamplingSettings
from specviz.generator.settings import Settings
from specviz.lessons import checklist, cost
from specviz.lessons.pricing import LARGE_GPU, Profile, compare
from specviz.lessons.protocol import Spread

PROMPT = "The best way to learn is to"


@pytest.fixture(scope="module")
def measured(models) -> dict:
    """A real, short measurement (one counted run a side) as lesson 8 stores it: greedy, so lossless."""
    settings = Settings.greedy("ar", 6, block_size=3)
    return {"prompt": PROMPT, "settings": settings, **cost.measure(models, PROMPT, settings, repeats=1)}


def test_a_lossless_measurement_is_said_to_match_its_baseline(models, measured):
    assert measured["plain"]["trace"].new_ids == measured["speculative"]["trace"].new_ids   # the premise
    assert checklist.ours(models, measured)["sampling rule"] == (
        "greedy (temperature 0); output identical to the baseline: yes")


def test_a_measurement_whose_output_differs_from_its_baseline_says_no(models, measured):
    """The baseline's trace planted from another prompt's real run, so the two outputs differ. Catches a
    row that says "yes" without comparing the outputs (the NO side had never been exercised)."""
    other = Generation(models, "Once upon a time", Settings.greedy(None, 6)).run()
    planted = dict(measured, plain=dict(measured["plain"], trace=other))
    assert other.new_ids != measured["speculative"]["trace"].new_ids                        # the premise
    assert checklist.ours(models, planted)["sampling rule"] == (
        "greedy (temperature 0); output identical to the baseline: NO")


def test_the_result_row_reads_the_measurement_it_was_given(models, measured):
    row = checklist.ours(models, measured, str.upper)
    spec, plain = measured["speculative"]["costs"], measured["plain"]["costs"]
    assert row["result"] == (
        f"{plain['ms_per_token']:.2f} → {spec['ms_per_token']:.2f} ms/token, speedup "
        f"{measured['speedup_spread'].label(unit='×')}, acceptance length {spec['acceptance_length']:.2f} tokens per "
        "target forward")
    assert "drafter “AR”, k = 3 proposals per round" in row["target"]
    assert "each side ran 1 times, alternating" in row["timed boundary"]
    assert list(row) == checklist.ITEMS


def test_the_hardware_row_compares_the_median_run_s_round_with_the_same_rounds_priced_there():
    """Three runs priced here at 1.70, 2.70 and 2.10 one-token steps a round (step 10 ms; a check of width 5
    costs 10 + 4 × position ms, a stage 4 ms, bookkeeping 1 ms): the median, 2.10, not the first run's 1.70
    nor the mean 2.17. Catches a sentence that reads any run but the median."""
    here = [Profile(f"run {i}", 10.0, position, 4.0, 1.0) for i, position in enumerate((0.5, 3.0, 1.5))]
    assert checklist.steps_compared(compare([(5, 1, 3)], here, LARGE_GPU)) == (
        "A round of these rounds costs 2.10 one-token steps here (measured) against 1.40 priced, a large target on "
        "a GPU (from the sources), for the same 3.00 tokens a round (lesson 7 sets the two side by side).")


ms = st.floats(0.01, 100.0)
rounds_strategy = st.lists(st.tuples(st.integers(1, 17), st.integers(0, 3), st.integers(1, 17)), min_size=1, max_size=9)


@given(rounds_strategy, st.lists(st.tuples(ms, st.floats(-1.0, 20.0), st.floats(-1.0, 20.0), st.floats(-1.0, 5.0)),
                                 min_size=1, max_size=6))
def test_the_hardware_row_states_the_median_run_and_the_priced_round_and_no_direction(rounds, runs):
    """The 'here' figure is the run whose round cost is the middle one (the lower middle of an even count), the
    other the same rounds priced on the sources' profile, the tokens a round the rounds' own; the sentence sets
    them side by side and says neither is cheaper. Catches the first or the fastest run read as 'here', the two
    sides swapped, and a direction word ("more", "cheaper") added without comparing the two."""
    c = compare(rounds, [Profile(f"run {i}", *run) for i, run in enumerate(runs)], LARGE_GPU)
    said = checklist.steps_compared(c)
    middle = sorted(p.round_steps for p in c.here)[(len(runs) - 1) // 2]
    tokens = sum(t for _, _, t in rounds) / len(rounds)
    assert said.startswith(f"A round of these rounds costs {middle:.2f} one-token steps here (measured) against "
                           f"{c.there.round_steps:.2f} {LARGE_GPU.label}, for the same {tokens:.2f} tokens a round ")
    assert not re.search(r"\b(more|fewer|less|cheaper|dearer|smaller|larger|faster|slower)\b", said)


def stand_in(plain_ids: list[int], spec_ids: list[int], settings: Settings) -> tuple:
    """A models object and a `cost.measure` result built by hand, holding only what `checklist.ours` reads
    (one run a side; one speculative round of 3 proposals committing them all), so the row's words can be
    planted without loading a model."""
    target = Stand(config=Stand(num_hidden_layers=2, hidden_size=8, vocab_size=50),
                   parameters=lambda: [torch.zeros(1000)])
    models = Stand(target=target, device=torch.device("cpu"), dtype=torch.float32, max_context=256)
    spec_round = Stand(proposed=[1, 2, 3], emitted=[1, 2, 3, 4], drafter_info={})
    measurement = {
        "prompt": PROMPT, "settings": settings,
        "plain": {"trace": Stand(new_ids=plain_ids), "runs_ms": [40.0], "costs": {"ms_per_token": 10.0},
                  "runs_costs": [{"rounds": 4, "mean_round_ms": 10.0, "verify_ms": 36.0}]},
        "speculative": {"trace": Stand(new_ids=spec_ids, prompt_ids=[0, 1, 2], rounds=[spec_round]),
                        "costs": {"tokens": 4, "prefill_ms": 5.0, "ms_per_token": 5.0, "acceptance_length": 4.0},
                        "runs_costs": [{"rounds": 1, "verify_ms": 12.0, "draft_ms": 3.0, "overhead_ms": 5.0}]},
        "speedup_spread": Spread(2.0, 2.0, 2.0, 1)}
    return models, measurement


@given(st.lists(st.integers(0, 3), max_size=5), st.lists(st.integers(0, 3), max_size=5))
def test_the_sampling_row_says_yes_exactly_when_the_two_outputs_are_the_same_tokens(plain_ids, spec_ids):
    """Catches a "yes" written without comparing the outputs, or comparing only their lengths (two outputs of
    equal length that part at a token are drawn here), and a "NO" beside equal outputs."""
    models, measurement = stand_in(plain_ids, spec_ids, Settings.greedy("ar", 4, block_size=3))
    row = checklist.ours(models, measurement)["sampling rule"]
    assert row == ("greedy (temperature 0); output identical to the baseline: "
                   + ("yes" if plain_ids == spec_ids else "NO"))


def test_a_sampled_measurement_claims_no_identity_with_its_baseline_either_way():
    """Sampling draws different tokens by design, so the row names the rule and says nothing of identity, equal
    outputs or not. Catches the greedy row's yes/NO appended to a sampled measurement."""
    sampled = Settings(drafter="ar", verifier="sampling", block_size=3, sampling=SamplingSettings(temperature=0.7))
    for plain_ids, spec_ids in (([1, 2], [1, 2]), ([1, 2], [1, 3])):
        models, measurement = stand_in(plain_ids, spec_ids, sampled)
        assert checklist.ours(models, measurement)["sampling rule"] == "sampling, temperature 0.7"


def test_the_stand_in_s_hardware_row_is_the_sentence_on_its_own_rounds():
    """The stand-in's rounds priced by `cost.regimes` end the hardware row: its measured profile (step 10 ms,
    a further position 1 ms, a stage 3 ms, bookkeeping 4 ms) prices the one round of width 4 at 13 + 3 + 4 =
    20 ms, 2.00 steps; the sources' at 11.5 + 2 = 13.5 ms, 1.35 steps; 4.00 tokens a round either way. Catches
    a row whose comparison is not read off the measurement it was given."""
    models, measurement = stand_in([1], [1], Settings.greedy("ar", 4, block_size=3))
    assert checklist.ours(models, measurement)["hardware"].endswith(
        "A round of these rounds costs 2.00 one-token steps here (measured) against 1.35 priced, a large target on "
        "a GPU (from the sources), for the same 4.00 tokens a round (lesson 7 sets the two side by side).")
