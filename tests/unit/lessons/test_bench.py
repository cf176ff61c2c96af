"""The benchmark's bookkeeping, on the embedded models (its speed figures are not asserted)."""
from types import SimpleNamespace

import pytest

from specviz.lessons.bench import bench, variants
from specviz.lessons.cost import speedup, trace_costs


def test_dloop_is_tried_at_every_threshold_for_each_block_size():
    assert list(variants(True, [2, 3], [-1.0, -4.0])) == ["k=2 g=-1.0", "k=2 g=-4.0", "k=3 g=-1.0", "k=3 g=-4.0"]
    assert list(variants(False, [2, 3], [-1.0, -4.0])) == ["k=2", "k=3"]


def test_stages_per_round_count_dloop_drafting_again(models):
    # a gate of -50 passes whatever the drafter proposes, so every round drafts max_stages = 3
    # stages; one-stage drafters report 1
    res = bench(models, ["dspark", "dloop"], [2], max_new_tokens=12, repeats=1, prompts=["The best way to learn is to"],
                loop_ks=[2], thresholds=[-50.0])
    assert res["methods"]["dspark"]["stages"] == 1
    assert res["methods"]["dloop"]["stages"] > 2
    assert res["greedy_mismatches"] == []
    # hosts differ from run to run, so a result names the machine it was measured on
    assert res["settings"]["hardware"].startswith("CPU " if models.device.type == "cpu" else "GPU ")


def test_the_verify_only_ceiling_of_the_seeds_round():
    # the seed's hypothetical round (source 000, "For hypothetical arithmetic"): plain decoding 10
    # ms a token; a 14 ms round committing 4 tokens, 8 ms of it the target's check. 3.5 ms a token,
    # about 2.9 times faster (2.857); with drafting and bookkeeping free, the same rounds would cost
    # their 8 ms check over 4 tokens, 2 ms a token: a ceiling of 5.0. A ceiling from the whole
    # round's time (2.857), from the check per round instead of per token (1.25), or a ratio the
    # wrong way up (0.35, 0.2) fails.
    rounds = [SimpleNamespace(emitted=[{}] * 4, total_ms=14.0, draft_ms=5.0, verify_ms=8.0, overhead_ms=1.0,
                              drafter_info={}) for _ in range(2)]
    c = trace_costs(SimpleNamespace(rounds=rounds, prefill_ms=3.0))
    assert c["ms_per_token"] == 3.5 and c["verify_ms_per_token"] == 2.0 and c["acceptance_length"] == 4.0
    assert speedup(10.0, c["ms_per_token"]) == pytest.approx(2.857, abs=1e-3)
    assert speedup(10.0, c["verify_ms_per_token"]) == 5.0


def test_the_verify_only_ceiling_is_above_the_measured_speedup(models):
    # with drafting and bookkeeping taken out of each round, the same rounds could only be
    # faster: on the real engine the ceiling is above the measured speedup in every variant
    res = bench(models, ["dspark", "lookup"], [2, 4], max_new_tokens=12, repeats=1, prompts=["The best way to learn is to"])
    for method in res["methods"].values():
        for v in method["variants"].values():
            assert v["verify_only_speedup"] > v["speedup"] > 0


def test_each_speedup_comes_with_its_spread_over_repeats(models):
    # one speedup per counted repeat (baseline median ms/token over the prompts against the
    # variant's), summarised as median and range: two prompts, three repeats, three speedups
    res = bench(models, ["ar"], [2], max_new_tokens=8, repeats=3,
                prompts=["The best way to learn is to", "Elinor was not inclined to"])
    s = res["methods"]["ar"]["speedup_spread"]
    assert s["runs"] == 3 and s["low"] <= s["median"] <= s["high"]
    assert res["settings"]["threads"] >= 1
