"""The app in a real browser: `streamlit run app.py` on a free port, driven by Debian's chromium.

Visits every page, steps three rounds of lesson 1 with the keyboard and the mouse, and saves a
screenshot of each under artifacts/. Fails on any Streamlit exception box and on any browser
console error. Skipped (with the reason) where chromium or playwright is missing.
"""
import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PAGES = [("", "Draft, then verify"), ("draft_and_verify", "Draft and verify"),
         ("sampling_lossless", "Sampling stays lossless"),
         ("parallel_drafting", "Parallel drafting"), ("verification_budget", "Verification budget"), ("biased_admission", "Biased admission"), ("dloop", "DLoop"),
         ("cost_per_token", "Cost per token"), ("reading_a_speedup", "Reading a speedup"),
         ("inside_a_round", "Inside a round"), ("glossary", "Glossary")]

sync_api = pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():
    pytest.skip("Debian chromium is not installed at /usr/bin/chromium", allow_module_level=True)
# Text is checked with expect(), which waits for it: on a starved CPU the rerun a click starts can
# begin after settle() has already seen two quiet seconds, so one read right after settle() can
# still see the page before the click.
sync_api.expect.set_options(timeout=120_000)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(env: dict | None = None):
    """`streamlit run app.py` on a free port, freshly started (with `env` added to its environment);
    yields its URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                             "--server.headless", "true", "--browser.gatherUsageStats", "false"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=os.environ | (env or {}))
    url = f"http://127.0.0.1:{port}"
    for _ in range(480):   # a starved CPU can take minutes just to import streamlit
        try:
            urllib.request.urlopen(url + "/_stcore/health", timeout=1)
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("streamlit did not start: " + proc.stdout.read().decode(errors="replace")[-2000:])
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture(scope="module")
def server():
    with streamlit_server() as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def app(server, browser):
    """The server after its first visit (a lesson's link, as a class gets it)."""
    page = open_page(browser, server + "/parallel_drafting", [])
    sync_api.expect(page.locator("h1").first).to_contain_text("Parallel drafting")
    page.close()
    return server


@pytest.mark.parametrize("path,title", [p for p in PAGES if p[0]])
def test_a_lesson_link_is_the_first_request_of_a_fresh_server(browser, path, title):
    """A teacher starts the server and opens the link of the lesson of the day. Until some session
    has run app.py's st.navigation, Streamlit treats pages/ as a legacy multipage folder: the visit
    must still land on the lesson, with no "Page not found", inside app.py's frame (its sidebar
    and its page titles, not the legacy names derived from the files)."""
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


def settle(page, timeout_s: float = 180):
    """Wait until the script has finished running (no running indicator for a moment)."""
    # the page's title is drawn by its script, so the run has started (and the running indicator
    # is up) before quiet is measured
    page.wait_for_selector("h1", timeout=timeout_s * 1000)
    deadline, quiet_since = time.time() + timeout_s, None
    while time.time() < deadline:
        running = page.locator('[data-testid="stStatusWidget"], [data-testid="stSpinner"]').count() > 0
        if running:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.time()
        elif time.time() - quiet_since > 2.0:
            return
        page.wait_for_timeout(150)
    raise AssertionError("the page kept running")


def check(page, errors, name):
    # widgets and charts load lazily after the script has finished: wait for every skeleton to be
    # replaced and every plotly chart to have drawn its svg before judging the page
    page.wait_for_function("() => !document.querySelector('[data-testid=stSkeleton]') && "
                           "[...document.querySelectorAll('[data-testid=stPlotlyChart]')]"
                           ".every(e => e.querySelector('.main-svg'))", timeout=30000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    boxes = page.locator('[data-testid="stException"]')
    assert boxes.count() == 0, f"{name}: exception box: {boxes.first.inner_text()[:500]}"
    assert not errors, f"{name}: console errors: {errors}"


def cut_labels(page, where: str) -> list:
    """Labels under `where` that Streamlit shows cut with an ellipsis: [text, pixels cut off]."""
    assert page.locator(where + " .stMarkdownEllipsis").count() > 0, f"no labels under {where}"
    return page.evaluate("""where => [...document.querySelectorAll(where + ' .stMarkdownEllipsis')]
        .map(box => { const text = document.createRange(); text.selectNodeContents(box);
                      return [box.innerText, text.getBoundingClientRect().right - box.getBoundingClientRect().right]; })
        .filter(([, over]) => over > 0.5)""", where)


def base_path_probe(msg) -> bool:
    """Streamlit's frontend probes /<page>/_stcore/... to find its base URL on a deep link; the
    404s of those probes are expected, not errors of the app."""
    return "/_stcore/" in msg.location.get("url", "") and "404" in msg.text


def open_page(browser, url, errors):
    page = browser.new_page(viewport={"width": 1400, "height": 2600})
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" and not base_path_probe(msg)
            else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(120_000)
    page.goto(url)
    settle(page)
    return page


@pytest.mark.parametrize("path,title", PAGES)
def test_every_page_renders_without_an_error(app, browser, path, title):
    errors = []
    page = open_page(browser, f"{app}/{path}", errors)
    assert title in page.locator("h1").first.inner_text()
    check(page, errors, f"page-{path or 'home'}")
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
    for n in (1, 2, 3):
        page.get_by_role("button", name="Next round").click()
        settle(page)
    sync_api.expect(page.locator("body")).to_contain_text("round 3")
    check(page, errors, "lesson1-round3-commit")
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


MARKUP = ["<img src=x onerror=alert(1)>", "<script>alert(1)</script>"]


@pytest.mark.parametrize("prompt", MARKUP)
def test_a_prompt_of_markup_is_shown_as_text_and_runs_nothing(app, browser, prompt):
    errors, dialogs = [], []
    page = open_page(browser, f"{app}/draft_and_verify", errors)
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.get_by_text("Prompt and settings", exact=True).click()
    box = page.get_by_label("Prompt (free text)")
    box.fill(prompt)
    # commit the text first, as Streamlit's own shortcut does: a click on Start within milliseconds
    # of fill() raced the text area's commit-on-blur on a starved CI host, and the run kept the old
    # prompt
    box.press("Control+Enter")
    settle(page)
    sync_api.expect(box).to_have_value(prompt)
    page.get_by_role("button", name="Start with these settings").click()
    settle(page)
    for _ in range(3):
        page.get_by_role("button", name="Next round").click()
        settle(page)
    sync_api.expect(page.locator(".sv-prompt").first).to_have_text(prompt)
    assert page.locator('img[src="x"]').count() == 0
    assert page.locator("script", has_text="alert(1)").count() == 0
    check(page, errors, f"lesson1-markup-{MARKUP.index(prompt)}")
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


def test_eight_sessions_stepping_at_once_each_get_the_text_of_a_lone_run(app, browser, models):
    from urllib.parse import urlencode

    from specviz.hosting.app_state import from_params
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
    for page in pages:
        settle(page)
    finished = set()
    for _ in range(int(SHARED["max_new"]) + 1):   # every round commits at least one token
        live = [p for i, p in enumerate(pages) if i not in finished]
        if not live:
            break
        for page in live:   # all eight press before any waits: their rounds run at the same time
            page.get_by_role("button", name="Next round").click(no_wait_after=True)
        for i, page in enumerate(pages):
            settle(page)
            if "The generation has finished." in page.inner_text("body"):
                finished.add(i)
    assert len(finished) == 8, f"sessions still stepping: {sorted(set(range(8)) - finished)}"
    for i, page in enumerate(pages):
        assert page.locator('[data-testid="stException"]').count() == 0, f"session {i}: exception box"
        assert recorded_trace(page).new_ids == alone, f"session {i} committed other text than a lone run"
    assert not errors, errors
    for ctx in contexts:
        ctx.close()
