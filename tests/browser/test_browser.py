"""The app in a real browser: `streamlit run app.py` on a free port, driven by Debian's chromium.

Opens a lesson's link on a fresh server, steps lesson 1 with the keyboard and the mouse, races on
home, types markup as a prompt and steps eight sessions at once, saving screenshots under
artifacts/. Fails on any Streamlit exception box and on any browser console error. Every page
drawn on a projector is test_browser_projector.py. Skipped (with the reason) where chromium or
playwright is missing.
"""
import time
import urllib.parse
from pathlib import Path

import pytest

from tests.browser.chromium import PAGES, check, cut_labels, open_page, settle, streamlit_server, sync_api


def test_a_lesson_link_is_the_first_request_of_a_fresh_server(browser):
    """A teacher starts the server and opens the link of the lesson of the day: the visit lands on
    the lesson, with no "Page not found", inside app.py's frame (its sidebar and its page titles,
    not names derived from the files). Had the pages' folder been named pages/, Streamlit's legacy
    multipage mode would run this first request's page file without app.py
    (tests/app/test_app_first_request.py).

    One lesson, on one fresh server (a server's start and first request cost tens of seconds on a
    2-core CPU): a fresh server treats every link alike. That every lesson is found at its link
    inside the frame on a first request is tests/app/test_app_first_request.py."""
    path, title = "biased_admission", "Biased admission"
    with streamlit_server() as url:
        page = open_page(browser, f"{url}/{path}", [])
        sync_api.expect(page.locator("h1").first).to_contain_text(title)
        assert page.get_by_text("Page not found").count() == 0
        assert page.locator('[role="dialog"]').count() == 0
        nav = page.locator('[data-testid="stSidebarNav"]')
        sync_api.expect(nav).to_contain_text("1 · Draft and verify")
        sync_api.expect(page.get_by_text("Presenter mode (large type)")).to_be_visible()
        assert urllib.parse.urlsplit(page.url).path == f"/{path}"
        # the same session goes on to work: a page switch and a widget's click are not lost
        # (the switch first: presenter mode collapses the sidebar that holds the links)
        nav.get_by_role("link", name="Home: draft, then verify").click()
        sync_api.expect(page.locator("h1").first).to_contain_text("Draft, then verify")
        settle(page)
        page.get_by_text("Presenter mode (large type)").click()
        settle(page)
        sync_api.expect(page.get_by_role("switch", name="Presenter mode (large type)")).to_be_checked()
        page.close()


def test_lesson1_steps_three_rounds(app, browser):
    errors = []
    page = open_page(browser, f"{app}/draft_and_verify", errors)
    page.get_by_role("button", name="Next phase").click()
    settle(page)
    check(page, errors, "lesson1-round1-draft")
    page.keyboard.press("ArrowRight")   # the shortcut for the next phase
    settle(page)
    sync_api.expect(page.locator(".sv-phase.on")).to_contain_text("verify")
    check(page, errors, "lesson1-round1-verify")
    for n in (2, 3):   # each stops at its round's question, in the draft phase
        page.get_by_role("button", name="Next round").click()
        settle(page)
    sync_api.expect(page.locator("body")).to_contain_text("round 3")
    sync_api.expect(page.locator(".sv-phase.on")).to_contain_text("draft")
    check(page, errors, "lesson1-round3-draft")
    # the trace and the position in it survive a visit to another page
    page.get_by_role("link", name="5 · Biased admission").click()
    settle(page)
    page.get_by_role("link", name="1 · Draft and verify").click()
    settle(page)
    sync_api.expect(page.locator("body")).to_contain_text("round 3")
    # a student's laptop at 1024 pixels with the sidebar open: the step buttons and the slide
    # downloads keep their labels whole (hints dropped, labels wrapped at a word)
    page.set_viewport_size({"width": 1024, "height": 768})
    settle(page)
    assert cut_labels(page, "[data-testid=stMain] button") == []
    check(page, errors, "lesson1-1024-sidebar")
    page.get_by_text("Presenter mode").click()
    settle(page)
    check(page, errors, "lesson1-presenter")
    # presenter mode folds the sidebar away (its labels are then hidden, not cut) and keeps buttons whole
    sync_api.expect(page.locator('[data-testid="stSidebar"]')).to_have_attribute("data-collapsed", "true")
    assert cut_labels(page, "[data-testid=stMain] button") == []
    page.close()


