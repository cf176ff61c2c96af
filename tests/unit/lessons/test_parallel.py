"""Lesson 3's drafting-cost probe: what it times and how it summarises, and what the page says of it."""
import re

from hypothesis import given, settings, strategies as st

from specviz.lessons.parallel import answer, by_position, conditional_acceptance, cost_steps, decay_note, draft_cost, explain_cost
from specviz.lessons.protocol import spread, within_noise


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


def cost_rows(times: dict) -> list[dict]:
    """`draft_cost` rows planted from {(drafter, k): [ms of each run]}."""
    return [{"drafter": d, "k": k, "spread": spread(ms), "draft_ms": spread(ms).median} for (d, k), ms in times.items()]


def test_a_one_pass_drafter_whose_cost_grew_on_a_cpu_is_said_to_grow_with_the_reason():
    """The measurement that the fixed sentence contradicted: DFlash 1.62 → 6.20 → 7.29 ms."""
    rows = cost_rows({("ar", 1): [1.0, 1.1], ("ar", 8): [10.0, 13.9],
                      ("dflash", 1): [1.6, 1.7], ("dflash", 4): [2.6, 8.4], ("dflash", 8): [7.0, 7.5]})
    said = explain_cost(rows, ["dflash"], label=str.upper)
    assert said.startswith("Drafting cost grew with k beyond this machine's noise for AR (1.05 ms at k = 1, "
                           "11.95 ms at k = 8) and for DFLASH (1.65 ms at k = 1, 7.25 ms at k = 8).")
    assert "its cost grew with the block here. On a GPU" in said and "barely" in said.split("On a GPU")[1]


def test_a_one_pass_drafter_whose_cost_stayed_inside_the_noise_is_not_said_to_grow():
    rows = cost_rows({("ar", 1): [1.0, 1.1], ("ar", 8): [10.0, 13.9], ("dspark", 1): [2.0, 2.5], ("dspark", 8): [2.4, 3.0]})
    said = explain_cost(rows, ["dspark"])
    assert "for ar (1.05 ms at k = 1, 11.95 ms at k = 8)." in said
    assert "Within this machine's noise from k = 1 to k = 8: dspark (2.25 ms, 2.70 ms)." in said
    assert "did not grow beyond the noise here" in said and "grew with the block" not in said


def test_one_pass_drafters_that_differ_are_named_apart():
    """DSpark's cost grew beyond the noise while DFlash's stayed inside it: the sentence about one-pass
    drafters names each, rather than saying of both that the cost grew."""
    rows = cost_rows({("dflash", 1): [19.1, 21.6, 38.3], ("dflash", 8): [32.9, 36.8, 49.1],
                      ("dspark", 1): [24.7, 27.9, 38.0], ("dspark", 8): [42.7, 44.3, 154.4]})
    said = explain_cost(rows, ["dflash", "dspark"])
    assert "its cost grew with the block here for dspark, not beyond the noise for dflash." in said
    on_gpu = explain_cost(rows, ["dflash", "dspark"], device="cuda")
    assert "though here it grew beyond the noise for dspark, not beyond the noise for dflash." in on_gpu


def test_on_a_gpu_the_reason_is_the_gpu_s_and_a_drop_is_called_a_busy_moment():
    rows = cost_rows({("dflash", 1): [5.0, 5.2], ("dflash", 8): [2.0, 2.1]})
    said = explain_cost(rows, ["dflash"], device="cuda")
    assert said.startswith("Less at the larger k, a busy moment the runs did not average out from k = 1 to k = 8: "
                           "dflash (5.10 ms, 2.05 ms).")
    assert "a GPU computes a small block's positions at once, so its cost barely depends on k." in said
    assert "autoregressive" not in said


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.floats(0.1, 20), st.floats(0, 5), st.floats(0, 5)), min_size=4, max_size=4),
       st.sampled_from(["cpu", "cuda"]))
def test_whether_the_sentence_says_a_cost_grew_always_agrees_with_the_ranges(runs, device):
    times = {(d, k): [m - lo, m, m + hi] for (d, k), (m, lo, hi) in zip([("ar", 1), ("ar", 8), ("dflash", 1),
                                                                          ("dflash", 8)], runs)}
    said = explain_cost(cost_rows(times), ["dflash"], device=device)
    for d in ("ar", "dflash"):
        small, large = spread(times[(d, 1)]), spread(times[(d, 8)])
        grew = f"for {d} (" in said.split(". ")[0] if said.startswith("Drafting cost grew") else False
        noise = re.search(rf"Within this machine's noise from k = 1 to k = 8: [^:]*\b{d} \(", said) is not None
        less = re.search(rf"Less at the larger k[^:]*: [^:]*\b{d} \(", said) is not None
        assert [grew, noise, less].count(True) == 1, said
        assert noise == within_noise(small, large)
        if not noise:
            assert grew == (large.median > small.median) and less == (large.median < small.median)
    one_pass_grew = "for dflash (" in said.split(". ")[0] and said.startswith("Drafting cost grew")
    assert ("grew with the block here" in said or "though here it grew" in said) == one_pass_grew


