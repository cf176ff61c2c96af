"""A class in real browsers (separate browser contexts, so separate sessions).

On one server: a presenter and three followers; each follower votes once, the presenter sees the
count (not the spread) and reveals, the reveal reaches every follower, a follower's own clicks move
only its own screen and never past the presenter's.

On two server processes sharing a real redis-server: a presenter and eight followers, half on each
server, through four pages (lesson 1 into its second round, lesson 5, the glossary, lesson 2) and two
predictions, with a reload of a student (its vote stays counted, once) and of the presenter (its class
goes on). Every follower's screen is checked on every page: one title, the presenter's, and no
exception box; on lesson 5 its P(A) figures are whole at 1024 px.

And sessions spoken to over the app's websocket as a browser speaks to it, to send at a known moment
what a busy server's races make a browser send: a follower's poll from the page before a switch, a
presenter's poll from a screen that never arrived (appkit.screen.polling), a click delivered twice.
"""
import contextlib
import re
import time

from websockets.sync.client import connect
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from appkit.screen import CATCH_UP_S
from specviz.hosting.classroom import Classroom, RedisStore, new_token, poll_every
from tests.browser.chromium import ARTIFACTS, cut_labels, streamlit_server, sync_api

expect = sync_api.expect
QUESTION_1 = "how many of these proposals will the target keep?"


def sidebar(page):
    """Presenter mode folds the sidebar away: open it (the class's code and QR code are there)."""
    if page.get_by_test_id("stExpandSidebarButton").count():
        page.get_by_test_id("stExpandSidebarButton").click()
    return page.get_by_test_id("stSidebar")


def person(browser, width: int, height: int):
    """One person's browser (a context of its own: its own session) with a screen of that size."""
    page = browser.new_context(viewport={"width": width, "height": height}).new_page()
    page.set_default_navigation_timeout(600_000)   # a busy server can take minutes to serve a page
    return page


def loaded(browser, *urls: str):
    """Servers after their first visit, with their models loaded: they load in a thread of their own
    while pages draw (appkit.runtime.loader), which takes minutes on a busy 2-core CPU. Every server is
    visited before any is waited for, so their loads overlap."""
    pages = [person(browser, 1024, 768) for _ in urls]
    for page, url in zip(pages, urls):
        page.goto(url + "/parallel_drafting")
    for page in pages:
        expect(page.get_by_text("Model set:").first).to_be_attached(timeout=1_200_000)   # the sidebar's status
        page.context.close()


def start_class(browser, url: str):
    page = person(browser, 1280, 900)
    page.goto(f"{url}/draft_and_verify?presenter=1")
    # drawn, not quiet: a page whose models load on a busy server reruns its loading line every second
    expect(page.locator("h1").first).to_contain_text("Draft and verify", timeout=600_000)
    sidebar(page).get_by_role("button", name="Start a class").click()
    settled = page.get_by_test_id("stSidebar").get_by_text(re.compile(r"Class [A-Z2-9]{8}:"))
    expect(settled).to_be_visible()
    code = re.search(r"Class ([A-Z2-9]{8}):", settled.inner_text())[1]
    # the test's servers listen on 127.0.0.1: no link a student could open, and the screen says so
    expect(page.get_by_text("Open the app by the address students will use").first).to_be_visible()
    return page, code


def on_page(students, title: str):
    """Every follower shows the presenter's page whole: one title, that page's, and no error box."""
    for i, s in enumerate(students):
        try:
            expect(s.locator("h1").first).to_contain_text(title, timeout=120_000)
            assert s.locator("h1").count() == 1, s.locator("h1").all_inner_texts()
            assert s.get_by_test_id("stException").count() == 0
        except AssertionError:
            ARTIFACTS.mkdir(exist_ok=True)
            s.screenshot(path=str(ARTIFACTS / f"class-follower-{i}-{title}.png"), full_page=True)
            raise