def test_home_race_in_presenter_mode(app, browser):
    errors = []
    page = open_page(browser, app, errors)
    page.get_by_text("Presenter mode").click()
    settle(page)
    page.get_by_role("button", name="Reveal").click()   # the race waits for the prediction's answer
    settle(page)
    page.get_by_role("button", name="Start the race").click()
    settle(page)
    assert "speedup" in page.inner_text("body")
    check(page, errors, "home-race-presenter")
    assert page.locator('[data-testid="stSidebarNavLink"]').count() == len(PAGES)
    sync_api.expect(page.locator('[data-testid="stSidebar"]')).to_have_attribute("data-collapsed", "true")
    page.close()


# two ways markup runs script in a page, in one prompt: an image's error handler and a script element
MARKUP = "<img src=x onerror=alert(1)> and <script>alert(1)</script>"


def test_a_prompt_of_markup_is_shown_as_text_and_runs_nothing(app, browser):
    errors, dialogs = [], []
    page = open_page(browser, f"{app}/draft_and_verify", errors)
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.get_by_text("Prompt and settings", exact=True).click()
    box = page.get_by_label("Prompt (free text)")
    box.fill(MARKUP)
    # commit the text first, as Streamlit's own shortcut does: a click on Start within milliseconds
    # of fill() raced the text area's commit-on-blur on a starved CI host, and the run kept the old
    # prompt
    box.press("Control+Enter")
    settle(page)
    sync_api.expect(box).to_have_value(MARKUP)
    page.get_by_role("button", name="Start with these settings").click()
    settle(page)
    for _ in range(3):
        page.get_by_role("button", name="Next round").click()
        settle(page)
    sync_api.expect(page.locator(".sv-prompt").first).to_have_text(MARKUP)
    assert page.locator('img[src="x"]').count() == 0
    assert page.locator("script", has_text="alert(1)").count() == 0
    check(page, errors, "lesson1-markup")
    page.wait_for_timeout(500)   # an injected handler would fire on load: give it the chance
    assert dialogs == []
    page.close()


SHARED = {"prompt": "It was a fine morning, and Elizabeth", "drafter": "ar", "verifier": "sampling",
          "k": "3", "temperature": "0.9", "seed": "7", "max_new": "10"}


def recorded_trace(page):
    """The session's recorded rounds, as the page offers them for download."""
    from specviz.generator.trace import Trace
    with page.expect_download() as download:
        page.get_by_role("button", name="Download the recorded rounds (JSON)").click()
    return Trace.from_json(Path(download.value.path()).read_text())


def settle_together(pages, timeout_s: float = 300):
    """`settle` for several pages at once: every one of them without a running indicator for the
    same two seconds (settling them one after another waits two quiet seconds per page, 16 s a
    round for eight)."""
    for page in pages:
        page.wait_for_selector("h1", timeout=timeout_s * 1000)
    busy = '[data-testid="stStatusWidget"], [data-testid="stSpinner"]'
    deadline, quiet_since = time.time() + timeout_s, None
    while time.time() < deadline:
        if any(page.locator(busy).count() > 0 for page in pages):
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.time()
        elif time.time() - quiet_since > 2.0:
            return
        pages[0].wait_for_timeout(150)
    raise AssertionError("the pages kept running")


def test_eight_sessions_stepping_at_once_each_get_the_text_of_a_lone_run(app, browser, models):
    from urllib.parse import urlencode

    from appkit.links import from_params
    from specviz.generator.engine import Generation
    s, problems = from_params(SHARED, ["ar"])
    assert not problems
    alone = Generation(models, s.prompt, s.engine_settings()).run().new_ids
    errors = []
    contexts = [browser.new_context(viewport={"width": 1400, "height": 2600}) for _ in range(8)]
    pages = []
    for ctx in contexts:   # one context per student: separate cookies, separate Streamlit sessions
        page = ctx.new_page()
        page.set_default_timeout(180_000)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{app}/draft_and_verify?{urlencode(SHARED)}")
        pages.append(page)
    settle_together(pages)
    finished = set()
    for _ in range(int(SHARED["max_new"]) + 1):   # every round commits at least one token
        live = [p for i, p in enumerate(pages) if i not in finished]
        if not live:
            break
        for page in live:   # all eight press before any waits: their rounds run at the same time
            page.get_by_role("button", name="Next round").click(no_wait_after=True)
        settle_together(pages)
        finished |= {i for i, page in enumerate(pages)
                     if "The generation has finished." in page.inner_text("body")}
    assert len(finished) == 8, f"sessions still stepping: {sorted(set(range(8)) - finished)}"
    for i, page in enumerate(pages):
        assert page.locator('[data-testid="stException"]').count() == 0, f"session {i}: exception box"
        assert recorded_trace(page).new_ids == alone, f"session {i} committed other text than a lone run"
    assert not errors, errors
    for ctx in contexts:
        ctx.close()
