"""Lesson 4's sentence about its live allocation under load: planted allocations on each side."""
from hypothesis import given, strategies as st

from specviz.lessons import budget


def rows(first: list[int]) -> list[dict]:
    """by_load rows where request 1 gets `first[i]` proposals with i + 1 requests."""
    return [{"requests": i + 1, "lengths": [n] + [0] * i} for i, n in enumerate(first)]


def test_the_answer_under_load_says_what_request_1_was_admitted():
    assert budget.load_answer(rows([4, 3, 3, 1])) == (
        "Measured here: request 1 had 4 → 3 → 3 → 1 proposals admitted as 1 to 4 requests shared the target: "
        "less under load.")
    assert budget.load_answer(rows([2, 2, 2])).endswith("the same at every load here.")
    assert budget.load_answer(rows([2, 1, 2])).endswith(
        "not always less: it rose at some load, which a noisy profile can cause.")


@given(st.lists(st.integers(0, 6), min_size=1, max_size=8))
def test_the_answer_under_load_agrees_with_the_numbers(first):
    said = budget.load_answer(rows(first))
    rose = any(b > a for a, b in zip(first, first[1:]))
    assert ("not always less" in said) == rose
    assert ("less under load" in said) == (not rose and first[-1] < first[0])
    assert " → ".join(map(str, first)) in said


def test_the_answer_s_first_words_are_what_request_1_was_admitted():
    # a fixed "usually less" above a measured "it rose" is the contradiction this heading replaces
    assert budget.load_heading(rows([4, 3, 3, 1])) == "**Answer, measured here: less.**"
    assert budget.load_heading(rows([2, 2, 2])) == "**Answer, measured here: the same.**"
    assert budget.load_heading(rows([2, 1, 2])) == "**Answer, measured here: not always less.**"
    assert budget.load_heading(rows([3])) == "**Answer, measured here: the same.**"   # one load: nothing moved


@given(st.lists(st.integers(0, 6), min_size=1, max_size=8))
def test_the_answer_s_first_words_agree_with_the_sentence_below_them(first):
    heading, said = budget.load_heading(rows(first)), budget.load_answer(rows(first))
    assert ("not always less" in heading) == ("not always less" in said)
    assert heading.endswith(": less.**") == (not any(b > a for a, b in zip(first, first[1:])) and first[-1] < first[0])
    assert heading.endswith("the same.**") == ("the same at every load" in said)
