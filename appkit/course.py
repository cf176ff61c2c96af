"""The course: its pages in order, each with a stable id, and the navigation between them.

Each page is declared once here with an id that its session keys (`keep_<id>_<name>`), its
predictions, its shared results and its link settings (specviz.hosting.app_state.LINKED) use. The
id is never read off the title, so renumbering or renaming a lesson changes no key and breaks no
shared link. A page's url path is its file's stem, as Streamlit derives it: links and QR codes made
before keep opening the same page, so a page file keeps its name.

What it leaves out: what each page draws (course_pages/), the frame around them (appkit.frame).
"""
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from specviz.lessons import glossary

CHECKS_AHEAD = f"*{glossary.CHECKS_AHEAD}*"   # the two source articles, cited by title
DRAFT_VERIFY = f"*{glossary.DRAFT_VERIFY}*"


@dataclass(frozen=True)
class Page:
    id: str      # stable: keys and links use it
    file: str
    title: str
    engine: bool = True   # its imports bring the engine (and transformers): app.py imports that first

    @property
    def url_path(self) -> str:
        return Path(self.file).stem


HOME = Page("home", "course_pages/home.py", "Home: draft, then verify", engine=False)   # its race imports it when it runs
LESSONS = [
    Page("draft", "course_pages/draft_and_verify.py", "1 · Draft and verify"),
    Page("sampling", "course_pages/sampling_lossless.py", "2 · Sampling stays lossless"),
    Page("parallel", "course_pages/parallel_drafting.py", "3 · Parallel drafting"),
    Page("budget", "course_pages/verification_budget.py", "4 · Verification budget"),
    Page("admission", "course_pages/biased_admission.py", "5 · Biased admission", engine=False),
    Page("dloop", "course_pages/dloop.py", "6 · DLoop: more stages, one check"),
    Page("cost", "course_pages/cost_per_token.py", "7 · Cost per token"),
    Page("speedup", "course_pages/reading_a_speedup.py", "8 · Reading a speedup"),
    Page("inside", "course_pages/inside_a_round.py", "9 · Inside a round"),
    Page("glossary", "course_pages/glossary.py", "Glossary", engine=False),
]
GLOSSARY = LESSONS[-1]
COURSE = [HOME, *LESSONS]


def page_of(url_path: str) -> Page:
    """The page at a url path (its file's stem; the home page's address names no path). KeyError
    for no page.

    >>> page_of("dloop").id, page_of("").id, page_of("home").title
    ('dloop', 'home', 'Home: draft, then verify')
    """
    return ({p.url_path: p for p in COURSE} | {"": HOME})[url_path]


def page_of_file(file: str) -> Page:
    """The page a page file is (a page passes its __file__).

    >>> page_of_file("/srv/specviz/course_pages/cost_per_token.py").id
    'cost'
    """
    return page_of(Path(file).stem)


def next_page(page: Page) -> Page:
    """The page after `page` in the course; after the last, home again.

    >>> next_page(LESSONS[4]).title, next_page(LESSONS[-1]).id
    ('6 · DLoop: more stages, one check', 'home')
    """
    return COURSE[(COURSE.index(page) + 1) % len(COURSE)]


def navigation():
    """The app's pages. Each keeps the url path Streamlit derives from its file name
    (course_pages/dloop.py -> /dloop).

    Their folder is not named pages/: beside app.py that name is Streamlit's legacy multipage
    folder, and until some session has called st.navigation, a fresh server's first request for
    /<page> would run the page's file without app.py (tests/app/test_app_first_request.py)."""
    return st.navigation({
        "specviz": [st.Page(HOME.file, title=HOME.title, icon="⚡", default=True)],
        "Lessons": [st.Page(p.file, title=p.title) for p in LESSONS],
    })


def current_page(nav) -> str:
    """The url path of the page this run shows: the browser's address names it; the home page's
    address names none, nor does AppTest's, and then the navigation answers."""
    path = urllib.parse.urlsplit(st.context.url or "").path.rstrip("/").rsplit("/", 1)[-1]
    return path if path and any(p.url_path == path for p in COURSE) else nav.url_path
