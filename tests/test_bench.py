"""The benchmark's bookkeeping, on the embedded models (its speed figures are not asserted)."""
from specviz.bench import bench, variants


def test_dloop_is_tried_at_every_threshold_for_each_block_size():
    assert list(variants("dloop", [2, 3], [-1.0, -4.0])) == ["k=2 g=-1.0", "k=2 g=-4.0", "k=3 g=-1.0", "k=3 g=-4.0"]
    assert list(variants("dspark", [2, 3], [-1.0, -4.0])) == ["k=2", "k=3"]


def test_stages_per_round_count_dloop_drafting_again(models):
    # a gate of -50 passes whatever the drafter proposes, so every round drafts max_stages = 3
    # stages; one-stage drafters report 1
    res = bench(models, ["dspark", "dloop"], [2], max_new_tokens=12, repeats=1, prompts=["The best way to learn is to"],
                loop_block_sizes=[2], thresholds=[-50.0])
    assert res["methods"]["dspark"]["stages"] == 1
    assert res["methods"]["dloop"]["stages"] > 2
    assert res["greedy_mismatches"] == []
    # hosts differ from run to run, so a result names the machine it was measured on
    assert res["settings"]["hardware"].startswith("CPU " if models.device.type == "cpu" else "GPU ")
