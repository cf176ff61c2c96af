"""Lessons 7 and 8's sentences about live counts and timings: planted on each side of each verdict, and
properties that the direction a sentence states always agrees with the numbers it was given."""
import re
import statistics

import pytest
from hypothesis import given, strategies as st

from specviz.lessons.cost import forwards_help, layout_gap, width_sentence


def test_fewer_forwards_and_a_surviving_prefix_are_said_only_when_the_counts_show_them():
    # a drafter that proposes nothing (prompt lookup with no match): a fixed "fewer target rounds" would lie
    assert forwards_help(32, 32, 32) == {
        "rounds": "32 target forwards, as many as plain decoding: speculation saved no target round here.",
        "per_forward": "32 tokens from 32 target forwards, one a forward: no proposal survived a check here."}
    assert forwards_help(32, 12, 32) == {
        "rounds": "12 target forwards against plain decoding's 32: fewer target rounds.",
        "per_forward": "32 tokens from 12 target forwards, more than one a forward: proposals survived the checks "
                       "(a longer surviving prefix)."}
    # catches a verdict read off the wrong side of the comparison
    assert forwards_help(32, 33, 32)["rounds"] == "33 target forwards against plain decoding's 32: more target rounds here."
    # a round that committed nothing (a stop) is not a surviving prefix
    assert forwards_help(32, 33, 32)["per_forward"].startswith("32 tokens from 33 target forwards, under one a forward")


@given(st.integers(1, 200), st.integers(1, 200), st.integers(0, 400))
def test_the_forwards_help_states_the_direction_of_its_counts(plain, rounds, tokens):
    said = forwards_help(plain, rounds, tokens)
    assert ("fewer target rounds" in said["rounds"]) == (rounds < plain)
    assert ("more target rounds" in said["rounds"]) == (rounds > plain)
    assert ("as many as plain decoding" in said["rounds"]) == (rounds == plain)
    assert ("proposals survived" in said["per_forward"]) == (tokens > rounds)



@pytest.mark.parametrize("plain, rounds, tokens, said, each", [
    (32, 31, 32, "31 target forwards against plain decoding's 32: fewer target rounds.",
     "32 tokens from 31 target forwards, more than one a forward: proposals survived the checks (a longer surviving "
     "prefix)."),
    (32, 33, 33, "33 target forwards against plain decoding's 32: more target rounds here.",
     "33 tokens from 33 target forwards, one a forward: no proposal survived a check here."),
    (32, 32, 31, "32 target forwards, as many as plain decoding: speculation saved no target round here.",
     "31 tokens from 32 target forwards, under one a forward: no proposal survived a check here."),
])
def test_one_forward_either_side_of_plain_decoding_is_fewer_or_more(plain, rounds, tokens, said, each):
    """Planted one count apart on each side (31 and 33 forwards against 32; 32 tokens from 31, 31 from 32).
    Catches `<=` or `>=` in either comparison, which would call one saved forward "as many" or one token more
    than the forwards "one a forward", and the two sides of the count swapped."""
    assert forwards_help(plain, rounds, tokens) == {"rounds": said, "per_forward": each}


@given(st.integers(1, 200), st.integers(1, 200), st.integers(0, 400))
def test_the_forwards_help_states_its_own_counts_and_a_rate_on_the_right_side_of_one(plain, rounds, tokens):
    """Every count given is the count stated, and the rate a forward ("more than one", "one", "under one")
    agrees with tokens against forwards. Catches the plain count stated as the speculative one and a
    "one a forward" said of a run that committed fewer tokens than it ran forwards (a stop)."""
    said = forwards_help(plain, rounds, tokens)
    assert said["rounds"].startswith(f"{rounds} target forwards")
    assert (f"plain decoding's {plain}:" in said["rounds"]) == (rounds != plain)
    assert said["per_forward"].startswith(f"{tokens} tokens from {rounds} target forwards, ")
    rate = re.match(r".*?target forwards, (more than one|one|under one) a forward", said["per_forward"]).group(1)
    assert rate == ("more than one" if tokens > rounds else "one" if tokens == rounds else "under one")

def test_the_width_probe_says_whether_a_wider_check_shared_its_cost():
    rows = [{"width": w, "relative": r} for w, r in [(1, 1.0), (4, 1.3), (16, 2.5)]]
    assert width_sentence(rows) == ("Checking **16 tokens costs 2.50×** a one-token step here (on the fitted line): "
                                    "less than the 16 steps of checking them one at a time, 0.16 of a step a token.")
    # a machine whose check grows as fast as its width shares nothing: never "less"
    rows[-1]["relative"] = 16.0
    assert width_sentence(rows) == ("Checking **16 tokens costs 16.00×** a one-token step here (on the fitted line): "
                                    "no less than the 16 steps of checking them one at a time, so on this machine a "
                                    "wider check shares nothing.")


@given(st.integers(2, 64), st.floats(1.0, 100.0))
def test_the_width_sentence_calls_a_check_cheaper_only_below_its_width(width, relative):
    said = width_sentence([{"width": 1, "relative": 1.0}, {"width": width, "relative": relative}])
    assert said.startswith(f"Checking **{width} tokens costs {relative:.2f}×**")
    assert (": less than" in said) == (relative < width)


def test_the_layout_gap_is_the_widest_ratio_timed_and_where_it_fell():
    layouts = [{"layer": "384 → 1152", "layers": 4, "rows": 1, "as stored, µs": 12, "Wᵀ copy, µs": 13,
                "W·xᵀ, µs": 12, "oneDNN packed, µs": 11, "in use": "oneDNN packed"},
               {"layer": "384 → 6144", "layers": 1, "rows": 5, "as stored, µs": 40, "Wᵀ copy, µs": 170,
                "W·xᵀ, µs": 85, "oneDNN packed, µs": 50, "in use": "as stored"}]
    assert layout_gap(layouts) == ("On this machine the layouts of one shape and row count differ by up to **4.2×** "
                                   "(the 384 → 6144 layer at 5 rows).")
    # layouts within a few percent: the page must not say "3×"
    assert "**1.2×**" in layout_gap(layouts[:1])


@given(st.lists(st.lists(st.integers(1, 1000), min_size=2, max_size=4), min_size=1, max_size=6))
def test_the_layout_gap_stated_is_the_largest_in_the_table(times):
    layouts = [{"layer": f"{i} → 8", "rows": 1, **{f"layout {j}, µs": t for j, t in enumerate(ts)}}
               for i, ts in enumerate(times)]
    text = layout_gap(layouts)
    kept = [[t for t in ts if t < 10 * statistics.median(ts)] for ts in times]   # 10x the row's median: a busy moment
    said = float(re.search(r"\*\*([\d.]+)×\*\*", text).group(1))
    assert said == round(max(max(ts) / min(ts) for ts in kept), 1)
    for ts, k in zip(times, kept):            # and every reading left out of the ratio is named
        assert all(f"{t:,} µs" in text for t in ts if t not in k)
