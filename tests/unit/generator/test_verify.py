"""The acceptance rules, checked exactly: greedy n_matches, and both sampling verifiers
reproduce the target distribution p by enumerating every outcome on small vocabularies."""
import itertools

import pytest
import torch

from specviz.generator.verify import (accept_probability, greedy_matches, residual, speculative_sampling,
                            target_draw_matching)


def test_seed_example_accepts_half_when_drafter_doubles_the_target():
    # the drafter proposes a token with probability 0.4, the target wants 0.2
    assert accept_probability(0.2, 0.4) == 0.5
    assert 0.4 * accept_probability(0.2, 0.4) == pytest.approx(0.2)


def test_a_token_the_target_likes_more_is_always_accepted():
    assert accept_probability(0.6, 0.3) == 1.0


@pytest.mark.parametrize("p_x", [0.0, 1e-30, 0.3, 1.0])
def test_a_token_both_sides_give_the_same_probability_is_kept_even_at_zero(p_x):
    # min(1, p/q) is 1 where p = q, and the rule is total: a proposal both sides give probability 0
    # (a one-hot q on a token the target's top-k has dropped, rounded to zero) is not a division by zero
    assert accept_probability(p_x, p_x) == 1.0


@pytest.mark.parametrize("proposed,choice,hit_stop,expected", [
    ([5, 7, 9], [5, 7, 9, 2], False, 3),      # all match: n = k, then a bonus
    ([5, 7, 9], [5, 8, 9, 2], False, 1),      # a later match after a mismatch does not count
    ([5, 7, 9], [1, 7, 9, 2], False, 0),
    ([5, 7, 9], [5, 7, 9, 2], True, 2),       # stop rule: all matched at a stop -> drop one
    ([5, 7, 9], [5, 7, 1, 2], True, 2),       # stop rule only when all matched
    ([], [4], False, 0),                      # no proposals: plain decoding
    ([], [4], True, 0),                       # plain decoding at the length limit: nothing to drop
    ([5], [5, 2], True, 0),                   # one proposal, matched, at a stop: the target supplies it
])
def test_greedy_n_matches_follows_transformers_4_46(proposed, choice, hit_stop, expected):
    out = greedy_matches(proposed, choice, hit_stop)
    assert out["n_matches"] == expected
    # the rule drops a match only where there is one to drop: a whole, non-empty block matched at a stop
    assert out["stop_rule_applied"] == (hit_stop and proposed != [] and proposed == choice[:len(proposed)])


def test_greedy_record_shows_the_cumsum_of_mismatches():
    out = greedy_matches([5, 7, 9], [5, 8, 9, 2], False)
    assert out["mismatch"] == [0, 1, 0] and out["cumsum"] == [0, 1, 1]


def test_residual_is_the_normalised_positive_part():
    p, q = torch.tensor([0.2, 0.5, 0.3]), torch.tensor([0.4, 0.2, 0.4])
    assert residual(p, q).tolist() == pytest.approx([0.0, 1.0, 0.0])