def vote(students, question: str, choices: list[str]):
    for s, choice in zip(students, choices):
        expect(s.get_by_text(question).last).to_be_visible(timeout=120_000)
        s.get_by_role("radiogroup").get_by_text(choice, exact=True).click()
        expect(s.get_by_text(re.compile(r"Your answer is counted")).last).to_be_visible(timeout=120_000)


def test_a_class_on_one_server(browser, app):
    """On the suite's server, its models loaded (a class that starts while they load is
    tests/app/test_app_class.py's: its followers move with the presenter before the load ends)."""
    teacher, code = start_class(browser, app)
    students = []
    for _ in range(3):
        s = person(browser, 1024, 768)
        s.goto(f"{app}/?class={code}")
        students.append(s)
    on_page(students, "Draft and verify")
    teacher.get_by_role("button", name="Next phase").click()
    for s in students:   # within the two-second poll (and a busy machine's margin), round 1's draft
        expect(s.get_by_text("round 1", exact=False).first).to_be_visible(timeout=60_000)
        assert s.get_by_role("button", name="Reveal").count() == 0
    vote(students, QUESTION_1, ["1", "1", "2"])
    for s in students:
        expect(s.get_by_role("radio", name="0", exact=True).last).to_be_disabled()   # no second vote
    expect(teacher.get_by_text("3 of 3 following students have answered.").last).to_be_visible(timeout=60_000)
    assert teacher.get_by_text(re.compile(r"The class answered")).count() == 0   # the spread waits for the reveal
    # (no waiting for a quiet page: one that polls its class every two seconds is never quiet)
    students[0].get_by_role("button", name="Next phase").last.click()   # not past the presenter's question
    expect(students[0].get_by_text("The presenter has not shown this yet").first).to_be_visible(timeout=60_000)
    assert students[0].get_by_text("the target kept", exact=False).count() == 0
    students[0].get_by_role("button", name="◀ Back").last.click()        # a follower steps only itself
    expect(students[0].get_by_text("Ready", exact=False).first).to_be_visible(timeout=60_000)
    expect(students[1].get_by_text(QUESTION_1).last).to_be_visible()
    teacher.get_by_role("button", name="Reveal").last.click()
    expect(teacher.get_by_text(re.compile(r"The class answered \(3 votes\)")).last).to_be_visible(timeout=60_000)
    for s in students:
        expect(s.get_by_text(re.compile(r"The class answered \(3 votes\)")).last).to_be_visible(timeout=60_000)
        expect(s.get_by_text("the target kept", exact=False).first).to_be_visible(timeout=60_000)
    expect(teacher.get_by_text(re.compile(r"round 1\b")).last).to_be_visible()   # still the teacher's own round


def go(teacher, title: str):
    """The presenter moves to a page by the sidebar's navigation, as a lecturer does."""
    sidebar(teacher).get_by_test_id("stSidebarNavLink").filter(has_text=title).first.click()
    expect(teacher.locator("h1").first).to_contain_text(title, timeout=180_000)


