"""Shared fixtures: the embedded model set, loaded once per test session."""
import pytest

from specviz.generator.models import load_embedded


@pytest.fixture(scope="session")
def models():
    return load_embedded()


@pytest.fixture(autouse=True, scope="session")
def app_test_runs_through_app_py():
    """AppTest starts every run as a fresh server's very first request would: with a folder named
    pages/ beside app.py, in Streamlit's legacy multipage mode, which a real server leaves for good
    as soon as app.py has called st.navigation once. In that mode a page runs without app.py, and
    a widget's click is lost. AppTest checks the wiring of a server in its lasting state, so each
    AppTest run starts after that switch; the first-request path itself is proven in a real
    browser by test_browser.py::test_a_lesson_link_is_the_first_request_of_a_fresh_server."""
    from streamlit.runtime.pages_manager import PagesManager
    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    PagesManager.__init__ = init
    yield
    PagesManager.__init__ = original
