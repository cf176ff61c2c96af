"""The ratio-and-residual rule rebuilds p exactly; both couplings emit p; real p and q load."""
import pytest

from specviz.lessons.coupling import (acceptance_rate, check_distribution, coarse, histogram, next_token_distributions,
                              rebuild, simulate)
from specviz.generator.sampling import SamplingSettings


def test_the_seeds_04_02_example_accepts_half():
    r = rebuild([0.2, 0.8], [0.4, 0.6])
    assert r["accepted"][0] == pytest.approx(0.4 * 0.5)
    assert r["rebuilt"] == pytest.approx([0.2, 0.8])


@pytest.mark.parametrize("p,q", [([0.6, 0.3, 0.1], [0.2, 0.3, 0.5]), ([1.0, 0.0], [0.5, 0.5]),
                                 ([0.25] * 4, [0.25] * 4)])
def test_min_plus_residual_rebuilds_p(p, q):
    assert rebuild(p, q)["rebuilt"] == pytest.approx(p)


def test_acceptance_differs_between_the_couplings():
    p, q = [0.7, 0.3], [0.5, 0.5]
    assert acceptance_rate(p, q, "ratio") == 0.8 and acceptance_rate(p, q, "match") == 0.5


@pytest.mark.parametrize("rule", ["ratio", "match"])
def test_both_couplings_emit_the_target_distribution(rule):
    p, q = [0.6, 0.3, 0.1], [0.2, 0.3, 0.5]
    s = simulate(p, q, 40000, rule, seed=11)
    assert histogram(s["outputs"], 3) == pytest.approx(p, abs=0.01)
    assert sum(s["accepted"]) / 40000 == pytest.approx(acceptance_rate(p, q, rule), abs=0.01)


def test_typed_distributions_are_checked_and_normalised():
    assert check_distribution([1, 3], "p") == [0.25, 0.75]
    with pytest.raises(ValueError, match="non-negative"):
        check_distribution([-1, 2], "q")


def test_real_distributions_after_a_prompt(models):
    p, q = next_token_distributions(models, "The best way to learn is to", "ar", SamplingSettings(temperature=1.0))
    assert float(p.sum()) == pytest.approx(1, abs=1e-4) and float(q.sum()) == pytest.approx(1, abs=1e-4)
    d = coarse(p, q, models.token_text, n=3)
    assert d["labels"][-1] == "(other)" and sum(d["p"]) == pytest.approx(1, abs=1e-4)
    assert 3 <= len(d["ids"]) - 1 <= 6
    kept = coarse(p, q, models.token_text, n=3, other=False)
    assert "(other)" not in kept["labels"] and sum(kept["q"]) == pytest.approx(1)
    assert kept["ids"] == d["ids"][:-1]
