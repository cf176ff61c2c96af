"""Cost per committed token: the seed's worked example, break-even, and trace totals."""
from types import SimpleNamespace

import pytest

from specviz.lessons.cost import (Calculator, break_even_curve, break_even_tokens, measure, ms_per_token, speedup,
                          trace_costs, verification_cost_by_width)
from specviz.generator.engine import Settings


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
    assert c["ms_per_token"] == pytest.approx(28 / 5)      # not (3.5 + 14) / 2
    assert c["acceptance_length"] == 2.5 and c["verify_ms"] == 18.0
    assert c["stages_per_round"] == 1.5
    assert c["verify_ms_per_token"] == 18.0 / 5            # the round times without drafting and bookkeeping
    assert speedup(10.0, c["ms_per_token"]) == pytest.approx(10 / 5.6)


def test_width_probe_times_every_width_on_the_running_target(models):
    rows = verification_cost_by_width(models, [1, 4], context_ids=[models.eos_id, 5, 6, 7], repeats=2)
    assert [r["width"] for r in rows] == [1, 4]
    assert all(r["ms"] > 0 for r in rows) and rows[0]["relative"] == 1.0


def test_a_live_measurement_alternates_the_sides_and_keeps_each_ones_fastest_run(models):
    res = measure(models, "The best way to learn is to", Settings.greedy("ar", 8, block_size=3), repeats=3)
    for side in ("plain", "speculative"):
        assert len(res[side]["runs_ms"]) == 3
        assert res[side]["costs"]["decode_ms"] == min(res[side]["runs_ms"])
        assert res[side]["costs"]["tokens"] == 8
    assert res["plain"]["trace"].new_ids == res["speculative"]["trace"].new_ids   # greedy: the same text
    assert res["speedup"] == pytest.approx(res["plain"]["costs"]["ms_per_token"] / res["speculative"]["costs"]["ms_per_token"])


def test_one_dloop_check_trades_bonus_tokens_for_target_passes():
    from specviz.lessons.sweep import bonus_bound
    assert bonus_bound(3, 4) == {"one_check": 13, "separate_checks": 15, "target_passes_saved": 2}
    assert bonus_bound(1, 4)["one_check"] == bonus_bound(1, 4)["separate_checks"] == 5


def test_a_second_stage_pays_only_where_its_tokens_are_worth_more_than_it_costs():
    from specviz.lessons.sweep import gate_table
    # per round that drafted two stages of k = 2: (first stage's sum of log q, proposals accepted of 4)
    rounds = [(-0.5, 4), (-0.8, 2), (-3.0, 1), (-6.0, 3)]
    loose, tight, closed = gate_table(rounds, k=2, thresholds=[-8.0, -1.0, 0.0], token_ms=10.0, stage_ms=6.0)
    assert loose["opens"] == 1.0 and loose["first_stage_whole"] == 0.75
    assert loose["tokens_added"] == 0.75 and loose["worth_ms"] == 7.5 and loose["pays"]   # 7.5 ms > 6 ms
    assert tight["opens"] == 0.5 and tight["tokens_added"] == 1.0 and tight["pays"]
    assert closed["opens"] == 0.0 and closed["tokens_added"] is None and closed["pays"] is None
    # the same tokens do not repay a dearer stage
    assert not gate_table(rounds, 2, [-8.0], token_ms=10.0, stage_ms=8.0)[0]["pays"]


def test_pricing_a_second_stage_of_the_real_loop_drafter(models):
    import math
    from specviz.lessons.sweep import stage_earnings
    r = stage_earnings(models, "The best way to learn is to", "dloop", k=2, thresholds=[-math.inf, -4.0, -1.0],
                       max_new_tokens=24, repeats=1)
    always, mid, strict = r["rows"]
    assert r["rounds"] > 0 and always["opens"] == 1.0
    assert always["opens"] >= mid["opens"] >= strict["opens"]
    for row in r["rows"]:
        if row["pays"] is not None:   # the second stage adds tokens only where the first survived whole
            assert 0 <= row["tokens_added"] <= 2 * row["first_stage_whole"]
    assert r["token_ms"] > 0 and r["tokens_needed"] == pytest.approx(r["stage_ms"] / r["token_ms"])