def counted(of_course, of_problem, spark_problem=0):
    return {"dflash": {" of course": of_course, " of problem": of_problem, " no problem": 40},
            "dspark": {" of course": 90, " of problem": spark_problem}}


OPTIONS = ["none", "a few", "about as many as “of course”"]


def test_the_answer_names_the_option_the_counts_support_on_each_side():
    assert answer(counted(60, 0), "dflash", 200, OPTIONS).startswith("**Answer: none**: dflash drew “of problem” 0 "
                                                                       "times in 200 blocks, against 60 “of course”")
    assert answer(counted(80, 35), "dflash", 200, OPTIONS).startswith("**Answer: a few**: dflash drew “of problem” 35")
    assert answer(counted(60, 35), "dflash", 200, OPTIONS).startswith("**Answer: about as many as “of course”**")
    said = answer(counted(60, 35, spark_problem=2), "dflash", 200, OPTIONS, label=str.title)
    assert "; Dspark drew it 2 times." in said and "position 2 never learns" in said
    assert "position 2 never learns" not in answer(counted(60, 0), "dflash", 200, OPTIONS)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 200), st.integers(0, 200))
def test_the_answer_s_option_always_agrees_with_the_counts(of_course, of_problem):
    said = answer(counted(of_course, of_problem), "dflash", 200, OPTIONS)
    option = re.match(r"\*\*Answer: (.*?)\*\*", said).group(1)
    assert f"drew “of problem” {of_problem} times" in said and f"against {of_course} “of course”" in said
    assert (option == "none") == (of_problem == 0)
    if of_problem:
        assert (option == OPTIONS[2]) == (of_problem >= of_course / 2)


def test_a_fall_in_acceptance_beyond_the_prompts_spread_is_called_decay_and_an_overlap_is_not():
    fell = [[0.9, 0.8, 0.5], [0.8, 0.7, 0.4], [1.0, 0.6, 0.3]]
    assert decay_note(fell, "DFlash (parallel block)") == (
        "DFlash (parallel block): conditional acceptance fell from position 1 to position 3, beyond the spread "
        "between the prompts (0.90, 0.80–1.00 over 3 prompts → 0.40, 0.30–0.50): suffix decay in this run.")
    # the source's suffix decay, not shown by this run: position 3 overlaps position 1, so no finding either way
    overlap = [[0.9, 0.8, 0.85], [0.6, 0.7, 0.5], [0.7, 0.9, 0.7]]
    assert decay_note(overlap, "DFlash") == (
        "DFlash: conditional acceptance at position 1 (0.70, 0.60–0.90 over 3 prompts) and position 3 (0.70, "
        "0.50–0.85 over 3 prompts) is within the spread between the prompts: this run shows no decay beyond it.")
    rose = [[0.3, 0.9], [0.4, 1.0]]
    assert decay_note(rose, "AR").startswith("AR: conditional acceptance rose from position 1 to position 2")
    assert decay_note(rose, "AR").endswith(": no suffix decay here.")
    # one prompt, or no round past position 1: no spread to compare
    assert "cannot say whether acceptance falls" in decay_note([[0.9, 0.5, 0.2]], "AR")
    assert "cannot say whether acceptance falls" in decay_note([[0.0, None], [0.0, None]], "AR")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=12), min_size=1, max_size=4))
def test_the_decay_note_states_only_a_direction_its_prompts_ranges_support(rounds):
    per_prompt = [conditional_acceptance(r, 4) for r in rounds]
    said = decay_note(per_prompt, "d")
    found = re.search(r"position 1 to position (\d)", said)
    if found:
        i = int(found.group(1)) - 1
        first = spread([p[0] for p in per_prompt if p[0] is not None])
        end = spread([p[i] for p in per_prompt if p[i] is not None])
        assert not within_noise(first, end)
        assert ("fell" in said) == (end.median < first.median) and ("rose" in said) == (end.median > first.median)
    else:
        assert "fell" not in said and "rose" not in said and "suffix decay in this run" not in said


def test_acceptance_by_position_is_given_pooled_and_per_prompt(models):
    measured = by_position(models, ["The best way to learn is to", "He said, he said,"], "dflash", k=3, max_new_tokens=8)
    assert len(measured["per_prompt"]) == 2 and len(measured["pooled"]) == 3
    assert all(len(p) == 3 for p in measured["per_prompt"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["ar", "dflash"]), st.floats(0.1, 20), st.floats(0, 5)), min_size=1,
                max_size=8))
def test_each_drafting_step_is_labelled_by_its_ranges_against_the_k_before(runs):
    """cost_steps: "more" or "less" only where the two ranges part, in the direction of the medians; overlapping
    ranges are noise; a drafter's first k, or a row after another drafter's, has nothing before it."""
    rows = [{"drafter": d, "k": i + 1, "spread": spread([low, low + width])} for i, (d, low, width) in enumerate(runs)]
    for before, row, said in zip([None] + rows, rows, cost_steps(rows)):
        if before is None or before["drafter"] != row["drafter"]:
            assert said == "–"
        elif within_noise(row["spread"], before["spread"]):
            assert said == "within this machine's noise"
        else:
            assert said == ("more" if row["spread"].median > before["spread"].median else "less")
