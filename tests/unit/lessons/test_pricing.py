"""Pricing recorded rounds under a cost profile: planted rounds with hand-computed answers, the
sources' profile, profiles measured from real runs, and the sentence about the two regimes."""
import re

import pytest
import torch
from hypothesis import assume, given, settings, strategies as st

from specviz.generator.settings import Settings
from specviz.lessons.cost import measure, regimes
from specviz.lessons.pricing import (FIELDS, LARGE_GPU, LARGE_GPU_ORIGIN, PARTS, Profile, compare, comparison_rows, measured_profiles,
                                     price, profile_with, shapes, why_question, why_smaller)

# a one-stage round of k = 4 committing 4, one committing 2, and a DLoop round of two stages of 4 committing 6
PLANTED = [(5, 1, 4), (5, 1, 2), (9, 2, 6)]
HERE = Profile("here", step_ms=8.0, position_ms=0.5, stage_ms=1.0, bookkeeping_ms=0.25)


def test_planted_rounds_cost_their_parts_summed_over_their_tokens():
    p = price(PLANTED, HERE)
    # checks: 8 + 0.5·4 = 10, 10, 8 + 0.5·8 = 12; drafting 1 + 1 + 2 stages; bookkeeping 3 × 0.25
    assert (p.check_ms, p.draft_ms, p.bookkeeping_ms) == (32.0, 4.0, 0.75)
    assert p.total_ms == 36.75 and p.tokens == 12 and p.rounds == 3
    assert p.ms_per_token == 3.0625                       # 36.75 / 12
    assert p.speedup == pytest.approx(128 / 49, rel=1e-12)    # 8 / 3.0625
    assert p.round_steps == 1.53125 == p.break_even       # 36.75 / 3 rounds / 8 ms
    assert p.tokens_per_round == 4.0
    assert p.speedup == pytest.approx(p.tokens_per_round / p.round_steps, rel=1e-12)
    assert (p.steps("check_ms"), p.steps("draft_ms")) == (32 / 24, 4 / 24)


def test_the_large_target_profile_says_it_is_hypothetical_and_which_numbers_are_the_source_s():
    """Catches "a large target's costs taken from the sources": the worked example gives the 10 ms step, the
    14 ms round and its four tokens, and names no model, hardware or k; 0.5 ms a position, 2 ms a stage and
    k = 4 are this app's."""
    said = LARGE_GPU_ORIGIN
    assert said.startswith("This profile is hypothetical, and this app's reading.")
    source, app = said.split("This app's assumptions:")
    assert "worked example of “How speculative decoding checks ahead”: a 10 ms one-token step, and a 14 ms round " \
           "that commits four tokens; the example names no model, hardware or k." in source
    assert all(n not in source for n in ("0.5 ms", "2 ms", "k = 4"))
    assert all(n in app for n in ("0.5 ms for each further position", "2 ms a drafting stage", "k = 4 proposals"))
    assert LARGE_GPU.round_ms(width=5, stages=1) == 14.0 and "10 + 4 × 0.5 + 2 = 14 ms" in app


def test_the_sources_profile_gives_back_their_worked_example():
    four, one = price([(5, 1, 4)], LARGE_GPU), price([(5, 1, 1)], LARGE_GPU)
    assert four.total_ms == 14.0 and four.ms_per_token == 3.5                  # "3.5 milliseconds per token"
    assert four.speedup == pytest.approx(10 / 3.5, rel=1e-12)                   # "about 2.9 times faster"
    assert one.ms_per_token == 14.0 and one.speedup < 1                         # "is slower"
    assert four.round_steps == 1.4 and LARGE_GPU.check_ms(5) / LARGE_GPU.step_ms == 1.2   # "only modestly slower"


