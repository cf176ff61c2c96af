"""The stopping scheduler and the Appendix A counterexample: the source's p, q and 0.85, and this
app's worked example for the scheduler's numbers."""
import pytest

from specviz.lessons.admission import (APPENDIX_A, POLICIES, WORKED_EXAMPLE, algorithm1, bias, exact_p_a,
                                       retrospective_terms, running_frequency, simulate, survival)

SPS = WORKED_EXAMPLE["sps"]


def test_prefix_survival_multiplies_conditional_confidences():
    assert survival([0.8, 0.9, 0.5]) == pytest.approx([0.8, 0.72, 0.36])


def test_appendix_a_thetas_when_the_first_token_gives_c2_09():
    r = algorithm1([[0.8, 0.9]], SPS, stop_at_first_non_improvement=False)
    assert r["theta0"] == pytest.approx(1.0)
    assert [s.theta for s in r["steps"]] == pytest.approx([0.9, 1.134])
    assert r["lengths"] == [2]


def test_appendix_a_thetas_when_the_first_token_gives_c2_0():
    r = algorithm1([[0.8, 0.0]], SPS, stop_at_first_non_improvement=False)
    assert [s.theta for s in r["steps"]] == pytest.approx([0.9, 0.81])
    assert r["lengths"] == [0]


@pytest.mark.parametrize("c2", [0.9, 0.0])
def test_the_stop_at_the_first_non_improvement_never_reads_c2(c2):
    r = algorithm1([[0.8, c2]], SPS)
    assert len(r["steps"]) == 1 and r["steps"][0].theta == pytest.approx(0.9)
    assert r["lengths"] == [0]


def test_candidates_are_admitted_across_requests_by_descending_survival():
    # a later token of a strong request outranks an early token of a doubtful one
    r = algorithm1([[0.95, 0.95], [0.3]], [2.0, 1.9, 1.8, 1.7, 1.5])   # 4.15 * 1.5 < 3.85 * 1.7
    order = [(s.request, s.position) for s in r["steps"]]
    assert order[:2] == [(0, 1), (0, 2)]
    assert r["lengths"] == [2, 0]


def test_sps_table_must_cover_the_anchors():
    with pytest.raises(ValueError, match="SPS"):
        algorithm1([[0.5], [0.5]], [1.0])


def test_retrospective_admission_gives_085_not_07():
    assert exact_p_a("retrospective") == pytest.approx(0.5 * 1 + 0.5 * 0.7) == pytest.approx(0.85)


@pytest.mark.parametrize("policy", ["non_anticipating", "two_steps_earlier"])
def test_non_anticipating_policies_keep_the_target_probability(policy):
    assert exact_p_a(policy) == pytest.approx(0.7)


@pytest.mark.parametrize("policy", POLICIES)
def test_simulation_converges_to_the_exact_value(policy):
    freq = running_frequency(simulate(policy, 40000, seed=7))[-1]
    assert freq == pytest.approx(exact_p_a(policy), abs=0.01)


def test_simulation_with_edited_distributions_matches_the_formula():
    p, q = (0.3, 0.7), (0.6, 0.4)   # the drafter over-proposes A: A survives with 0.3/0.6
    expected = 0.6 * 0.5 + 0.4 * 0.3
    assert exact_p_a("retrospective", p, q) == pytest.approx(expected)
    freq = running_frequency(simulate("retrospective", 40000, p, q, seed=3))[-1]
    assert freq == pytest.approx(expected, abs=0.01)


def test_distributions_are_validated():
    with pytest.raises(ValueError, match="sum to 1"):
        exact_p_a("retrospective", (0.7, 0.7), (0.5, 0.5))
    with pytest.raises(ValueError, match="policy"):
        exact_p_a("clairvoyant")


def test_padding_back_to_the_original_width_wastes_every_slot_the_scheduler_saved():
    """The source pads "back to the original width" (anchor + k proposals), not to the widest admitted draft:
    admissions [1, 1, 0] at k = 4 waste 10 slots, where padding to the widest admitted counted 1."""
    from specviz.lessons.budget import by_load, padding
    assert padding([3, 0, 1], 4) == {"ragged": 7, "padded": 15, "wasted": 8}
    assert padding([1, 1, 0], 4) == {"ragged": 5, "padded": 15, "wasted": 10}
    rows = by_load([[0.9, 0.9], [0.2, 0.1]], [10.0, 9.5, 9.0, 8.0, 7.0, 6.0])
    assert [r["requests"] for r in rows] == [1, 2] and rows[0]["lengths"] == [2]
    assert all(r["padded"] == r["requests"] * 3 for r in rows)     # k = 2: three slots a request


def test_the_sources_numbers_give_the_sources_085():
    p, q = APPENDIX_A["p"], APPENDIX_A["q"]
    assert exact_p_a("retrospective", p, q) == APPENDIX_A["p_a_retrospective"] == 0.85
    assert exact_p_a("non_anticipating", p, q) == p[0] == 0.7


def test_the_answer_writes_the_source_terms_that_add_to_085():
    """0.5 · min(1, 0.7/0.5) + 0.5 · 0.7 = 0.85. Catches a kept share written as p/q uncapped (1.4)
    or terms that no longer add up to the P(A) the metrics show."""
    t = retrospective_terms(APPENDIX_A["p"], APPENDIX_A["q"])
    assert (t["q_a"], t["kept"], t["q_b"], t["p_a"]) == (0.5, 1.0, 0.5, 0.7)
    assert t["p_of_a"] == APPENDIX_A["p_a_retrospective"] == t["q_a"] * t["kept"] + t["q_b"] * t["p_a"]


def test_the_kept_share_is_below_one_where_the_drafter_overproposes_a():
    """p(A) = 0.3 under q(A) = 0.6: an A is kept half the time, and P(A) = 0.6 · 0.5 + 0.4 · 0.3 = 0.42."""
    t = retrospective_terms((0.3, 0.7), (0.6, 0.4))
    assert t["kept"] == pytest.approx(0.5) and t["p_of_a"] == pytest.approx(0.42)


@pytest.mark.parametrize("p_of_a, target, expected", [(0.85, 0.7, 0.15), (0.6, 0.7, -0.1), (0.7, 0.7, None),
                                                      (0.7 + 1e-12, 0.7, None)])
def test_bias_is_signed_and_none_for_the_target_itself(p_of_a, target, expected):
    """Catches an unsigned bias (a policy below the target drawn as above it) and a rounding residue
    drawn as a bias of +1e-12."""
    off = bias(p_of_a, target)
    assert off == (None if expected is None else pytest.approx(expected))
