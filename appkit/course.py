"""The course: its pages in order, each with a stable id, and the navigation between them.

Each page is declared once here with an id that its session keys (`keep_<id>_<name>`), its
predictions, its shared results and its link settings (specviz.hosting.app_state.LINKED) use. The
id is never read off the title, so renumbering or renaming a lesson changes no key and breaks no
shared link. A page's url path is its file's stem, as Streamlit derives it (see appkit.frame for
why that matters).

What it leaves out: what each page draws (pages/), the frame around them (appkit.frame).
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


HOME = Page("home", "pages/home.py", "Home: draft, then verify", engine=False)   # its race imports it when it runs
LESSONS = [
    Page("draft", "pages/draft_and_verify.py", "1 · Draft and verify"),
    Page("sampling", "pages/sampling_lossless.py", "2 · Sampling stays lossless"),
    Page("parallel", "pages/parallel_drafting.py", "3 · Parallel drafting"),
    Page("budget", "pages/verification_budget.py", "4 · Verification budget"),
    Page("admission", "pages/biased_admission.py", "5 · Biased admission", engine=False),
    Page("dloop", "pages/dloop.py", "6 · DLoop: more stages, one check"),
    Page("cost", "pages/cost_per_token.py", "7 · Cost per token"),
    Page("speedup", "pages/reading_a_speedup.py", "8 · Reading a speedup"),
    Page("inside", "pages/inside_a_round.py", "9 · Inside a round"),
    Page("glossary", "pages/glossary.py", "Glossary", engine=False),
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

    >>> page_of_file("/srv/specviz/pages/cost_per_token.py").id
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
    (pages/dloop.py -> /dloop); see appkit.frame for why that matters."""
    return st.navigation({
        "specviz": [st.Page(HOME.file, title=HOME.title, icon="⚡", default=True)],
        "Lessons": [st.Page(p.file, title=p.title) for p in LESSONS],
    })


def current_page(nav) -> str:
    """The url path of the page this run shows: the browser's address names it (also in the first
    run of a fresh server, see appkit.frame); the home page's address names none, nor does AppTest's,
    and then the navigation answers."""
    path = urllib.parse.urlsplit(st.context.url or "").path.rstrip("/").rsplit("/", 1)[-1]
    return path if path and any(p.url_path == path for p in COURSE) else nav.url_path