def test_every_number_of_the_sources_profile_says_where_it_comes_from_and_none_is_a_measurement():
    """Catches the old label "a large target on a GPU (from the sources)": only the 10 ms step is the source's;
    the other numbers are this app's assumptions, and each says so."""
    assert LARGE_GPU.label == "priced, a hypothetical large target on a GPU" and "measured" not in LARGE_GPU.label
    assert set(LARGE_GPU.sources) == set(FIELDS)
    for text in LARGE_GPU.sources.values():
        assert "“How speculative decoding checks ahead”" in text or "“Draft, Then Verify”" in text
        assert text.count("“") >= 2     # the document and a phrase from it
    assert "This app's assumption" not in LARGE_GPU.sources["step_ms"]
    assert all("This app's assumption" in LARGE_GPU.sources[f] for f in ("position_ms", "stage_ms", "bookkeeping_ms"))
    edited = profile_with(LARGE_GPU, step_ms=20.0)
    assert edited.sources["step_ms"] == "edited on this page" and edited.sources["stage_ms"] == LARGE_GPU.sources["stage_ms"]
    assert profile_with(LARGE_GPU, step_ms=10.0).sources == LARGE_GPU.sources     # unchanged is still the source's


def test_a_round_of_plain_decoding_has_no_stage_and_a_dloop_round_counts_its_stages():
    from types import SimpleNamespace as R
    rounds = [R(proposed=[1, 2, 3], emitted=[1, 2], drafter_info={"stages": [{}, {}, {}]}),
              R(proposed=[], emitted=[9], drafter_info={})]
    assert shapes(rounds) == [(4, 3, 2), (1, 0, 1)]


def test_a_measured_profile_is_read_off_the_run_pair_and_prices_the_run_back_exactly():
    # plain: 4 rounds of 10 ms, 9 ms of which the forward. Speculative: 2 rounds of k = 4, 1 stage each,
    # verify 22 ms (2 × 9 + 0.5 × 8 positions), draft 4 ms, overhead 4 ms (1 ms a round beyond plain's 1).
    plain = [{"rounds": 4, "mean_round_ms": 10.0, "verify_ms": 36.0},
             {"rounds": 4, "mean_round_ms": 12.0, "verify_ms": 40.0}]
    spec = [{"rounds": 2, "verify_ms": 22.0, "draft_ms": 4.0, "overhead_ms": 4.0, "decode_ms": 30.0},
            {"rounds": 2, "verify_ms": 28.0, "draft_ms": 6.0, "overhead_ms": 6.0, "decode_ms": 40.0}]
    rounds = [(5, 1, 4), (5, 1, 2)]
    a, b = measured_profiles(plain, spec, rounds, "this machine")
    assert (a.step_ms, a.position_ms, a.stage_ms, a.bookkeeping_ms) == (10.0, 0.5, 2.0, 1.0)
    assert (b.step_ms, b.position_ms, b.stage_ms, b.bookkeeping_ms) == (12.0, 1.0, 3.0, 1.0)
    assert a.label == "priced, this machine (measured)"
    assert [price(rounds, p).total_ms for p in (a, b)] == [30.0, 40.0]
    with pytest.raises(ValueError):
        measured_profiles(plain, spec[:1], rounds, "x")


def test_the_comparison_table_has_one_column_per_regime_each_labelled_priced():
    rows = comparison_rows(compare([(5, 1, 4)], [HERE], LARGE_GPU))
    assert list(rows[0]) == ["quantity", "priced, here", "priced, a hypothetical large target on a GPU"]
    assert [r["quantity"] for r in rows] == ["tokens a round", "round, in steps", "· the check", "· drafting",
                                             "· bookkeeping", "ms per token", "speedup"]
    # here: 10 + 1 + 0.25 = 11.25 ms, 1.41 steps, 2.8125 ms a token; the sources' profile: 14 ms, 1.40 steps, 3.5
    assert [tuple(r.values())[1:] for r in rows[1:2] + rows[-2:]] == [("1.41", "1.40"), ("2.81", "3.50"),
                                                                       ("2.84×", "2.86×")]


def test_the_answer_names_the_round_cost_in_steps_and_the_part_that_differs_most():
    slow_drafting = Profile("here", step_ms=10.0, position_ms=0.5, stage_ms=6.0)    # check as the GPU's, drafting 0.6
    said = why_smaller(compare([(5, 1, 3)], [slow_drafting], LARGE_GPU))
    assert said == ("Both prices use the same 1 round, 3.00 committed tokens a round. On this machine a round costs "
                    "1.80 one-token steps, so 3.00 ÷ 1.80 = 1.67×; on the large-target profile it costs 1.40 steps, so "
                    "3.00 ÷ 1.40 = 2.14×. The speedup here is smaller because a round costs more steps here, most of "
                    "all drafting (0.60 steps against 0.20).")


