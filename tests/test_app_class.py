"""A class in AppTest: a presenter and followers in one server process (one Classroom).

The presenter starts a class on lesson 1, followers open the class link, the presenter steps,
the followers show the same round and phase from the presenter's recorded trace, each votes
once, the presenter sees the count and reveals, and every follower then sees the answer with
the class's distribution. Browsers and two server processes are in test_browser_class.py.
"""
from streamlit.testing.v1 import AppTest

from tests.test_app_pages import APP, button


def presenter_on_lesson1() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.session_state["keep_presenter"] = True
    at.run()
    at.switch_page("pages/draft_and_verify.py").run()
    button(at, "Start a class").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def follower(code: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["class"] = code
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_followers_show_the_presenters_round_vote_once_and_see_the_reveal():
    teacher = presenter_on_lesson1()
    code = teacher.session_state["class_lead"]["code"]
    assert any(f"Class {code}" in m.value for m in teacher.markdown)
    students = [follower(code) for _ in range(3)]
    for s in students:
        assert s.session_state["l1"]["trace"].new_ids == teacher.session_state["l1"]["trace"].new_ids[:len(
            s.session_state["l1"]["trace"].new_ids)]
    button(teacher, "Next phase").click().run()            # round 1, draft: the prediction is open
    for s in students:
        s.run()
        assert s.session_state["l1"]["cursor"] == teacher.session_state["l1"]["cursor"]
        assert not any(b.label == "Reveal" for b in s.button)     # only the presenter reveals
    key = "keep_predict_l1_0"
    for s, choice in zip(students, [1, 1, 2]):
        s.radio(key=key).set_value(choice).run()
        assert s.radio(key=key).disabled                     # one vote: the choice is locked once counted
    teacher.run()
    said = "\n".join(m.value for m in teacher.markdown)
    assert "**The class answered** (3 votes)" in said and "1: 2" in said and "2: 1" in said
    teacher.button(key="predict_reveal_l1_0").click().run()
    for s in students:
        s.run()
        assert s.session_state["l1"]["cursor"] == teacher.session_state["l1"]["cursor"]
        shown = "\n".join(m.value for m in s.markdown)
        assert "the target kept" in shown and "**The class answered** (3 votes)" in shown


def test_an_unknown_or_malformed_class_code_is_named_and_the_page_still_works():
    for code, message in [("ABCDEFGH", "No class has this code"), ("<b>x</b>", "A class code is 8 letters")]:
        at = follower(code)
        assert any(message in e.value for e in at.error), code
        assert at.title and "Draft, then verify" in at.title[0].value     # the home page, usable alone
