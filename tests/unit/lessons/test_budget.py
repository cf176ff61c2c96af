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


def test_the_reason_under_load_says_admitted_per_request_fell_only_when_it_did():
    # catches a fixed "usually gives less" beside a table whose per-request mean did not fall
    fell = [{"requests": 1, "lengths": [4]}, {"requests": 2, "lengths": [3, 1]}, {"requests": 3, "lengths": [1, 1, 0]}]
    assert budget.per_request(fell) == [4.0, 2.0, 2 / 3]
    assert budget.load_reason(fell).startswith("Admitted per request fell here, 4 → 2 → 0.67 as 1 to 3 requests")
    level = [{"requests": 1, "lengths": [2]}, {"requests": 2, "lengths": [2, 2]}]
    assert budget.load_reason(level).startswith("Admitted per request did not fall here (2 → 2 from 1 to 2 requests)")
    rose = [{"requests": 1, "lengths": [1]}, {"requests": 2, "lengths": [1, 3]}]
    assert budget.load_reason(rose).startswith("Admitted per request did not fall here (1 → 2 from 1 to 2 requests)")
    assert "fell" not in budget.load_reason(rose)


def test_the_reason_with_one_request_claims_no_trend():
    # catches a verdict read off a single row, where nothing could have moved
    said = budget.load_reason([{"requests": 1, "lengths": [3]}])
    assert said.startswith("With one live request there is no load to compare")
    assert "fell" not in said and "did not fall" not in said


@given(st.lists(st.lists(st.integers(0, 6), min_size=1, max_size=1), min_size=2, max_size=6))
def test_the_reason_under_load_agrees_with_the_per_request_means(extra):
    # rows of growing load where each new request brings one more planted length
    load = [{"requests": i + 1, "lengths": [n for x in extra[:i + 1] for n in x]} for i in range(len(extra))]
    means = budget.per_request(load)
    assert budget.load_reason(load).startswith("Admitted per request fell here") == (means[-1] < means[0])


def test_the_padding_note_pads_back_to_the_original_width_as_the_source_says():
    """Catches "padding every request back to the widest admitted draft": the source pads "back to the original
    width", so with admissions [1, 1, 0] at k = 4 padding spends all 10 slots the scheduler saved, not 1."""
    load = budget.by_load([[0.9, 0.1, 0.1, 0.1]] * 2 + [[0.01] * 4], [100.0] * 5 + [1.0] * 10)
    assert [row["lengths"] for row in load][-1] == [1, 1, 0]
    said = budget.padding_note(load)
    assert said.startswith("Padding every shortened request back to the original width, 5 slots (its anchor and "
                           "all 4 proposals), would spend 10 of 15 slots at 3 requests on nothing: every slot the "
                           "scheduler saved")
    assert ("*How speculative decoding checks ahead*: “Padding every shortened request back to the original width "
            "can spend the slots the scheduler intended to save”") in said
    assert "widest admitted" not in said
    whole = [{"requests": 2, "lengths": [2, 2], "k": 2, "padded": 6, "wasted": 0}]
    assert budget.padding_note(whole) == ("Padding wasted no slot at 2 requests here: the scheduler admitted every "
                                          "request its whole draft.")


@given(st.lists(st.integers(0, 6), min_size=1, max_size=6), st.integers(0, 3))
def test_the_padding_note_counts_the_heaviest_load_s_own_wasted_slots(lengths, more):
    """For any admitted lengths at the heaviest load, k proposals drafted each: the wasted slots stated are
    k + 1 times the requests less the ragged slots, and "no slot" only where every request got its whole draft.
    Catches a count from another load, or padding to the widest admitted draft."""
    k = max(lengths) + more
    row = {"requests": len(lengths), "lengths": lengths, "k": k, **budget.padding(lengths, k)}
    said = budget.padding_note([{"requests": 1, "lengths": [9], "k": 9, **budget.padding([9], 9)}, row])
    assert row["wasted"] == (k + 1) * len(lengths) - sum(n + 1 for n in lengths)
    assert ("wasted no slot" in said) == all(n == k for n in lengths)
    if not all(n == k for n in lengths):
        assert f"spend {row['wasted']} of {row['padded']} slots at {len(lengths)} requests" in said
