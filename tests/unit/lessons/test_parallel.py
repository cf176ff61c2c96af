"""Lesson 3's drafting-cost probe: what it times and how it summarises."""
from specviz.lessons.parallel import draft_cost


def test_drafting_cost_gives_a_median_and_range_per_drafter_and_block_size_over_alternated_runs(models):
    told = []
    rows = draft_cost(models, "The best way to learn is to", ["ar", "dspark"], [1, 4], max_new_tokens=8, repeats=2,
                      progress=lambda done, total, name: told.append((done, total, name)))
    assert [(r["drafter"], r["k"]) for r in rows] == [("ar", 1), ("ar", 4), ("dspark", 1), ("dspark", 4)]
    assert all(r["spread"].n == 2 and r["spread"].low <= r["draft_ms"] == r["spread"].median <= r["spread"].high
               and r["spread"].low > 0 for r in rows)
    # a warm-up and two counted runs of each, the four settings in turn
    assert [name for _, _, name in told] == ["ar, k = 1", "ar, k = 4", "dspark, k = 1", "dspark, k = 4"] * 3
    assert told[-1][:2] == (11, 12)


def test_a_step_in_drafting_cost_inside_the_noise_is_labelled_so():
    from specviz.lessons.parallel import cost_steps
    from specviz.lessons.protocol import spread
    rows = [{"drafter": d, "k": k, "spread": spread(ms)} for d, k, ms in
            [("ar", 1, [2.0, 2.4]), ("ar", 2, [1.9, 2.1]), ("ar", 4, [7.0, 8.0]),     # k = 2 "faster": overlaps k = 1
             ("dflash", 1, [3.0, 3.1]), ("dflash", 2, [2.0, 2.2])]]
    assert cost_steps(rows) == ["–", "within this machine's noise", "more", "–", "less"]
