"""Streamlit plumbing shared by every page: models, the engine lock, the sidebar, lesson headers.

The host's config file (specviz.hosting.config) names the model sets the sidebar offers and the limits
of one run. Each set loads once per server and device (st.cache_resource) and is shared by every session,
so every engine call that touches them goes through `engine()`: one lock, which also keeps
live timings clean (two sessions never time a forward at the same moment).

Session state that must survive a page switch uses keys starting with `keep_`: app.py
re-assigns them on every run, which stops Streamlit from dropping a widget's value when the
page that owns it is not on screen.

What it leaves out: lesson logic (specviz) and drawing (specviz.viz).
"""
import contextlib
import os
import threading
from pathlib import Path

import streamlit as st
import torch

from specviz.lessons.checklist import cpu_name
from specviz.hosting.config import (DEFAULT, REPO_CONFIG, Config, Limits, ModelSetError, check_limits, choose_set,
                            load_config, load_model_set)
from specviz.generator.models import DRAFTER_LABELS, pick_device
from specviz.viz.style import stylesheet

KEEP = "keep_"
HOME = "pages/home.py"
LESSONS = [   # (file, title): the url path is the file's stem, as Streamlit derives it (see navigation)
    ("pages/draft_and_verify.py", "1 · Draft and verify"),
    ("pages/sampling_lossless.py", "2 · Sampling stays lossless"),
    ("pages/parallel_drafting.py", "3 · Parallel drafting"),
    ("pages/verification_budget.py", "4 · Verification budget"),
    ("pages/biased_admission.py", "5 · Biased admission"),
    ("pages/dloop.py", "6 · DLoop: more stages, one check"),
    ("pages/cost_per_token.py", "7 · Cost per token"),
    ("pages/reading_a_speedup.py", "8 · Reading a speedup"),
]
FRAMED = "app_frame_running"   # True while app.py runs the page (see navigation)


def navigation():
    """The app's pages. Each keeps the url path Streamlit derives from its file name
    (pages/dloop.py -> /dloop); see `frame` for why that matters."""
    return st.navigation({
        "specviz": [st.Page(HOME, title="Home: draft, then verify", icon="⚡", default=True)],
        "Lessons": [st.Page(path, title=title) for path, title in LESSONS],
    })


def frame():
    """What app.py draws around every page: page config, kept state, navigation, sidebar.

    app.py calls it on every run and then runs the page. A page calls `ensure_frame` first, for
    the one run app.py does not start: until some session has called st.navigation, Streamlit
    treats a folder named pages/ as a legacy multipage app, and a lesson's link opened as the
    very first request of a fresh server runs the lesson file directly. Because the url paths
    agree with the file names, that request still finds its page (no "Page not found"), and
    the page then draws the frame itself. (Streamlit's AppTest resets that legacy mode before
    every run, which is why the mark is per run.)
    """
    st.session_state[FRAMED] = True
    st.set_page_config(page_title="specviz · speculative decoding", page_icon="⚡", layout="wide")
    keep_session_state()
    nav = navigation()
    sidebar()
    return nav


def ensure_frame():
    """Draw app.py's frame when this page was started without it (see `frame`)."""
    if not st.session_state.get(FRAMED):
        frame()
        st.session_state[FRAMED] = False   # no app.py around this run to clear the mark


@st.cache_resource(show_spinner=False)
def _read_config(path: str, mtime: float) -> tuple[Config, str | None]:
    """The host's config (re-read when the file changes); a bad file falls back to the defaults."""
    try:
        return load_config(path or None), None
    except ValueError as e:
        return DEFAULT, f"The server's config file was not used: {e}"


def config() -> Config:
    path = os.environ.get("SPECVIZ_CONFIG", "")
    where = Path(path) if path else REPO_CONFIG
    cfg, error = _read_config(path, where.stat().st_mtime if where.is_file() else 0.0)
    st.session_state["config_error"] = error
    return cfg


def limits() -> Limits:
    """What one run may ask for on this server (the host's config)."""
    return config().limits


def new_tokens(wanted: int) -> int:
    """A page's run length, cut to the host's limit."""
    return min(wanted, limits().max_new_tokens)


def block_slider(where, label: str, most: int, key: str) -> int:
    """A slider for the block size k, stopping at `most` or the host's limit, whichever is lower."""
    top = min(most, limits().max_block_size)
    at_most(key, top)
    return where.slider(label, 1, top, key=key)


def check(prompt: str, settings) -> None:
    """Raise ValueError, with one sentence per excess, when a run asks for more than the host allows."""
    too_big = check_limits(limits(), prompt, settings)
    if too_big:
        raise ValueError(" ".join(too_big))


@st.cache_resource(show_spinner="Loading the models (once per server)…")
def _load(set_name: str, device: str):
    """One model set on one device, shared by every session (a changed set needs a server restart)."""
    return load_model_set(config(), set_name, device)


@st.cache_resource
def _lock() -> threading.Lock:
    return threading.Lock()


