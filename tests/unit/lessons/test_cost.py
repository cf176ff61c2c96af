"""Cost per committed token: the seed's worked example, break-even, and trace totals."""
import math
import re
from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st

from specviz.lessons.cost import (Calculator, calculator_delta, break_even_curve, break_even_tokens, if_drafting_were_free,
                                  layout_gap, measure, ms_per_token, one_token_answer, pair_up, probe_versus_rounds, regimes,
                                  speedup, speedup_sentence, taken_apart, trace_costs, verification_cost_by_width)
from specviz.lessons.pricing import LARGE_GPU
from specviz.generator.settings import Settings
from specviz.lessons.protocol import ratio_spread, spread


def test_the_seeds_round_committing_four_tokens_costs_35_ms_each():
    c = Calculator(baseline_ms=10, round_ms=14, tokens=4)
    assert c.ms_per_token == 3.5
    assert c.speedup == pytest.approx(2.857, abs=1e-3)   # "about 2.9 times faster"
    assert c.faster


def test_the_same_round_committing_one_token_is_slower():
    c = Calculator(10, 14, 1)
    assert c.ms_per_token == 14.0 and not c.faster and c.speedup < 1


def test_break_even_is_round_time_over_plain_time():
    assert break_even_tokens(14, 10) == pytest.approx(1.4)
    curve = break_even_curve(14, 10, 5)
    assert [r["tokens"] for r in curve] == [1, 2, 3, 4, 5]
    assert curve[3]["ms_per_token"] == 3.5


def test_a_round_always_commits_at_least_one_token():
    with pytest.raises(ValueError):
        Calculator(10, 14, 0)
    with pytest.raises(ValueError):
        ms_per_token(10, 0)


def test_trace_totals_divide_total_time_by_total_tokens_not_mean_of_ratios():
    # a DLoop round that drafted two stages, then a round of a one-stage drafter (no "stages")
    rounds = [SimpleNamespace(emitted=[{}] * 4, total_ms=14.0, draft_ms=4.0, verify_ms=9.0, overhead_ms=1.0,
                              drafter_info={"stages": [{"continue": True}, {"continue": False}]}),
              SimpleNamespace(emitted=[{}] * 1, total_ms=14.0, draft_ms=4.0, verify_ms=9.0, overhead_ms=1.0,
                              drafter_info={})]
    c = trace_costs(SimpleNamespace(rounds=rounds, prefill_ms=5.0))
    assert c["ms_per_token"] == pytest.approx(5.6)         # 28 ms over 5 tokens, not (3.5 + 14) / 2 = 8.75
    assert c["acceptance_length"] == 2.5 and c["verify_ms"] == 18.0
    assert c["stages_per_round"] == 1.5
    assert c["verify_ms_per_token"] == pytest.approx(3.6)  # 18 ms of checks over 5 tokens, drafting left out
    assert c["mean_verify_ms"] == 9.0 and c["draft_share"] == pytest.approx(8 / 28)   # lesson 8's two metrics
    assert speedup(10.0, c["ms_per_token"]) == pytest.approx(1.7857, abs=1e-4)


def test_width_probe_times_every_width_on_the_running_target(models):
    rows = verification_cost_by_width(models, [1, 4], context_ids=[models.eos_id, 5, 6, 7], repeats=2)
    assert [r["width"] for r in rows] == [1, 4]
    assert all(r["ms"] > 0 for r in rows) and rows[0]["relative"] == 1.0


def test_a_live_measurement_runs_both_sides_on_the_real_engine(models):
    res = measure(models, "The best way to learn is to", Settings.greedy("ar", 8, k=3), repeats=3)
    for side in ("plain", "speculative"):
        assert len(res[side]["runs_ms"]) == 3 and res[side]["ms_per_token"].n == 3
        assert res[side]["costs"]["tokens"] == 8 and res[side]["trace"].new_ids
    assert res["plain"]["trace"].new_ids == res["speculative"]["trace"].new_ids   # greedy: the same text
    assert res["speedup_spread"].n == 3
    assert 0 < res["speedup_spread"].low <= res["speedup"] <= res["speedup_spread"].high


def test_the_speedup_pairs_the_sides_run_by_run():
    # plain 10, 12, 11 ms a token; speculative 3.5 (the seed's round), 4, 5.5: run by run the
    # speedups are 2.857, 3.0 and 2.0, so the median is the seed's 2.857 and the range 2.0-3.0.
    # Pairing sorted runs instead (2.857, 2.75, 2.18), the ratio of the median runs (11 / 4 =
    # 2.75), or the ratio upside down (0.35) gives other numbers.
    s = ratio_spread([10.0, 12.0, 11.0], [3.5, 4.0, 5.5])
    assert s.n == 3 and s.low == 2.0 and s.high == 3.0
    assert s.median == pytest.approx(2.857, abs=1e-3)


