"""The browser tests' shared fixtures: one chromium and one streamlit server for the whole session
(a server start loads the models and measures the threads: tens of seconds on a busy 2-core CPU)."""
import pytest


@pytest.fixture(scope="session")
def server():
    from tests.browser.chromium import streamlit_server
    with streamlit_server() as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    from tests.browser.chromium import ARGS, CHROMIUM, sync_api
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def app(server, browser):
    """The server after its first visit (a lesson's link, as a class gets it), with its models loaded:
    they load in a thread of their own while the page draws (appkit.runtime.loader), which takes
    minutes on a busy 2-core CPU, longer than one page may take to settle."""
    from tests.browser.chromium import settle, sync_api
    page = browser.new_page(viewport={"width": 1400, "height": 2600})
    page.goto(server + "/parallel_drafting")
    sync_api.expect(page.locator("h1").first).to_contain_text("Parallel drafting", timeout=300_000)
    sync_api.expect(page.get_by_text("Model set:").first).to_be_attached(timeout=1_200_000)   # the sidebar's status
    settle(page)
    page.close()
    return server
