"""Form widgets and labels every lesson uses: the settings rows, the block-size slider, escaping.

Each widget is keyed, and its first value given with appkit.state.default, so no widget also
needs value= (Streamlit warns when both set it).

What it leaves out: the prediction widget (appkit.predict), what the settings mean (specviz).
"""
import re

import streamlit as st

from appkit.course import bounds, by_id, most_k
from appkit.runtime import limits
from appkit.state import at_most, default, key
from specviz.generator.drafters.names import DRAFTER_LABELS
from specviz.lessons import pricing

VERIFIER_LABELS = {"greedy": "greedy (argmax match)", "sampling": "speculative sampling (ratio + residual)",
                   "match": "target-draw matching"}
GPU_EDIT = "keep_gpu_"   # + a field of pricing.FIELDS: the large-target profile as lesson 7 edits it


def result_caption(name: str, text: str, where=st):
    """A caption that carries a result (a race's verdict, what a measurement found): drawn at body size
    (specviz.viz.style.RESULT_CSS finds it by its container's key, result_<name>), where a grey caption
    read small on a projector. `where` is the slot to draw it in (an st.empty, a column)."""
    where.container(key=f"result_{name}").caption(text)


def block_slider(where, label: str, page: str) -> int:
    """A page's slider for the block size k, kept under keep_<page>_k: it stops at the bound its link
    accepts (its course record's, appkit.course.most_k) or the host's limit, whichever is lower."""
    top, name = min(most_k(page), limits().max_k), key(page, "k")
    at_most(name, top)
    return where.slider(label, 1, top, key=name)


def defaults(page: str):
    """Give each of a page's settings its course record's first value (appkit.course), once: a
    setting whose first value only the run knows (the set's drafters) the page gives itself."""
    for name, f in by_id(page).settings.items():
        if key(page, name) not in st.session_state and (value := f.first()) is not None:
            st.session_state[key(page, name)] = value


def run_row(page: str, prompts: list[str], drafters: list[str], drafter_box: str, k_label: str) -> int:
    """One row of a live lesson's settings: prompt, drafter and k, kept under keep_<page>_* (the
    page has given its record's first values, `defaults`); returns k."""
    c1, c2, c3 = st.columns([2, 2, 1])
    default(key(page, "drafter"), drafters[0])
    c1.selectbox("Prompt", prompts, key=key(page, "prompt"), format_func=prompt_label)
    c2.selectbox(drafter_box, drafters, key=key(page, "drafter"), format_func=drafter_label)
    return block_slider(c3, k_label, page)


def rounds_and_seed(page: str) -> tuple[int, int]:
    """One row of a simulation's settings: how many rounds to draw (the choices its course record
    allows) and the random seed, kept under keep_<page>_n and keep_<page>_seed (their first values
    given by `defaults`); returns (rounds, seed)."""
    c1, c2 = st.columns(2)
    n = c1.select_slider("rounds", by_id(page).settings["n"].options, key=key(page, "n"))
    return n, c2.number_input("random seed", *bounds(page, "seed"), step=1, key=key(page, "seed"))


def prompt_label(prompt: str) -> str:
    """A prompt on one line of a select box: a code prompt's line breaks show as ↵.

    >>> prompt_label('def f(x):\\n    return')
    'def f(x): ↵    return'
    """
    return prompt.replace("\n", " ↵")


def drafter_label(name: str) -> str:
    return DRAFTER_LABELS.get(name, name)


def html(markup: str):
    """Render builder output (already escaped by specviz.viz)."""
    st.html(markup)


def plain(text: str) -> str:
    r"""Text from a user (a file name, a value out of a file) for a markdown element, shown as typed:
    every sign that could start a link, an image, code, markup or a formula is escaped.

    >>> plain("![x](http://h) <b>*a*</b>")
    '\\!\\[x\\](http://h) \\<b\\>\\*a\\*\\</b\\>'
    """
    return re.sub(r"([\\`*\[\]<>!$~|])", r"\\\1", text)


def gpu_profile() -> pricing.Profile:
    """The large-target profile with this session's edits (lesson 7 edits it, lesson 6 prices with it)."""
    base = pricing.LARGE_GPU
    return pricing.profile_with(base, **{n: float(st.session_state.get(GPU_EDIT + n, getattr(base, n))) for n in pricing.FIELDS})