def synthetic_side(ms_per_token: list[float], tokens: int, round_shapes: list[tuple[int, int, int]], verify_share: float):
    """A side's runs as `repeated_runs` records them, each run's ms per token given, its rounds of `round_shapes`
    (width, stages, committed); plain when every width is 1."""
    rounds = [SimpleNamespace(proposed=[7] * (w - 1), emitted=[{"id": 1}] * c, drafter_info={}) for w, _, c in round_shapes]
    runs = []
    for i, per_token in enumerate(ms_per_token):
        decode = per_token * tokens
        draft = 0.0 if all(w == 1 for w, _, _ in round_shapes) else 0.2 * decode
        costs = {"decode_ms": decode, "ms_per_token": per_token, "tokens": tokens, "rounds": len(rounds),
                 "mean_round_ms": decode / len(rounds), "verify_ms": verify_share * decode, "draft_ms": draft,
                 "overhead_ms": decode - verify_share * decode - draft, "acceptance_length": tokens / len(rounds)}
        runs.append({"trace": SimpleNamespace(rounds=rounds, name=f"run {i}"), "costs": costs})
    return taken_apart(runs, 0)


times = st.lists(st.floats(1.0, 50.0), min_size=1, max_size=7)


@settings(max_examples=200, deadline=None)
@given(times.flatmap(lambda plain: st.tuples(st.just(plain), st.lists(st.floats(1.0, 50.0), min_size=len(plain),
                                                                        max_size=len(plain)))))
def test_the_headline_speedup_is_the_division_of_the_two_times_printed_beside_it(runs):
    """Lesson 7 and 8 print plain ms, speculative ms and a speedup side by side, and the round table, the
    break-even chart and the taken-apart rounds below them. For any run timings, the speedup is plain ÷
    speculative of the printed pair, and the round table's priced run is that same pair. Planted bugs: the
    median of the ratios beside the medians of each side (18.79 / 23.26 printed beside 0.76×), or a table
    priced on the run of median round cost."""
    plain_ms, spec_ms = runs
    res = pair_up({"plain": synthetic_side(plain_ms, 8, [(1, 0, 1)] * 8, 0.9),
                   "speculative": synthetic_side(spec_ms, 8, [(5, 1, 3), (5, 1, 2), (5, 1, 3)], 0.6)})
    p, s = res["plain"]["costs"], res["speculative"]["costs"]
    assert res["speedup"] == pytest.approx(p["ms_per_token"] / s["ms_per_token"], rel=1e-12)
    assert res["speedup_spread"].low <= res["speedup"] <= res["speedup_spread"].high
    here = regimes(res, LARGE_GPU).here_median
    assert here.speedup == pytest.approx(res["speedup"], rel=1e-9)
    assert here.ms_per_token == pytest.approx(s["ms_per_token"], rel=1e-9)
    assert here.round_steps == pytest.approx(s["mean_round_ms"] / p["ms_per_token"], rel=1e-9)   # the break-even chart's


def test_a_one_off_slow_layout_reading_is_named_an_outlier_not_the_headline():
    """Lesson 7 said "differ by up to 146.9×" from one 4,114 µs reading among 28-39 µs ones."""
    rows = [{"layer": "384 → 1024", "rows": 1, "as stored, µs": 4114, "Wᵀ copy, µs": 39, "W·xᵀ, µs": 28, "packed, µs": 30},
            {"layer": "384 → 6144", "rows": 1, "as stored, µs": 90, "Wᵀ copy, µs": 180, "W·xᵀ, µs": 95}]
    said = layout_gap(rows)
    assert "**2.0×** (the 384 → 6144 layer at 1 row)" in said
    assert "146.9" not in said and "4,114 µs (as stored, the 384 → 1024 layer at 1 row)" in said


def test_the_width_probe_and_the_rounds_check_are_said_to_agree_only_within_a_tenth():
    rows = [{"width": 1, "relative": 1.0}, {"width": 4, "relative": 1.2}, {"width": 6, "relative": 1.3}]
    assert "**1.25**" in probe_versus_rounds(rows, 1.71, 5) and "need not agree" in probe_versus_rounds(rows, 1.71, 5)
    assert probe_versus_rounds(rows, 1.3, 5).endswith("the two agree.")
    assert "need not agree" in probe_versus_rounds(rows, 1.0, 5)


