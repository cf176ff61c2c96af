"""What the cards count: the first proposal's acceptance by how the round before it ended."""
from specviz.training.cards import first_kept_after


def test_a_round_is_counted_after_the_round_before_it_in_its_own_generation():
    """Planted bugs it catches: the first round of a generation counted (it has no round before it), one
    generation's last round taken as the next one's "before", a short round (fewer than k drafted, as at the
    end of a generation) counted, and a full block told from a correction by accepted == k."""
    generations = [[(2, 2), (0, 2)],                 # after a full block: first proposal refused
                   [(0, 2), (1, 2), (1, 1)],         # after a correction: kept; the short last round is left out
                   [(1, 1), (2, 2)]]                 # a short round that kept all it drafted is a full block
    assert first_kept_after(generations, 2) == {"correction": 1.0, "full block": 0.5}


def test_no_round_of_a_kind_is_none_not_zero():
    assert first_kept_after([[(3, 3), (3, 3)]], 3) == {"correction": None, "full block": 1.0}
    assert first_kept_after([], 3) == {"correction": None, "full block": None}
