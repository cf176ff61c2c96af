"""The course: its pages in order, each with a stable id, and the navigation between them.

Each page is declared once here: an id that its session keys (`keep_<id>_<name>`), its
predictions, its shared results and its link use, its title, its linked settings with their bounds
and first values, and the lessons and viz modules it uses. The
id is never read off the title, so renumbering or renaming a lesson changes no key and breaks no
shared link. A page's url path is its file's stem, as Streamlit derives it: links and QR codes made
before keep opening the same page, so a page file keeps its name.

What it leaves out: what each page draws (course_pages/), the frame around them (appkit.frame).
"""
import urllib.parse
from dataclasses import dataclass, field, replace
from importlib import import_module
from pathlib import Path

import streamlit as st

from appkit.fields import DRAFTER, LABEL, PRESET, SEED, TEXT, Field
from specviz.generator.settings import VERIFIERS
from specviz.lessons import glossary
from specviz.lessons.presets import PRESETS

CHECKS_AHEAD = f"*{glossary.CHECKS_AHEAD}*"   # the two source articles, cited by title
DRAFT_VERIFY = f"*{glossary.DRAFT_VERIFY}*"


@dataclass(frozen=True)
class Page:
    """A page of the course, declared once: what its keys, links and class use, where its code is.

    `settings` are its linked settings by name, each with its bounds and first value
    (appkit.fields.Field): its link is read against them, its widgets take their bounds from them
    (`bounds`) and their first values (appkit.widgets.defaults), so each is written once. `lessons` and `viz` name the specviz.lessons and specviz.viz modules it computes and draws
    with (the README's lesson map; tests/unit/test_readme_map.py checks both against its imports).
    """
    id: str      # stable: keys and links use it
    file: str
    title: str
    engine: bool = True   # its imports bring the engine (and transformers): app.py imports that first
    settings: dict = field(default_factory=dict, hash=False, compare=False)
    lessons: tuple = ()
    viz: tuple = ()
    links_itself: bool = False   # lesson 1 links its running generation, round and phase (appkit.links.from_params)

    @property
    def url_path(self) -> str:
        return Path(self.file).stem


def held_by(module: str, get):
    """A default that a lessons module holds (a source's number, a measured opening), read from it when
    a page first asks: importing it here would bring the engine into the first page's imports."""
    return lambda: get(import_module(f"specviz.lessons.{module}"))


def starting(f: Field, value) -> Field:
    """`f` with the page's first value."""
    return replace(f, default=value)


K8, TEMP, FIRST_PRESET = Field(int, 1, 8), Field(float, 0.1, 2.0), starting(PRESET, PRESETS[0])
HOME = Page("home", "course_pages/home.py", "Home: draft, then verify", engine=False,   # its race imports it when it runs
            settings={"prompt": starting(TEXT, PRESETS[0]), "drafter": DRAFTER, "k": K8},   # drafter, k: measured
            lessons=("home", "readable", "presets"), viz=("race",))