def test_a_class_of_eight_across_two_servers_sharing_redis_through_pages_votes_and_reloads(browser, redis_url,
                                                                                            tmp_path):
    config = tmp_path / "specviz.toml"
    config.write_text(f'[classes]\nstore = "{redis_url}"\n[sets.embedded]\nembedded = true\n')
    env = {"SPECVIZ_CONFIG": str(config)}
    with streamlit_server(env) as one, streamlit_server(env) as two:
        loaded(browser, one, two)
        teacher, code = start_class(browser, one)
        students = []
        for i in range(8):   # half on each server, at a laptop's 1024 pixels
            s = person(browser, 1024, 768)
            s.goto(f"{(one, two)[i % 2]}/?class={code}")
            students.append(s)
        on_page(students, "Draft and verify")
        expect(sidebar(teacher).get_by_test_id("stMarkdown").filter(has_text=f"Class {code}:").first).to_contain_text(
            "(8 following now)", timeout=120_000)

        # prediction 1 on lesson 1; a student reloads after voting: still counted, and only once
        teacher.get_by_role("button", name="Next phase").click()
        vote(students, QUESTION_1, ["1", "2"] * 4)
        expect(teacher.get_by_text("8 of 8 following students have answered.").last).to_be_visible(timeout=120_000)
        students[3].reload()
        expect(students[3].get_by_text("This browser has answered").last).to_be_visible(timeout=120_000)
        expect(students[3].get_by_role("radio", name="0", exact=True).last).to_be_disabled()
        assert f"class={code}" in students[3].url and "token=" in students[3].url
        teacher.get_by_role("button", name="Reveal").last.click()
        for s in students:
            expect(s.get_by_text(re.compile(r"The class answered \(8 votes\)")).last).to_be_visible(timeout=120_000)

        # on past round 1 (the reveal showed its verify phase): the presenter's own screen shows each step
        for phase in ("3. commit", "1. draft"):
            teacher.get_by_role("button", name="Next phase").click()
            expect(teacher.locator(".sv-phase.on").first).to_have_text(phase, timeout=120_000)
        expect(teacher.get_by_text(re.compile(r"round 2\b")).first).to_be_visible()
        for s in students:
            expect(s.locator(".sv-phase.on").first).to_have_text("1. draft", timeout=120_000)
            expect(s.get_by_text(re.compile(r"round 2\b")).first).to_be_visible(timeout=120_000)

        # the presenter reloads: presenter mode and the class go on
        assert "lead=" in teacher.url and "presenter=1" in teacher.url
        teacher.reload()
        expect(sidebar(teacher).get_by_text(f"Class {code}:").first).to_be_visible(timeout=120_000)
        assert teacher.get_by_role("button", name="Start a class").count() == 0

        # prediction 2 on lesson 5, then two more pages
        go(teacher, "Biased admission")
        on_page(students, "Biased admission")
        vote(students, "How often will the first output token be A?",
             ["less than p(A)", "exactly p(A)", "more than p(A)", "more than p(A)"] * 2)
        expect(teacher.get_by_text("8 of 8 following students have answered.").last).to_be_visible(timeout=120_000)
        teacher.get_by_role("button", name="Reveal").last.click()
        for s in students:
            expect(s.get_by_text(re.compile(r"The class answered \(8 votes\)")).last).to_be_visible(timeout=120_000)
            expect(s.get_by_test_id("stMetric").first).to_be_visible(timeout=120_000)
            assert cut_labels(s, '[data-testid="stMetric"]') == []   # "P(A) = …" whole at 1024 px
        go(teacher, "Glossary")
        on_page(students, "Glossary")
        go(teacher, "Sampling stays lossless")
        on_page(students, "Sampling stays lossless")


class Socket:
    """A session spoken to as Streamlit's frontend speaks to it: BackMsg protobufs over the
    app's websocket, ForwardMsg protobufs back (what the tests below need of them)."""

    def __init__(self, url: str, ws):
        self.url, self.ws, self.query = url, ws, ""

    def rerun(self, page: str, page_hash: str = "", fragment: str = "", clicked: str = ""):
        """The browser's rerun request: its address (as the app last wrote it), the page it shows, the
        fragment a timer reruns, and the id of a button clicked."""
        msg = BackMsg()
        c = msg.rerun_script
        c.query_string, c.page_name, c.page_script_hash, c.fragment_id = self.query, page, page_hash, fragment
        c.is_auto_rerun = bool(fragment)
        c.widget_states.SetInParent()
        if clicked:
            c.widget_states.widgets.add(id=clicked, trigger_value=True)
        c.context_info.url = f"{self.url}/{page}"
        self.ws.send(msg.SerializeToString())

    def run(self) -> list:
        """The messages the request caused, up to the end of a run that was not cut short for
        another (st.rerun, st.switch_page): [(type, message)], waiting up to five minutes for a busy server."""
        got = []
        while True:
            m = ForwardMsg()
            m.ParseFromString(self.ws.recv(timeout=300))
            got.append((m.WhichOneof("type"), m))
            if got[-1][0] == "page_info_changed":   # the app wrote the address (st.query_params)
                self.query = m.page_info_changed.query_string
            if got[-1][0] == "script_finished" and m.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                return got


