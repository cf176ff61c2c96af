"""What the browser tests share: Debian's chromium driven by playwright, a streamlit server on a
free port, and waiting for a page to settle. A test module that imports this is skipped, with the
reason, where chromium or playwright is missing (never run `playwright install`).
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
from tests.paths import ROOT

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
    # no file watcher: a file edited while the suite runs must not turn a page under test into a
    # "File change" banner mid-run; the server runs the code it started with
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                             "--server.headless", "true", "--browser.gatherUsageStats", "false",
                             "--server.fileWatcherType", "none"],
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
        # a stopped server first lets its script runs in flight end: here in about a second, on a busy CI
        # machine once past 20 s. Past a minute it is killed; the tests judge the pages, not the shutdown
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


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