def test_one_dloop_check_trades_bonus_tokens_for_target_passes():
    from specviz.lessons.dloop import bonus_bound
    assert bonus_bound(3, 4) == {"one_check": 13, "separate_checks": 15, "target_passes_saved": 2}
    assert bonus_bound(1, 4)["one_check"] == bonus_bound(1, 4)["separate_checks"] == 5


def test_a_later_stage_pays_only_where_looping_made_a_token_cheaper():
    from specviz.lessons.protocol import spread
    from specviz.lessons.dloop import stage_prices

    def row(g, stages, tokens, ms, speedups):
        return {"drafter": "dloop", "threshold": g, "looped": 0.5, "stages_per_round": stages,
                "acceptance_length": tokens, "ms_per_token": ms, "runs_ms_per_token": [ms] * 3,
                "speedup_spread": spread(speedups)}
    # one stage a round: 2 tokens a check at 10 ms a token, a 20 ms round
    one = row(None, 1.0, 2.0, 10.0, [1.0, 1.1, 1.2])
    rows = [row(-8.0, 1.5, 2.5, 9.0, [1.3, 1.4, 1.5]),        # a 22.5 ms round: 5 ms and 1 token per extra stage
            row(-12.0, 3.0, 2.2, 11.0, [0.8, 0.85, 0.9]),     # a 24.2 ms round: 2.1 ms and 0.1 token per extra stage
            row(-10.0, 2.0, 2.0, 10.2, [1.05, 1.1, 1.15]),    # ranges overlap with one stage's
            row(-2.0, 1.0, 2.0, 10.1, [1.0, 1.1, 1.2])]       # the gate never opened
    pays, dear, noise, shut = stage_prices({"one_stage": {"dloop": one}, "rows": rows})
    assert (pays["stage_ms"], pays["tokens_added"], pays["tokens_needed"], pays["verdict"]) == (5.0, 1.0, 0.5, "pays")
    assert dear["stage_ms"] == pytest.approx(2.1) and dear["tokens_added"] == pytest.approx(0.1)
    assert dear["tokens_needed"] == pytest.approx(0.21) and dear["verdict"] == "does not pay"
    assert noise["verdict"] == "within this machine's noise"
    assert shut["verdict"] == "gate never opened" and shut["stage_ms"] is shut["tokens_added"] is None
    assert not pays["stage_in_noise"] and not dear["stage_in_noise"]


def test_a_stage_cost_whose_runs_reach_zero_is_noise_and_one_clear_of_zero_is_a_finding():
    """A stage's cost is a difference of two noisy timings: priced run by run, a range reaching zero
    (a −20.8 ms 'cost' among them) is no finding, and a range above zero is."""
    from specviz.lessons.protocol import spread
    from specviz.lessons.dloop import stage_prices
    one = {"acceptance_length": 2.0, "ms_per_token": 10.0, "runs_ms_per_token": [10.0, 16.0, 10.0],
           "speedup_spread": spread([1.0, 1.1])}
    looping = {"drafter": "dloop", "threshold": -8.0, "looped": 1.0, "stages_per_round": 2.0, "acceptance_length": 2.2,
               "ms_per_token": 10.0, "runs_ms_per_token": [10.0, 8.0, 16.0], "speedup_spread": spread([0.6, 1.0])}
    noisy = stage_prices({"one_stage": {"dloop": one}, "rows": [looping]})[0]
    assert noisy["stage_ms_spread"].low < 0 < noisy["stage_ms_spread"].high and noisy["stage_in_noise"]
    steady = dict(looping, runs_ms_per_token=[12.0, 17.0, 12.0])      # every run dearer than one stage's
    clear = stage_prices({"one_stage": {"dloop": one}, "rows": [steady]})[0]
    assert clear["stage_ms_spread"].low > 0 and not clear["stage_in_noise"]
    assert clear["stage_ms"] == pytest.approx(12.0 * 2.2 - 10.0 * 2.0)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.floats(1, 50), st.floats(1, 50)), min_size=1, max_size=5), st.floats(1.01, 3),
       st.floats(1, 4), st.floats(1, 4))