@contextlib.contextmanager
def session(url: str):
    """A new session of the server at `url`, over its websocket (see `Socket`)."""
    with connect(url.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"], max_size=None,
                 open_timeout=120) as ws:
        yield Socket(url, ws)


def texts(msgs) -> list[str]:
    """The markdown and headings a run drew (a title is a heading's body)."""
    out = []
    for kind, m in msgs:
        if kind == "delta" and m.delta.WhichOneof("type") == "new_element":
            e = m.delta.new_element
            if e.WhichOneof("type") in ("markdown", "heading"):
                out.append(getattr(e, e.WhichOneof("type")).body)
    return out


def phases(msgs) -> list[str]:
    """Lesson 1's phase badges a run drew ("2. verify")."""
    return [found for kind, m in msgs if kind == "delta" and m.delta.WhichOneof("type") == "new_element"
            and m.delta.new_element.WhichOneof("type") == "html"
            for found in re.findall(r'sv-phase on">([^<]+)<', m.delta.new_element.html.body)]


def test_a_click_the_server_receives_twice_moves_lesson_1_once():
    """A presenter's one click on Next phase once moved lesson 1 two phases, with thirty followers
    on the server (scripts/class_load.py). Whatever delivers a click twice (a busy server, a click on
    a screen the browser never replaced), the request carries the address of the screen it came from,
    which names that screen's round and phase (specviz.lessons.draft.Stepper.move): the second
    delivery of the same click moves nothing, and a click from the next screen moves on."""
    with streamlit_server() as url, session(url) as student:
        student.rerun("draft_and_verify")   # a fresh server's first request: app.py, then the page
        ready = student.run()
        page = next(p.page_script_hash for kind, m in ready if kind == "navigation"
                    for p in m.navigation.app_pages if p.url_pathname == "draft_and_verify")
        click = next(m.delta.new_element.button.id for kind, m in ready if kind == "delta"
                     and m.delta.new_element.button.label.startswith("Next phase"))
        address = student.query
        assert "round=0" in address
        student.rerun("draft_and_verify", page, clicked=click)
        assert phases(student.run()) == ["1. draft"] and "round=1" in student.query
        student.query = address                                   # the same click, delivered again
        student.rerun("draft_and_verify", page, clicked=click)
        assert phases(student.run()) == ["1. draft"] and "round=1&phase=draft" in student.query
        student.rerun("draft_and_verify", page, clicked=click)   # a click on the screen it drew
        assert phases(student.run()) == ["2. verify"]


def test_a_poll_the_browser_sent_from_the_page_before_a_switch_costs_one_redraw_never_the_page(redis_url, tmp_path):
    """The race behind a follower left with the class bar over an empty page, reproduced by sending
    what a follower's browser sends: its poll's timer fires on lesson 1 while the server has already
    switched it to the presenter's lesson 5. Streamlit 1.67 runs that tick as a fragment run on
    lesson 1, and its new_session names lesson 1: the frontend (App.handleNewSession, a page other
    than its own: clearAppState) removes everything lesson 5 drew. The app must then draw lesson 5
    whole again within that same poll (appkit.screen.polling). The class has thirty followers, so the
    student's poll also shows the class's pace reaching the browser (specviz.hosting.classroom.poll_every)."""
    config = tmp_path / "specviz.toml"
    config.write_text(f'[classes]\nstore = "{redis_url}"\n[sets.embedded]\nembedded = true\n')
    room = Classroom(RedisStore(redis_url), 20, 60, 3600)
    code, key = room.start()
    room.show(code, key, {"page": "biased_admission", "params": {}})   # the presenter is on lesson 5
    for _ in range(29):
        room.follow(code, new_token())   # twenty-nine students follow already
    with streamlit_server({"SPECVIZ_CONFIG": str(config)}) as url:
        with session(url) as student:
            student.query = f"class={code}"   # the class link
            student.rerun("biased_admission")   # a fresh server's first request: app.py, then the page
            first = student.run()
            assert any("Biased admission" in t for t in texts(first))
            pages = {p.url_pathname: p.page_script_hash for kind, m in first if kind == "navigation"
                     for p in m.navigation.app_pages}
            polls = [m.auto_rerun.fragment_id for kind, m in first
                     if kind == "auto_rerun" and m.auto_rerun.interval == poll_every(30) > 2]
            assert len(polls) == 1, "a follower of a class of thirty polls at the class's pace, not every two seconds"
            assert "seen=" in student.query and "token=" in student.query   # the screen it has, its token

            student.rerun("draft_and_verify", pages["draft_and_verify"], polls[0])   # the stale tick
            after = student.run()
            told = [m.new_session for kind, m in after if kind == "new_session"]
            runs = [list(m.metadata.run.fragment_ids) for kind, m in after if kind == "new_session"]
            # the Streamlit behaviour this depends on: the tick runs on the page the browser named
            assert told[0].page_script_hash == pages["draft_and_verify"] and runs[0] == polls
            # and the app answers it in the same poll: lesson 5, whole, by a whole run
            assert told[-1].page_script_hash == pages["biased_admission"] and runs[-1] == []
            assert any("Biased admission" in t for t in texts(after))


