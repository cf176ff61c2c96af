"""Lesson 3's drafting-cost probe: what it times and how it summarises."""
from specviz.lessons.parallel import draft_cost


def test_drafting_cost_gives_one_median_per_drafter_and_block_size(models):
    rows = draft_cost(models, "The best way to learn is to", ["ar", "dspark"], [1, 4], max_new_tokens=8, repeats=2)
    assert [(r["drafter"], r["k"]) for r in rows] == [("ar", 1), ("ar", 4), ("dspark", 1), ("dspark", 4)]
    assert all(r["draft_ms"] > 0 for r in rows)