LESSONS = [
    Page("draft", "course_pages/draft_and_verify.py", "1 · Draft and verify", links_itself=True,
         settings={"prompt": starting(TEXT, PRESETS[0]), "drafter": starting(DRAFTER, "ar"),
                   "verifier": Field(str, options=VERIFIERS, default="greedy"), "k": Field(int, 1, 12, default=4),
                   "temperature": Field(float, 0.05, 2.0, default=1.0), "seed": Field(int, 0, 2**31 - 1, default=0),
                   "max_new": Field(int, 1, 2000, default=32)},
         lessons=("draft", "cursor", "presets"), viz=("tokens", "histories", "cache", "stages", "export")),
    Page("sampling", "course_pages/sampling_lossless.py", "2 · Sampling stays lossless",
         settings={"source": LABEL, "prompt": FIRST_PRESET, "drafter": DRAFTER,
                   "temp": starting(TEMP, held_by("sampling", lambda m: m.READABLE.temperature)),
                   "other": Field(bool, default=False),
                   "n": Field(int, 10, 50000, options=(10, 100, 1000, 10000, 50000), default=1000),
                   "seed": starting(SEED, 0), "gen_seed": starting(SEED, 1)},
         lessons=("sampling", "presets"), viz=("distributions", "charts")),
    Page("parallel", "course_pages/parallel_drafting.py", "3 · Parallel drafting",
         lessons=("parallel", "presets"), viz=("parallel",)),
    Page("budget", "course_pages/verification_budget.py", "4 · Verification budget",
         settings={"R": Field(int, 1, len(PRESETS), default=4), "k": Field(int, 1, 6, default=4)},
         lessons=("budget", "admission", "presets"), viz=("admission", "stages", "charts")),
    Page("admission", "course_pages/biased_admission.py", "5 · Biased admission", engine=False,
         settings={"p": Field(float, 0.0, 1.0, default=held_by("admission", lambda m: m.APPENDIX_A["p"][0])),
                   "q": Field(float, 0.05, 1.0, default=held_by("admission", lambda m: m.APPENDIX_A["q"][0])),
                   "n": Field(int, 100, 20000, options=(100, 500, 1000, 5000, 20000), default=5000),
                   "seed": starting(SEED, 0)},
         lessons=("admission",), viz=("admission", "charts")),
    Page("dloop", "course_pages/dloop.py", "6 · DLoop: more stages, one check",   # where a second stage adds tokens
         settings={"S": Field(int, 1, 6, default=3), "k": starting(K8, held_by("dloop", lambda m: m.OPENING["k"])),
                   "prompt": starting(PRESET, held_by("dloop", lambda m: m.OPENING["prompt"])),
                   "g": Field(float, -20.0, 0.0, default=held_by("dloop", lambda m: m.OPENING["g"])), "drafter": DRAFTER,
                   "sweep": Field(list, -20.0, 0.0, default=held_by("dloop", lambda m: m.OPENING["sweep"]))},
         lessons=("dloop", "pricing", "presets"), viz=("stages", "tokens")),
    Page("cost", "course_pages/cost_per_token.py", "7 · Cost per token",   # the source's worked example first
         settings={"base": Field(float, 0.1, 1000.0, default=held_by("cost", lambda m: m.Calculator().baseline_ms)),
                   "round": Field(float, 0.1, 5000.0, default=held_by("cost", lambda m: m.Calculator().round_ms)),
                   "tokens": Field(int, 1, 64, default=held_by("cost", lambda m: m.Calculator().tokens)),
                   "prompt": FIRST_PRESET, "drafter": DRAFTER, "k": Field(int, 1, 12, default=4)},
         lessons=("cost", "pricing", "presets"), viz=("costs", "regimes")),
    Page("speedup", "course_pages/reading_a_speedup.py", "8 · Reading a speedup",
         lessons=("speedup", "cost", "workloads", "presets")),
    Page("inside", "course_pages/inside_a_round.py", "9 · Inside a round",
         settings={"prompt": FIRST_PRESET, "drafter": DRAFTER, "k": starting(K8, 4), "temp": starting(TEMP, 0.6),
                   "topk": Field(int, 0, 50, default=10)},
         lessons=("inside", "markup", "presets"), viz=("inside", "stages", "charts")),
    Page("glossary", "course_pages/glossary.py", "Glossary", engine=False, lessons=("glossary",)),
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


def by_id(page_id: str) -> Page:
    """The page with id `page_id`. KeyError for no page.

    >>> by_id("dloop").settings["k"].hi
    8
    """
    return {p.id: p for p in COURSE}[page_id]


def bounds(page_id: str, name: str) -> tuple:
    """The lowest and highest value of a page's linked setting: its widget's range and its link's.

    >>> bounds("dloop", "S"), bounds("sampling", "temp")
    ((1, 6), (0.1, 2.0))
    """
    f = by_id(page_id).settings[name]
    return f.lo, f.hi


def most_k(page_id: str) -> int:
    """The largest block size k a page's slider offers and its link accepts (before the host's limit).

    >>> most_k("dloop"), most_k("draft")
    (8, 12)
    """
    return int(bounds(page_id, "k")[1])


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
