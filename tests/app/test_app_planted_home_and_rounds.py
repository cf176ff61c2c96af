"""AppTests that plant a measurement in st.session_state and read the sentence the page draws from it:
the home race's answer and "Same text" line, its race sentence, and the fastest setting's caption."""
from appkit import drafter_label
from specviz.lessons import race
from specviz.lessons.protocol import Spread, spread
from tests.app.test_app_pages import open_page, predict, text

VERDICT = {"tokens_per_round": 2.0, "round_in_steps": 1.6, "wins": True}


def planted_race(at, plain: list[str], spec: list[str], runs=(1.21, 1.30, 1.42)):
    """A finished race in session_state, as pages/home.py stores one, with these two token texts."""
    lanes = [("plain decoding", [(t, "bonus") for t in plain], 10.0, 10.0 * len(plain)),
             ("speculative", [(t, "accepted") for t in spec], 8.0, 8.0 * len(spec))]
    at.session_state["home_race"] = {"lanes": lanes, "speedup": spread(runs), "verdict": VERDICT,
                                     "threads": {"threads": 2, "cores": 2}}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def answers(at) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("**Answer")]


def test_a_race_whose_texts_are_the_same_is_answered_the_same_and_says_so():
    at = planted_race(predict(open_page(), "home", "yes, token for token"), [" The", " cat"], [" The", " cat"])
    assert [a.split(" With greedy")[0] for a in answers(at)] == [
        "**Answer: the same**, and this race shows it: token for token."]
    assert "**Same text:** yes, token for token." in text(at)


def test_a_race_whose_texts_part_is_never_answered_a_plain_the_same():
    """A planted race whose speculative text flipped token 3 (markup in it, which must stay text).
    Catches the fixed "Answer: the same." above a "Same text: no", and a "no" that says nowhere where."""
    at = planted_race(predict(open_page(), "home", "mostly, a few words differ"),
                      [" The", " cat", " sat", " down"], [" The", " cat", " <b>**ran**", " off"])
    said = answers(at)
    assert len(said) == 1 and said[0].startswith(
        "**Answer: the same in exact arithmetic, but not in this race**: its texts part at token 3, where the "
        "numerics flipped a greedy token.")
    assert "**Answer: the same.**" not in text(at)
    assert (r"**Same text:** no. The texts part at token 3: plain decoding chose '␣sat', speculative decoding "
            r"'␣&lt;b&gt;\*\*ran\*\*'.") in text(at)
    assert "yes, token for token" not in text(at)


def test_home_calls_a_planted_setting_the_fastest_only_when_its_range_clears_the_others():
    """Two planted measurements of "Find the fastest setting": one clear of every other setting, one whose
    runner-up's range overlaps it. Catches a caption that says "the fastest" from the median alone."""
    at = predict(open_page(), "home", "yes, token for token")
    for runner_up, fastest in [(Spread(1.10, 1.00, 1.20, 3), True), (Spread(1.35, 1.25, 1.45, 3), False)]:
        best = {"drafter": "dspark", "block_size": 4, "speedup": Spread(1.40, 1.30, 1.50, 3), "tokens": 24,
                "tried": {"dspark k=4": Spread(1.40, 1.30, 1.50, 3), "ar k=2": runner_up}}
        at.session_state["home_fastest"] = best
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        caption = [c.value for c in at.caption if c.value.startswith("Measured on this machine just now")]
        assert caption == [race.fastest_caption(best, drafter_label)]
        assert ("was the fastest" in caption[0]) == fastest
        assert ("within this machine's noise" in caption[0]) == (not fastest)
        assert (f"{drafter_label('ar')} at k = 2 (1.35×" in caption[0]) == (not fastest)
