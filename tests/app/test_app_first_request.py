"""Every lesson's link as the very first request of a fresh server, in AppTest.

Until some session has run app.py's st.navigation, Streamlit treats pages/ as a legacy multipage
folder: the first request runs the page file its address names, without app.py (Streamlit's script
runner, `_mpa_v1`), and finds that file by the name Streamlit derives from it. So each page must be
found at its course url path and then draw app.py's frame itself (appkit.frame.ensure_frame,
called by appkit.header and appkit.css). AppTest makes that very run when the legacy mode is left
on, which tests/conftest.py turns off for every other AppTest; a fresh AppTest costs no server.
The same path on a real server, in chromium, including that the session goes on to work, is
test_browser.py::test_a_lesson_link_is_the_first_request_of_a_fresh_server, for one lesson.

What it leaves out: the home page (its address names no file: the first request runs app.py).
"""
import pytest
from streamlit.runtime.pages_manager import PagesManager
from streamlit.source_util import page_icon_and_name
from streamlit.testing.v1 import AppTest

from appkit import course
from tests.paths import ROOT

APP = str(ROOT / "app.py")


@pytest.fixture
def legacy_mode(monkeypatch):
    """PagesManager as a fresh server makes it beside a pages/ folder: in the legacy mode."""
    init = PagesManager.__init__

    def fresh(self, *args, **kwargs):
        init(self, *args, **kwargs)
        PagesManager.uses_pages_directory = True

    monkeypatch.setattr(PagesManager, "__init__", fresh)


@pytest.mark.parametrize("page", course.LESSONS, ids=lambda p: p.id)
def test_a_lesson_link_as_a_fresh_servers_first_request_finds_its_page_inside_the_frame(legacy_mode, page):
    # the name Streamlit's legacy mode gives the file is the page's url path: /<url path> finds it
    assert page_icon_and_name(ROOT / page.file)[1] == page.url_path
    at = AppTest.from_file(APP, default_timeout=300)
    at.switch_page(page.file).run()   # before any run: the session's first request names the page
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == page.title   # the course's title: the sidebar and the "Next:" links say the same
    # app.py's frame, drawn by the page: its sidebar, and its st.navigation, which ends the legacy mode
    assert [t.label for t in at.sidebar.toggle] == ["Presenter mode (large type)"]
    # the models' status: loaded, or (a page that does not run them draws while they load) loading
    assert any(c.value.startswith(("**Model set:**", "**Loading the models**")) for c in at.sidebar.caption)
    assert PagesManager.uses_pages_directory is False