def first_token_distribution_speculative(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Exact law of the first emitted token: enumerate the proposal x ~ q, accept or reject."""
    out = torch.zeros_like(p)
    for x in range(len(p)):
        a = accept_probability(float(p[x]), float(q[x]))
        # accepted: the emitted token is x; rejected: drawn from the residual
        out[x] += q[x] * a
        out += q[x] * (1 - a) * residual(p, q)
    return out


VOCABS = [
    (torch.tensor([0.2, 0.8]), torch.tensor([0.4, 0.6])),                 # the seed's 0.2 vs 0.4
    (torch.tensor([0.7, 0.3]), torch.tensor([0.5, 0.5])),                 # DSpark's Appendix A pair
    (torch.tensor([0.1, 0.6, 0.3]), torch.tensor([0.5, 0.25, 0.25])),
    (torch.tensor([0.25, 0.25, 0.5, 0.0]), torch.tensor([0.0, 0.5, 0.2, 0.3])),  # disjoint support
    (torch.tensor([0.3, 0.7]), torch.tensor([0.3, 0.7])),                 # equal: never rejects
]


@pytest.mark.parametrize("p,q", VOCABS)
def test_speculative_sampling_reproduces_p_exactly(p, q):
    assert first_token_distribution_speculative(p, q).tolist() == pytest.approx(p.tolist(), abs=1e-7)


def test_a_wrong_rule_is_caught():
    # accepting every proposal would emit q, not p: the enumeration would see it
    p, q = VOCABS[0]
    wrong = q.clone()
    assert not torch.allclose(wrong, first_token_distribution_speculative(p, q))


@pytest.mark.parametrize("p,q", VOCABS)
def test_speculative_sampling_function_uses_the_ratio(p, q):
    # drive the real function with draws just below and just above the acceptance ratio
    for x in range(len(p)):
        if q[x] == 0:
            continue
        a = accept_probability(float(p[x]), float(q[x]))
        low, high = max(0.0, a - 1e-9), min(a, 1 - 1e-12)   # uniform draws lie in [0, 1)
        assert speculative_sampling([x], [p, p], [q], [low])[0] == (1 if a > 0 else 0)
        assert speculative_sampling([x], [p, p], [q], [high])[0] == (1 if a >= 1 else 0)


def test_two_position_block_law_is_the_target_joint():
    """Enumerate x1, x2 ~ q and the target draws: the first two emitted tokens follow p1 * p2.

    p at the second position depends on the first token, as a real model's would."""
    V = 3
    q1 = torch.tensor([0.5, 0.3, 0.2])
    q2 = {a: torch.tensor([0.2, 0.2, 0.6]) for a in range(V)}
    p1 = torch.tensor([0.2, 0.5, 0.3])
    p2 = {0: torch.tensor([0.1, 0.1, 0.8]), 1: torch.tensor([0.6, 0.3, 0.1]), 2: torch.tensor([0.3, 0.4, 0.3])}
    joint = torch.zeros(V, V)
    for x1, x2 in itertools.product(range(V), repeat=2):
        w = float(q1[x1] * q2[x1][x2])
        a1 = accept_probability(float(p1[x1]), float(q1[x1]))
        # rejected at 1: first token from the residual, second token a fresh target step
        for y in range(V):
            joint[y] += w * (1 - a1) * residual(p1, q1)[y] * p2[y]
        a2 = accept_probability(float(p2[x1][x2]), float(q2[x1][x2]))
        joint[x1, x2] += w * a1 * a2
        joint[x1] += w * a1 * (1 - a2) * residual(p2[x1], q2[x1])
    expected = torch.stack([p1[a] * p2[a] for a in range(V)])
    assert joint.flatten().tolist() == pytest.approx(expected.flatten().tolist(), abs=1e-7)


@pytest.mark.parametrize("p,q", VOCABS)
def test_target_draw_matching_reproduces_p_exactly(p, q):
    """Enumerate the proposal x ~ q and the target's draw y ~ p: the emitted token is always y."""
    out = torch.zeros_like(p)
    for x, y in itertools.product(range(len(p)), repeat=2):
        n, _ = target_draw_matching([x], [y, 0])
        emitted = x if n == 1 else y
        out[emitted] += q[x] * p[y]
    assert out.tolist() == pytest.approx(p.tolist(), abs=1e-7)


def test_the_two_couplings_accept_at_different_rates():
    """Same output law, different acceptance, on DSpark's Appendix A pair p = (0.7, 0.3), q = (0.5, 0.5):
    the ratio rule keeps a proposal with probability sum min(p, q) = 0.8, matching sum p * q = 0.5.

    Both rates come from the verifiers themselves: every proposal x ~ q, with a grid of 1000
    uniform draws (exact here: the ratios 1 and 0.6 fall on it) or every target draw y ~ p."""
    p, q = VOCABS[1]
    grid = [(i + 0.5) / 1000 for i in range(1000)]
    ratio_rate = sum(float(q[x]) * sum(speculative_sampling([x], [p, p], [q], [u])[0] for u in grid) / 1000
                     for x in range(2))
    match_rate = sum(float(q[x] * p[y]) * target_draw_matching([x], [y, 0])[0]
                     for x, y in itertools.product(range(2), repeat=2))
    assert ratio_rate == pytest.approx(0.8) and match_rate == pytest.approx(0.5)