def test_a_cheaper_round_here_is_called_larger_and_an_overlapping_spread_is_noise():
    cheap = Profile("here", step_ms=10.0, position_ms=0.25, stage_ms=1.5)             # 1.1 + 0.15 = 1.25 steps
    assert "is larger because a round costs fewer steps here, most of all the check" in why_smaller(
        compare([(5, 1, 3)], [cheap], LARGE_GPU))
    runs = [cheap, Profile("here", 10.0, 0.5, 4.0)]                                     # 1.25 and 1.6 steps
    said = why_smaller(compare([(5, 1, 3)], runs, LARGE_GPU))
    assert why_question(compare([(5, 1, 3)], runs, LARGE_GPU)) == \
        "Is this machine's speedup different from the large-target profile's?"    # never asks why it is smaller
    assert "(1.25–1.60 over 2 runs)" in said and said.endswith("within this machine's noise, so this machine is not "
                                                              "told apart from the large-target profile here.")


NOT_TOLD_APART = ("The two round costs are within this machine's noise, so this machine is not told apart from the "
                  "large-target profile here.")


@pytest.mark.parametrize("runs, edge", [
    ([Profile("here", 10.0, 0.5, 2.0), Profile("here", 10.0, 1.0, 2.0)], "low"),    # 1.40–1.60 steps a round
    ([Profile("here", 10.0, 0.25, 2.0), Profile("here", 10.0, 0.5, 2.0)], "high"),  # 1.30–1.40 steps a round
], ids=["priced at the cheapest run", "priced at the dearest run"])
def test_a_priced_round_at_the_edge_of_this_machine_s_runs_is_noise_not_a_side(runs, edge):
    """The within-noise side at its boundary: one run here costs exactly the large-target profile's 1.40 steps a
    round, the other more (then less). Catches `<` for `<=` in either comparison, which would ask why the
    speedup here is smaller (or larger) of runs one of which priced the round exactly as the profile does."""
    c = compare([(5, 1, 3)], runs, LARGE_GPU)
    assert getattr(c.here_steps, edge) == c.there.round_steps == 1.4                  # the premise: on the edge
    assert why_question(c) == "Is this machine's speedup different from the large-target profile's?"
    assert why_smaller(c).endswith(NOT_TOLD_APART) and "most of all" not in why_smaller(c)


rounds_strategy = st.lists(st.tuples(st.integers(1, 17), st.integers(0, 3), st.integers(1, 17)), min_size=1, max_size=20)
ms = st.floats(0.01, 100.0)


@given(rounds_strategy, ms, ms, ms, ms, st.floats(0.0, 1.0))
def test_a_cheaper_check_never_lowers_the_speedup_of_the_same_rounds(rounds, step, position, stage, bookkeeping, cut):
    dear = Profile("x", step, position, stage, bookkeeping)
    cheaper = profile_with(dear, position_ms=position * cut)
    assert price(rounds, cheaper).speedup >= price(rounds, dear).speedup * (1 - 1e-12)


def test_the_rounds_of_a_real_measurement_priced_on_this_machine_cost_what_each_run_measured(models):
    res = measure(models, "The best way to learn is to", Settings.greedy("dspark", 12, k=3), repeats=2)
    c = regimes(res, LARGE_GPU)
    measured = [run["ms_per_token"] for run in res["speculative"]["runs_costs"]]
    assert [p.ms_per_token for p in c.here] == pytest.approx(measured, rel=1e-9)
    assert [p.speedup for p in c.here] == pytest.approx(
        [a / b for a, b in zip(res["plain"]["runs_ms_per_token"], res["speculative"]["runs_ms_per_token"])], rel=1e-9)
    assert c.there.tokens == res["speculative"]["costs"]["tokens"] and c.there.label.startswith("priced, ")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_a_gpu_host_measures_its_own_profile_the_same_way():
    from specviz.generator.models import load_embedded
    models = load_embedded("cuda")
    res = measure(models, "The best way to learn is to", Settings.greedy("dspark", 16, k=4), repeats=3)
    c = regimes(res, LARGE_GPU, "this GPU")
    assert c.here_median.label == "priced, this GPU (measured)"
    measured = [run["ms_per_token"] for run in res["speculative"]["runs_costs"]]
    assert [p.ms_per_token for p in c.here] == pytest.approx(measured, rel=1e-9)
    assert c.here_steps.median > 0 and "one-token steps" in why_smaller(c, "this GPU")


