"""Cost per committed token: the seed's worked example, break-even, and trace totals."""
from types import SimpleNamespace

import pytest

from specviz.cost import (Calculator, break_even_curve, break_even_tokens, ms_per_token, speedup, trace_costs,
                          verification_cost_by_width)


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
    assert speedup(10.0, c["ms_per_token"]) == pytest.approx(10 / 5.6)


def test_width_probe_times_every_width_on_the_running_target(models):
    rows = verification_cost_by_width(models, [1, 4], context_ids=[models.eos_id, 5, 6, 7], repeats=2)
    assert [r["width"] for r in rows] == [1, 4]
    assert all(r["ms"] > 0 for r in rows) and rows[0]["relative"] == 1.0


def test_one_dloop_check_trades_bonus_tokens_for_target_passes():
    from specviz.sweep import bonus_bound
    assert bonus_bound(3, 4) == {"one_check": 13, "separate_checks": 15, "target_passes_saved": 2}
    assert bonus_bound(1, 4)["one_check"] == bonus_bound(1, 4)["separate_checks"] == 5
