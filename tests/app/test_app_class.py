"""A class in AppTest: a presenter and followers in one server process (one Classroom).

The presenter starts a class on lesson 1, followers open the class link, the presenter steps,
the followers show the same round and phase from the presenter's recorded trace, each votes
once, the presenter sees the count and reveals, and every follower then sees the answer with
the class's distribution. Browsers and two server processes are in test_browser_class.py.
"""
import threading
import time

import pytest
from streamlit.runtime.forward_msg_queue import ForwardMsgQueue
from streamlit.testing.v1 import AppTest

from appkit.classroom import room
from appkit.runtime import engine, loader
from specviz.hosting.classroom import new_token
from tests.app.test_app_pages import APP, button


def presenter_on_lesson1() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.session_state["keep_presenter"] = True
    at.run()
    at.switch_page("course_pages/draft_and_verify.py").run()
    button(at, "Start a class").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def follower(code: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["class"] = code
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.slow
def test_followers_show_the_presenters_round_vote_once_and_see_the_reveal():
    teacher = presenter_on_lesson1()
    code = teacher.session_state["class_lead"]["code"]
    assert any(f"Class {code}" in m.value for m in teacher.markdown)
    students = [follower(code) for _ in range(3)]
    for s in students:
        assert s.session_state["draft_state"]["stepper"].trace.new_ids == teacher.session_state["draft_state"]["stepper"].trace.new_ids[:len(
            s.session_state["draft_state"]["stepper"].trace.new_ids)]
    button(teacher, "Next phase").click().run()            # round 1, draft: the prediction is open
    for s in students:
        s.run()
        assert s.session_state["draft_state"]["stepper"].cursor == teacher.session_state["draft_state"]["stepper"].cursor
        assert not any(b.label == "Reveal" for b in s.button)     # only the presenter reveals
    key = "keep_predict_draft_0"
    for s, choice in zip(students, [1, 1, 2]):
        s.radio(key=key).set_value(choice).run()
        assert s.radio(key=key).disabled                     # one vote: the choice is locked once counted
        assert any(f"You answered **{choice}**" in c.value for c in s.caption)   # and said in words
        s.run()
        assert any(f"You answered **{choice}**" in c.value for c in s.caption)
    teacher.run()
    said = "\n".join(m.value for m in teacher.markdown)
    assert "**3 of 3** following students have answered." in said       # how many, while it is open
    assert "The class answered" not in said and "1: 2" not in said       # not what: the room would copy it
    assert f"Class {code}:** students follow this screen from this link (3 following now)." in said
    teacher.button(key="predict_reveal_draft_0").click().run()
    said = "\n".join(m.value for m in teacher.markdown)
    assert "**The class answered** (3 votes)" in said and "1: 2" in said and "2: 1" in said
    for s in students:
        s.run()
        assert s.session_state["draft_state"]["stepper"].cursor == teacher.session_state["draft_state"]["stepper"].cursor
        shown = "\n".join(m.value for m in s.markdown)
        assert "the target kept" in shown and "**The class answered** (3 votes)" in shown


@pytest.mark.slow
def test_a_presenters_page_switch_reaches_the_class_while_that_page_waits_for_the_models(unloaded_set):
    """A presenter starts a class on home while a fresh server loads its models, then opens lesson 1,
    whose run waits for them: the followers must move to lesson 1 at once, not minutes later when
    the load is done (a follower sat on home for 120 s in a browser test). Another session's run
    holds the engine lock meanwhile, which keeps the load from finishing (it measures the threads
    under that lock), until the class shows lesson 1 or two minutes have passed. It takes the lock before
    the teacher's first run starts the load: the shipped models load in a second or two, and a lock taken
    after the class starts finds them loaded on a fast machine."""
    teacher = AppTest.from_file(APP, default_timeout=300)
    teacher.session_state["keep_presenter"] = True
    student, busy, started, code, seen = new_token(), threading.Event(), threading.Event(), [], []

    def shown() -> str:
        return room().follow(code[0], student)["view"].get("page")

    def another_run():
        with engine():
            busy.set()
            started.wait(300)
            deadline = time.monotonic() + 120
            while shown() != "draft_and_verify" and time.monotonic() < deadline:
                time.sleep(0.2)
            seen.extend([not loader(unloaded_set, teacher.session_state["keep_device"]).done, shown()])

    holder = threading.Thread(target=another_run)
    holder.start()
    busy.wait()
    try:
        teacher.run()                                        # starts the load, which waits for the lock
        button(teacher, "Start a class").click().run()
        code.append(teacher.session_state["class_lead"]["code"])
    finally:
        started.set()
    teacher.switch_page("course_pages/draft_and_verify.py").run()   # waits for the models, which wait for the lock
    holder.join()
    assert seen == [True, "draft_and_verify"]        # shown to the class while the models were still loading
    assert "Draft and verify" in teacher.title[0].value


def test_an_unknown_or_malformed_class_code_is_named_and_the_page_still_works():
    for code, message in [("ABCDEFGH", "No class has this code"), ("<b>x</b>", "A class code is 8 letters")]:
        at = follower(code)
        assert any(message in e.value for e in at.error), code
        assert at.title and "Draft, then verify" in at.title[0].value     # the home page, usable alone


def test_each_class_screen_ends_by_numbering_itself_in_the_address():
    """Under load Streamlit can drop the messages of a run that has just ended (appkit's note above
    `mark_seen`): so each run that draws a class screen ends by writing its number into the address,
    which the browser sends back with every poll, and a poll that finds an older one draws the page
    again. The number is each session's own: the presenter's never reaches its followers' view."""
    teacher = presenter_on_lesson1()
    student = follower(teacher.session_state["class_lead"]["code"])
    button(teacher, "Next phase").click().run()
    student.run()
    for at in (teacher, student):
        number = str(at.session_state["class_screen"][0])
        assert at.query_params["seen"] in (number, [number])
    assert "seen" not in teacher.session_state["class_lead"]["shown"]["params"]
    assert "seen" not in student.session_state["class_view"]["params"]


def test_a_follower_on_a_live_lesson_runs_no_model_by_itself(short_runs):
    """Lesson 7 measures on its first visit and lesson 2 computes p and q after its prompt; a
    follower's screen does neither by itself: it shows the presenter's distributions (sent with the
    presenter's view), and measures only when the student presses the button."""
    teacher = presenter_on_lesson1()
    student = follower(teacher.session_state["class_lead"]["code"])
    teacher.switch_page("course_pages/cost_per_token.py").run()
    assert "cost_measurement" in teacher.session_state
    student.run()
    assert student.title[0].value.startswith("7 · Cost per token")
    assert "cost_measurement" not in student.session_state
    assert any("runs no model by itself" in i.value for i in student.info)
    teacher.switch_page("course_pages/sampling_lossless.py").run()
    student.run()
    shared = student.session_state["class_view"]["shared"]["sampling_dist"]["value"]
    assert shared["p"] == teacher.session_state["class_shared"]["sampling_dist"]["value"]["p"]
    assert not any(b.label.startswith("Run ") for b in student.button)   # nothing to ask: the presenter's is shown
    assert not student.exception, [e.value for e in student.exception]
    teacher.switch_page("course_pages/home.py").run()   # the race's opening setting is not measured for a follower
    student.run()
    assert student.title[0].value == "Draft, then verify"
    assert not student.exception and not student.error, [e.value for e in student.exception or student.error]


def full_run_messages(at: AppTest) -> list:
    """The ForwardMsgs one whole run of `at` enqueues, in order (Streamlit's own enqueue hook)."""
    got = []
    ForwardMsgQueue.on_before_enqueue_msg(got.append)
    try:
        at.run()
    finally:
        ForwardMsgQueue.on_before_enqueue_msg(None)
    assert not at.exception, [e.value for e in at.exception]
    return got


def holes(messages: list) -> list:
    """Slots a later sibling skips over: (block path, missing index) for each block holding an
    element at index i but none at some j < i. The browser drops a slot no run filled, and the
    elements after it then land one place up (the title overwritten, a blank under the class bar)."""
    filled = {}
    for m in messages:
        if m.WhichOneof("type") == "delta":
            path = tuple(m.metadata.delta_path)
            for depth in range(1, len(path)):
                filled.setdefault(path[:depth], set()).add(path[depth])
    return [(block, j) for block, slots in filled.items() for j in range(max(slots)) if j not in slots]


@pytest.mark.slow
def test_a_fragment_run_that_clears_a_queued_page_leaves_no_hole_in_it():
    """The race behind a student's screen drawn one element off after a page switch: Streamlit (1.67)
    starts a queued fragment run (a two-second poll, the presenter's tally) before the event loop has
    sent the whole run before it, and `AppSession._clear_queue` calls
    `ForwardMsgQueue.clear(retain_lifecycle_msgs=True, fragment_ids_this_run=[that fragment])`, which
    removes from the queued whole run every delta of that fragment: its own container's slot too.
    Each polling fragment therefore sits alone in a container the whole run draws (appkit.screen.hold),
    so the clear empties that container and leaves every other element in its slot."""
    teacher = presenter_on_lesson1()
    student = follower(teacher.session_state["class_lead"]["code"])
    button(teacher, "Next phase").click().run()          # a question is open: the presenter's tally polls
    student.run()
    for at in (teacher, student):
        messages = full_run_messages(at)
        assert not holes(messages)
        fragments = {m.delta.fragment_id for m in messages if m.WhichOneof("type") == "delta"} - {""}
        assert len(fragments) >= 2    # lesson 1's panel, and the follower's poll or the presenter's tally
        for fragment in fragments:
            queue = ForwardMsgQueue()
            for m in messages:
                queue.enqueue(m)
            queue.clear(retain_lifecycle_msgs=True, fragment_ids_this_run=[fragment])   # as AppSession does
            own = min((tuple(m.metadata.delta_path) for m in messages
                       if m.WhichOneof("type") == "delta" and m.delta.fragment_id == fragment), key=len)
            # the fragment's own run draws its container's inside again; nothing outside it may move
            assert [h for h in holes(queue._queue) if h[0][:len(own)] != own] == [], fragment


def reload(at: AppTest, page: str) -> AppTest:
    """A new session opened at `at`'s address (its page file and parameters), as a browser's reload is."""
    again = AppTest.from_file(APP, default_timeout=300)
    for name, value in at.query_params.items():
        again.query_params[name] = value[0] if isinstance(value, list) else value
    again.switch_page(page).run()
    assert not again.exception, [e.value for e in again.exception]
    return again


def address(at: AppTest) -> dict:
    return {k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()}


@pytest.mark.slow
def test_a_reload_keeps_the_presenters_class_and_a_students_counted_vote():
    teacher = presenter_on_lesson1()
    lead = teacher.session_state["class_lead"]
    button(teacher, "Next phase").click().run()                 # the question is open
    student = follower(lead["code"])
    token = student.session_state["class_follow"]["token"]
    key = "keep_predict_draft_0"
    student.radio(key=key).set_value(1).run()
    assert address(teacher)["lead"] == f"{lead['code']}.{lead['key']}" and address(teacher)["presenter"] == "1"
    assert address(student)["token"] == token and address(student)["class"] == lead["code"]
    shared = teacher.session_state["class_lead"]["shown"]["params"]
    assert not {"lead", "token", "presenter"} & set(shared)       # never in what the followers receive
    assert not any(lead["key"] in c.value for c in teacher.code)  # nor in the class link on screen

    teacher = reload(teacher, "course_pages/draft_and_verify.py")
    assert teacher.session_state["keep_presenter"] is True
    assert teacher.session_state["class_lead"]["code"] == lead["code"]
    said = "\n".join(m.value for m in teacher.markdown)
    assert f"Class {lead['code']}:** students follow this screen from this link (1 following now)." in said
    assert "**1 of 1** following student has answered." in said      # the same round's question, its vote kept

    student = reload(student, "course_pages/draft_and_verify.py")
    assert student.session_state["class_follow"]["token"] == token    # the same follower, not a new one
    assert student.radio(key=key).disabled                             # its vote is counted: no second one
    assert any("This browser has answered" in c.value and "Your answer is counted" in c.value for c in student.caption)
    tally = room().tally(lead["code"], lead["key"])              # this process's classes, as the app's
    assert tally["voters"] == 1 and sum(tally["votes"].values()) == 1 and tally["votes"]["1"] == 1


def test_a_presenter_address_with_an_ended_class_says_so_and_starts_afresh():
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["presenter"] = "1"
    at.query_params["lead"] = "ABCDEFGH." + "0" * 64
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("The class in this address was not resumed: No class has this code" in w.value for w in at.warning)
    assert "class_lead" not in at.session_state and "lead" not in address(at)