@given(rounds_strategy, st.lists(st.tuples(ms, ms, ms), min_size=1, max_size=5))
def test_the_question_asked_agrees_with_the_speedups_priced(rounds, runs):
    """'smaller' only where the large-target price beats every run here, 'larger' only where every run beats it."""
    c = compare(rounds, [Profile("here", step, position, stage) for step, position, stage in runs], LARGE_GPU)
    asked, here = why_question(c), [p.speedup for p in c.here]
    if "smaller" in asked:
        assert all(s < c.there.speedup * (1 + 1e-9) for s in here)
    elif "larger" in asked:
        assert all(s > c.there.speedup * (1 - 1e-9) for s in here)
    else:
        assert asked.startswith("Is this machine's speedup different")
        assert min(here) <= c.there.speedup * (1 + 1e-9) and max(here) >= c.there.speedup * (1 - 1e-9)


def test_the_part_named_is_the_one_that_differs_most_in_the_direction_the_sentence_states():
    """Planted (one round of width 5, one stage): here the check costs 1.80 steps against 1.20 (+0.60),
    bookkeeping 0.60 against 0 (+0.60), drafting 0 against 1.00 (−1.00), so a round costs 2.40 steps against
    2.20 and the speedup here is smaller. The part that differs most *in that direction* is the check; drafting
    differs most in size but the other way. Catches a part picked by the size of its difference alone, which
    would say a round costs more steps here "most of all drafting (0.00 steps against 1.00)"."""
    there = Profile("there", step_ms=10.0, position_ms=0.5, stage_ms=10.0)
    here = Profile("here", step_ms=10.0, position_ms=2.0, stage_ms=0.0, bookkeeping_ms=6.0)
    assert why_smaller(compare([(5, 1, 3)], [here], there)).endswith(
        "The speedup here is smaller because a round costs more steps here, most of all the check (1.80 steps "
        "against 1.20).")


@settings(max_examples=300, deadline=None)
@given(rounds_strategy, st.lists(st.tuples(ms, st.floats(-2.0, 20.0), st.floats(-2.0, 20.0), st.floats(-5.0, 10.0)),
                                 min_size=1, max_size=5))
def test_every_direction_the_why_sentence_states_agrees_with_the_prices(rounds, runs):
    """"smaller" only where the sources' round costs fewer steps than every run here, "larger" only where it
    costs more than every run, noise where it falls inside their range; and the part named is the one whose
    difference goes furthest in the stated direction, with its own two numbers. Catches a verdict read off the
    median run alone (a priced round inside the range called smaller or larger), "more steps" beside a larger
    speedup, a part chosen by the size of its difference whatever its sign, and a part's numbers from the
    other regime."""
    c = compare(rounds, [Profile("here", *run) for run in runs], LARGE_GPU)
    steps = [p.round_steps for p in c.here]
    assume(min(steps) > 0)      # a part may come out below zero in a noisy run, a whole round never does
    said, h, g = why_smaller(c), c.here_median, c.there
    verdict = re.search(r"(within this machine's noise|The speedup here is (smaller|larger) because a round costs "
                        r"(more|fewer) steps here)", said)
    if min(steps) <= g.round_steps <= max(steps):
        assert verdict.group(1) == "within this machine's noise" and "most of all" not in said
        return
    smaller = g.round_steps < min(steps)
    assert (verdict.group(2), verdict.group(3)) == (("smaller", "more") if smaller else ("larger", "fewer"))
    sign = 1 if smaller else -1
    assert sign * (h.speedup - g.speedup) < 0                       # the speedup named is the speedup priced
    named = re.search(r"most of all (.+?) \((-?[\d.]+) steps against (-?[\d.]+)\)\.$", said)
    part = {name: key for key, name in PARTS.items()}[named.group(1)]
    differs = {k: sign * (h.steps(k) - g.steps(k)) for k in PARTS}
    assert differs[part] == max(differs.values()) and differs[part] > -1e-12   # it goes the stated way
    assert (named.group(2), named.group(3)) == (f"{h.steps(part):.2f}", f"{g.steps(part):.2f}")