@contextlib.contextmanager
def engine():
    """Hold the server-wide engine lock while calling the models."""
    with _lock():
        yield


def devices() -> list[str]:
    """Devices this server can run on: the CPU, plus each GPU torch sees."""
    out = ["cpu"]
    if torch.cuda.is_available():
        out += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    if torch.backends.mps.is_available():
        out.append("mps")
    return out


def device_label(device: str) -> str:
    if device.startswith("cuda"):
        return f"GPU {torch.cuda.get_device_name(torch.device(device))}"
    if device == "mps":
        return "Apple GPU (MPS)"
    return f"CPU {cpu_name()} ({torch.get_num_threads()} threads)"


def _set_device(cfg: Config, name: str) -> str:
    """Where a set runs unless the sidebar says otherwise: its configured device, auto resolved
    (a configured GPU this server lacks falls back to the CPU, which the sidebar then shows)."""
    configured = cfg.sets[name].device
    dev = pick_device(None if configured == "auto" else configured)[0]
    label = f"cuda:{dev.index or 0}" if dev.type == "cuda" else dev.type
    return label if label in devices() else "cpu"


def models():
    """The shared ModelSet chosen in the sidebar, or None (with the reason kept for the page)."""
    cfg = config()
    name = st.session_state.get(KEEP + "set", cfg.default)
    device = st.session_state.get(KEEP + "device") or _set_device(cfg, name)
    try:
        m = _load(name, device)
    except (ModelSetError, ValueError) as e:
        st.session_state["models_error"] = f"{e}. Choose another model set in the sidebar."
        return None
    st.session_state.pop("models_error", None)
    return m


def require_models():
    """The models, or stop the page with a clear message naming what is missing."""
    m = models()
    if m is None:
        st.error(f"The models are not available: {st.session_state.get('models_error')}")
        st.stop()
    return m


def drafter_label(name: str) -> str:
    return DRAFTER_LABELS.get(name, name)


def keep_session_state():
    """Re-assign every keep_ key so its value outlives the page that shows its widget."""
    for key in list(st.session_state.keys()):
        if str(key).startswith(KEEP):
            st.session_state[key] = st.session_state[key]


def default(key: str, value):
    """Give a widget key its first value (so widgets never also need value=)."""
    if key not in st.session_state:
        st.session_state[key] = value


def at_most(key: str, most):
    """Keep a widget's value within a host limit its range stops at (Streamlit raises otherwise)."""
    if st.session_state.get(key, most) > most:
        st.session_state[key] = most


def presenter() -> bool:
    return bool(st.session_state.get(KEEP + "presenter", False))


def css():
    """The page's stylesheet; every page calls it first, so it also makes sure app.py's frame ran."""
    ensure_frame()
    st.html(stylesheet(presenter()))


def sidebar():
    """Model set and device, presenter mode, one-line status."""
    cfg = config()
    with st.sidebar:
        if st.session_state.get("config_error"):
            st.error(st.session_state["config_error"])
        if st.session_state.get(KEEP + "set", cfg.default) not in cfg.sets:
            st.session_state[KEEP + "set"] = cfg.default   # the host removed the set this session was on
        if KEEP + "set" not in st.session_state:
            # a shared link may name a set; only configured names are accepted, never a path
            try:
                st.session_state[KEEP + "set"] = choose_set(cfg, st.query_params.get("set"))
            except ValueError as e:
                st.session_state[KEEP + "set"] = cfg.default
                st.warning(f"The link's model set was ignored: {e}.")
        st.selectbox("Model set", list(cfg.sets), key=KEEP + "set", format_func=lambda n: cfg.sets[n].label,
                     on_change=lambda: st.session_state.pop(KEEP + "device", None),
                     help="The host's configured model sets (specviz.toml).")
        default(KEEP + "device", _set_device(cfg, st.session_state[KEEP + "set"]))
        st.selectbox("Device", devices(), key=KEEP + "device", format_func=device_label)
        st.toggle("Presenter mode (large type)", key=KEEP + "presenter",
                  help="Large type for a projector. Step keys on lesson 1: → next phase, ← back, N next round, "
                       "P play, Home reset.")
        m = models()
        if m is None:
            st.error(f"No models: {st.session_state.get('models_error')}")
        else:
            params = sum(p.numel() for p in m.target.parameters()) / 1e6
            drafters = ", ".join(m.drafter_models)
            st.caption(f"**Model set:** {m.name} · target {params:.1f} M params "
                       f"({m.target.config.num_hidden_layers} layers) · drafters: {drafters} · "
                       f"{str(m.dtype).replace('torch.', '')} on {m.device}")


def header(title: str, source: str, look_for: str):
    """A lesson's title, what to look for, and the seed passage it comes from."""
    css()
    st.title(title)
    st.markdown(look_for)
    st.caption(f"Source: {source}")


def html(markup: str):
    """Render builder output (already escaped by specviz.viz)."""
    st.html(markup)