def test_a_stage_cost_is_shown_as_a_number_only_when_every_run_priced_it_above_zero(runs, stages, tokens, one_tokens):
    from specviz.lessons.protocol import spread
    from specviz.lessons.dloop import stage_prices
    from specviz.lessons.dloop import price_rows
    one = {"acceptance_length": one_tokens, "ms_per_token": 10.0, "runs_ms_per_token": [b for _, b in runs],
           "speedup_spread": spread([1.0])}
    row = {"drafter": "dloop", "threshold": -8.0, "looped": 1.0, "stages_per_round": stages, "acceptance_length": tokens,
           "ms_per_token": 10.0, "runs_ms_per_token": [a for a, _ in runs], "speedup_spread": spread([1.0])}
    shown = price_rows(stage_prices({"one_stage": {"dloop": one}, "rows": [row]}), str)[0]["a later stage costs"]
    each = [(a * tokens - b * one_tokens) / (stages - 1) for a, b in runs]
    if min(each) > 0:
        assert float(shown.split()[0]) >= 0 and shown.endswith(" ms")
    else:
        assert shown == "within this machine's noise"


def test_the_sweep_measures_one_stage_beside_every_threshold_and_prices_from_those_runs(models):
    from specviz.lessons.dloop import stage_prices, threshold_sweep
    told = []
    res = threshold_sweep(models, "She was very, very, very", ["dloop"], [-8.0, -1.0], k=4, max_stages=3,
                          max_new_tokens=16, repeats=2, progress=lambda done, total, name: told.append(name))
    one, (open_, shut) = res["one_stage"]["dloop"], res["rows"]
    assert told[:4] == ["plain decoding", "dloop, one stage a round", "dloop, g = -8", "dloop, g = -1"]
    assert len(told) == 12                                              # a warm-up and 2 counted runs of 4 settings
    assert one["stages_per_round"] == 1.0 and one["looped"] == 0.0
    assert open_["stages_per_round"] > 1 and open_["looped"] > 0        # at g = -8 the gate opens on this prompt
    assert shut["stages_per_round"] == 1.0 and stage_prices(res)[1]["verdict"] == "gate never opened"   # not at -1
    assert all(r["speedup_spread"].n == 2 for r in res["rows"])
    # the verdict rule itself is checked on scripted rows above; here, that the sweep's own runs
    # reach it: the looping row gets a price and one of the three verdicts, and a verdict agrees
    # with the sign of the price (a faster run in every repeat had tokens worth more than its stage)
    price = stage_prices(res)[0]
    assert price["stage_ms"] is not None and price["tokens_added"] is not None
    assert price["verdict"] in ("pays", "does not pay", "within this machine's noise")
    if price["verdict"] == "pays":
        assert price["tokens_added"] > price["tokens_needed"]
    if price["verdict"] == "does not pay":
        assert price["tokens_added"] < price["tokens_needed"]
    # a row keeps its rounds for pricing in another regime:
    # its rounds' shapes (16 committed tokens) and every run's totals, plain decoding's too
    assert sum(t for _, _, t in open_["shapes"]) == 16 and len(open_["runs_costs"]) == len(res["baseline_runs"]) == 2
    from specviz.lessons.pricing import LARGE_GPU
    from specviz.lessons.dloop import stage_in_regimes
    here = stage_in_regimes(res, LARGE_GPU, "this machine")
    assert here[0]["tokens_added"] == pytest.approx(price["tokens_added"]) and here[0]["here_needed"].n == 2
    assert here[1]["here"] == "gate never opened"


def test_the_one_token_answer_says_slower_for_the_seed_example_and_then_what_four_tokens_buy():
    said = one_token_answer(Calculator(10, 14, 4))
    assert said.startswith("**Answer: slower (0.71×).** Committing one token, the round costs **14 ms per token** "
                           "against 10 ms for plain decoding.")
    assert said.index("slower") < said.index("2.86×") and "breaks even at 1.40 tokens" in said


def test_the_one_token_answer_says_faster_or_the_same_when_the_round_is_no_dearer_than_a_plain_step():
    assert one_token_answer(Calculator(10, 8, 4)).startswith("**Answer: faster (1.25×).**")
    same = one_token_answer(Calculator(10, 10, 1))
    assert same.startswith("**Answer: the same (1.00×).**") and "Committing 1," not in same


@settings(max_examples=300, deadline=None)
@given(st.floats(0.1, 1000), st.floats(0.1, 5000), st.integers(1, 64))
def test_the_one_token_verdict_always_agrees_with_the_two_times(baseline, round_ms, tokens):
    verdict = re.match(r"\*\*Answer: (faster|slower|the same) \(", one_token_answer(Calculator(baseline, round_ms, tokens)))
    expected = "the same" if math.isclose(round_ms, baseline) else "faster" if round_ms < baseline else "slower"
    assert verdict.group(1) == expected