def test_a_presenter_whose_browser_missed_its_last_screen_gets_it_again_within_one_poll(redis_url, tmp_path):
    """Under load Streamlit (1.67) can drop a run's messages before the browser gets them (appkit.screen):
    the presenter's step then showed on every follower's screen but not on the presenter's own, which
    stayed on the step before for good. The presenter's screen polls too (the count of followers,
    every three seconds), and a tick whose address still carries an older screen number than the
    session last drew, once the server has had its time to send it (appkit.screen.CATCH_UP_S), draws
    the page again: a whole run, with the new number. A tick that carries the current number draws only its line."""
    config = tmp_path / "specviz.toml"
    config.write_text(f'[classes]\nstore = "{redis_url}"\n[sets.embedded]\nembedded = true\n')
    code, key = Classroom(RedisStore(redis_url), 20, 60, 3600).start()
    with streamlit_server({"SPECVIZ_CONFIG": str(config)}) as url:
        with session(url) as teacher:
            teacher.query = f"presenter=1&lead={code}.{key}"   # a presenter's own address (a reload resumes its class)
            teacher.rerun("glossary")   # a fresh server's first request: app.py, then the page
            first = teacher.run()
            assert any(f"Class {code}:" in t for t in texts(first))
            polls = [m.delta.fragment_id for kind, m in first if kind == "delta" and m.delta.fragment_id
                     and f"Class {code}:" in m.delta.new_element.markdown.body]   # the line of the class's count
            assert len(polls) == 1 and any(m.auto_rerun.fragment_id == polls[0] and m.auto_rerun.interval == 3
                                           for kind, m in first if kind == "auto_rerun")
            glossary = next(p.page_script_hash for kind, m in first if kind == "navigation"
                            for p in m.navigation.app_pages if p.url_pathname == "glossary")
            number = int(re.search(r"seen=(\d+)", teacher.query)[1])
            time.sleep(CATCH_UP_S + 1)

            teacher.rerun("glossary", glossary, polls[0])   # the browser has the last screen: its line alone
            runs = [list(m.metadata.run.fragment_ids) for kind, m in teacher.run() if kind == "new_session"]
            assert runs == [polls]

            teacher.query = teacher.query.replace(f"seen={number}", f"seen={number - 1}")   # it missed it
            teacher.rerun("glossary", glossary, polls[0])
            after = teacher.run()
            runs = [list(m.metadata.run.fragment_ids) for kind, m in after if kind == "new_session"]
            assert runs[0] == polls and runs[-1] == []   # the poll, then the whole page again
            assert any("Glossary" in t for t in texts(after))
            assert int(re.search(r"seen=(\d+)", teacher.query)[1]) > number
