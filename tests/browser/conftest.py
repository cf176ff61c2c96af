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
    """The server after its first visit (a lesson's link, as a class gets it)."""
    from tests.browser.chromium import open_page, sync_api
    page = open_page(browser, server + "/parallel_drafting", [])
    sync_api.expect(page.locator("h1").first).to_contain_text("Parallel drafting")
    page.close()
    return server