def test_free_drafting_is_called_faster_only_where_the_check_alone_beats_a_plain_step():
    assert "would be **2.50×** faster than plain decoding" in if_drafting_were_free(10.0, 4.0)
    said = if_drafting_were_free(10.0, 12.5)
    assert "faster" not in said and "**0.80×** plain decoding's speed" in said and "could win here" in said


@given(st.floats(0.01, 1000.0), st.floats(0.01, 1000.0))
def test_what_free_drafting_is_said_to_give_agrees_with_the_ratio(plain, verify):
    said = if_drafting_were_free(plain, verify)
    shown = f"{plain / verify:.2f}"
    assert ("faster than plain decoding" in said) == (float(shown) > 1.0)
    assert ("level with plain decoding" in said) == (shown == "1.00")
    assert f"**{shown}×**" in said


@pytest.mark.parametrize("plain, verify, said", [
    # a check of k = 4 that costs a few ms a committed token, against a 13.61 ms plain step
    (13.61, 3.63, "If drafting and bookkeeping cost nothing, these rounds would be **3.75×** faster than plain "
                  "decoding: the most a cheaper drafter with the same acceptance could reach."),
    # a CPU check that costs more a committed token than a plain step: no drafter could win
    (9.84, 10.37, "Even if drafting and bookkeeping cost nothing, these rounds would run at **0.95×** plain "
                  "decoding's speed: their checks alone cost more a committed token than a plain step"),
    # level: the check alone costs exactly a plain step a token, which is not faster
    (10.0, 10.0, "Even if drafting and bookkeeping cost nothing, these rounds would run level with plain decoding "
                 "(**1.00×**): their checks alone cost a plain step a committed token"),
    # 1.001×, shown as 1.00×: the words follow the figure, not the digits it hides
    (10.0, 9.99, "these rounds would run level with plain decoding (**1.00×**)"),
], ids=["a cheap check", "a dear check", "level", "level as shown"])
def test_free_drafting_is_said_from_measured_ms_on_each_side_and_level_is_not_faster(plain, verify, said):
    """Planted ms per token of the kind lesson 7 measures. Catches `>=` for `>` (level called faster) and the
    ratio taken the wrong way up (3.63 / 13.61 = 0.27×), and a 1.001× printed "1.00× faster"."""
    assert said in if_drafting_were_free(plain, verify)


@pytest.mark.parametrize("runs, side", [
    ([1.21, 1.35, 1.48], "faster than plain decoding in every run"),
    ([0.62, 0.70, 0.91], "slower than plain decoding in every run"),
    ([0.93, 1.12, 1.40], "within this machine's noise"),   # runs on both sides of 1×
    ([1.00, 1.10, 1.20], "within this machine's noise"),   # a run at exactly 1× is not faster
])
def test_the_measured_speedup_names_the_side_every_run_fell_on(runs, side):
    said = speedup_sentence(spread(runs))
    assert said.startswith(f"Speedup over the runs: **{spread(runs).label(unit='×')}**") and side in said


@given(st.lists(st.floats(0.1, 10.0), min_size=1, max_size=9))
def test_the_speedup_sentence_never_names_a_side_some_run_did_not_take(runs):
    said = speedup_sentence(spread(runs))
    assert ("faster than plain" in said) == (min(runs) > 1.0)
    assert ("slower than plain" in said) == (max(runs) < 1.0)


# The calculator's speedup label: faster, slower, or the same at break-even

def test_the_calculator_says_the_same_exactly_at_break_even():
    """Planted bug: the page's old `"faster" if calc.faster else "slower"`, which called a round of 20 ms
    committing 2 tokens against 10 ms plain (1.00×) slower."""
    assert calculator_delta(Calculator(10, 20, 2)) == ("the same", "off")


def test_the_calculator_says_faster_or_slower_on_either_side_of_break_even():
    assert calculator_delta(Calculator(10, 19.9, 2)) == ("faster", "normal")
    assert calculator_delta(Calculator(10, 20.1, 2)) == ("slower", "inverse")


@given(st.floats(1.0, 100.0), st.floats(1.0, 100.0), st.integers(1, 16))
def test_the_calculator_s_label_names_the_side_its_own_ms_per_token_fell_on(baseline, round_ms, tokens):
    """Catches a label read off the speedup's rounding, or "slower" at break-even."""
    calc = Calculator(baseline, round_ms, tokens)
    said, colour = calculator_delta(calc)
    level = math.isclose(calc.ms_per_token, baseline)
    assert (said == "the same") == level and (colour == "off") == level
    if not level:
        assert said == ("faster" if calc.ms_per_token < baseline else "slower")
