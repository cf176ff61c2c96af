"""Every lesson's link as the very first request of a fresh server, in AppTest.

A fresh server runs app.py for every request, its first included, because the pages' folder is not
named pages/: beside the main script that name is Streamlit's legacy multipage folder, and until
some session has called st.navigation a request for /<page> would run the page's file alone,
without app.py's frame (its sidebar, its kept state, its apology). AppTest starts each run as such
a fresh server does (it resets Streamlit's legacy flag), and a fresh AppTest costs no server. The
same path on a real server, in chromium, including that the session goes on to work, is
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


def test_a_fresh_server_beside_app_py_starts_outside_streamlits_legacy_multipage_mode(monkeypatch):
    """Planted bug it catches: the pages' folder renamed back to pages/ (or a pages/ folder added)."""
    monkeypatch.setattr(PagesManager, "uses_pages_directory", None)   # as a new server process has it
    PagesManager(APP, setup_watcher=False)
    assert PagesManager.uses_pages_directory is False
    assert not (ROOT / "pages").exists()


@pytest.mark.parametrize("page", course.LESSONS, ids=lambda p: p.id)
def test_a_lesson_link_as_a_fresh_servers_first_request_finds_its_page_inside_the_frame(page):
    # a link's address is the page's url path, its file's stem: links made before keep working
    assert page_icon_and_name(ROOT / page.file)[1] == page.url_path
    at = AppTest.from_file(APP, default_timeout=300)
    at.switch_page(page.file).run()   # before any run: the session's first request names the page
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == page.title   # the course's title: the sidebar and the "Next:" links say the same
    # app.py's frame around the page: its sidebar
    assert [t.label for t in at.sidebar.toggle] == ["Presenter mode (large type)"]
    # the models' status: loaded, or (a page that does not run them draws while they load) loading
    assert any(c.value.startswith(("**Model set:**", "**Loading the models**")) for c in at.sidebar.caption)
