"""AppTests that plant a measurement and read the sentence the page draws from it: on home (planted in
st.session_state) the race's answer and "Same text" line and the fastest setting's caption; in lesson 1
(planted through the page's own trace upload) DLoop's gate row."""
from streamlit.testing.v1 import AppTest

from appkit import drafter_label
from specviz.generator.engine import Generation
from specviz.generator.models import load_embedded
from specviz.generator.settings import Settings
from specviz.lessons import home
from specviz.lessons.presets import PRESETS
from specviz.lessons.inside import gate_reason
from specviz.lessons.protocol import Spread, spread
from tests.app.test_app_lesson1 import APP, PAGE, html, press
from tests.app.test_app_pages import open_page, predict, text

VERDICT = {"tokens_per_round": 2.0, "round_in_steps": 1.6, "wins": True}


def planted_race(at, plain: list[str], spec: list[str], runs=(1.21, 1.30, 1.42), prompt: str = PRESETS[0]):
    """A finished race in session_state, as course_pages/home.py stores one, with these two token texts."""
    lanes = [("plain decoding", [(t, "bonus") for t in plain], 10.0, 10.0 * len(plain)),
             ("speculative", [(t, "accepted") for t in spec], 8.0, 8.0 * len(spec))]
    at.session_state["home_race"] = {"lanes": lanes, "speedup": spread(runs), "verdict": VERDICT,
                                     "threads": {"threads": 2, "cores": 2}, "prompt": prompt}
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


def test_a_race_on_a_prompt_the_models_cannot_continue_says_so_above_its_lanes():
    """A planted race on markup and an emoji whose lanes repeat one piece, as the embedded models do there.
    Planted bug it catches: lanes of "~~~~" (or "<all> <all> <all>") with no word of why; and a note over a
    race whose text reads."""
    prompt = "<script>alert(1)</script> 🙂"
    at = planted_race(predict(open_page(), "home", "yes, token for token"), ["~"] * 20, ["~"] * 20, prompt=prompt)
    said = [w.value for w in at.warning if "cannot continue this prompt as text" in w.value]
    assert len(said) == 1 and "markup ('&lt;script&gt;', '&lt;/script&gt;') and emoji or symbols ('🙂')" in said[0]
    at = planted_race(at, [" The", " cat", " sat"] * 5, [" The", " cat", " sat"] * 5 + [" down"] * 3)
    assert not [w for w in at.warning if "cannot continue" in w.value]


def test_home_says_a_planted_race_level_with_plain_decoding_is_noise_and_not_on_both_sides():
    """Races at 0.85×, 0.90× and exactly 1.00×: none was faster, none lost by all of them. Catches "fell on
    both sides of 1×" said of races none of which was above it."""
    at = planted_race(predict(open_page(), "home", "yes, token for token"), [" a"], [" a"], runs=(0.85, 0.90, 1.00))
    said = [i.value for i in at.info if "within this machine's noise" in i.value]
    assert len(said) == 1 and said[0].startswith(
        "Faster or slower here is **within this machine's noise**: none of the 3 races was faster than plain "
        "decoding, and the fastest ran level with it (1×).")
    assert "both sides" not in said[0]


def test_home_calls_a_planted_setting_the_fastest_only_when_its_range_clears_the_others():
    """Two planted measurements of "Find the fastest setting": one clear of every other setting, one whose
    runner-up's range overlaps it. Catches a caption that says "the fastest" from the median alone."""
    at = predict(open_page(), "home", "yes, token for token")
    for runner_up, fastest in [(Spread(1.10, 1.00, 1.20, 3), True), (Spread(1.35, 1.25, 1.45, 3), False)]:
        best = {"drafter": "dspark", "k": 4, "speedup": Spread(1.40, 1.30, 1.50, 3), "tokens": 24,
                "tried": {"dspark k=4": Spread(1.40, 1.30, 1.50, 3), "ar k=2": runner_up}}
        at.session_state["home_fastest"] = best
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        caption = [c.value for c in at.markdown if c.value.startswith("Measured on this machine just now")]
        assert caption == [home.fastest_caption(best, drafter_label)]
        assert ("was the fastest" in caption[0]) == fastest
        assert ("within this machine's noise" in caption[0]) == (not fastest)
        assert (f"{drafter_label('ar')} at k = 2 (1.35×" in caption[0]) == (not fastest)


def test_lesson1_s_gate_row_states_what_a_planted_dloop_round_s_numbers_say():
    """Two DLoop traces planted through the page's own upload: one whose gate can never open (g = 0: a sum of
    log q is below it unless every proposal was certain), one whose gate always opens (g = −1000) until the
    stage limit S = 2. The gate row reads each round's numbers. Catches a row that writes its comparison from
    the record's flag, or that says "draft another stage" on the last stage S allows."""
    models = load_embedded()
    at = AppTest.from_file(APP, default_timeout=120).run().switch_page(PAGE).run()
    for g, opens in [(0.0, False), (-1000.0, True)]:
        trace = Generation(models, "The best way to learn is to",
                           Settings.greedy("dloop", 4, k=2, loop_threshold=g, max_stages=2)).run()
        at.file_uploader(key="draft_upload").set_value((f"g{g}.json", trace.to_json().encode(),
                                                         "application/json")).run()
        assert not at.error, [e.value for e in at.error]
        press(at, "Next round")
        stages = trace.rounds[0].drafter_info["stages"]
        body = html(at)
        for i, s in enumerate(stages, 1):
            reason = gate_reason(i, s["logprob_sum"], g, 2).replace("<", "&lt;")
            assert reason in body, (g, reason)
            assert reason.startswith("draft another stage") == (opens and i == 1)
        assert len(stages) == (2 if opens else 1)
        assert ("&lt; g = " in body) == (not opens) and ("S = 2 stages is the limit" in body) == opens
