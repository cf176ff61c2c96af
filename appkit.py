"""Streamlit plumbing shared by every page: models, the engine lock, the sidebar, lesson headers.

Models load once per server and device (st.cache_resource) and are shared by every session,
so every engine call that touches them goes through `engine()`: one lock, which also keeps
live timings clean (two sessions never time a forward at the same moment).

Session state that must survive a page switch uses keys starting with `keep_`: app.py
re-assigns them on every run, which stops Streamlit from dropping a widget's value when the
page that owns it is not on screen.

What it leaves out: lesson logic (specviz) and drawing (specviz.viz).
"""
import contextlib
import threading

import streamlit as st
import torch

from specviz.checklist import cpu_name
from specviz.models import DRAFTER_LABELS, load_embedded
from specviz.viz.style import stylesheet

KEEP = "keep_"
LESSONS = [   # (file, title, url path)
    ("pages/l1_draft_and_verify.py", "1 · Draft and verify", "draft-and-verify"),
    ("pages/l2_sampling_lossless.py", "2 · Sampling stays lossless", "sampling-lossless"),
    ("pages/l3_parallel_drafting.py", "3 · Parallel drafting", "parallel-drafting"),
    ("pages/l4_verification_budget.py", "4 · Verification budget", "verification-budget"),
    ("pages/l5_biased_admission.py", "5 · Biased admission", "biased-admission"),
    ("pages/l6_dloop.py", "6 · DLoop: more stages, one check", "dloop"),
    ("pages/l7_cost_per_token.py", "7 · Cost per token", "cost-per-token"),
    ("pages/l8_reading_a_speedup.py", "8 · Reading a speedup", "reading-a-speedup"),
]


@st.cache_resource(show_spinner="Loading the models (once per server)…")
def _load(device: str):
    return load_embedded(device)


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
    return out


def device_label(device: str) -> str:
    if device.startswith("cuda"):
        return f"GPU {torch.cuda.get_device_name(torch.device(device))}"
    return f"CPU {cpu_name()} ({torch.get_num_threads()} threads)"


def models():
    """The shared ModelSet for the chosen device, or None (with the reason kept for the page)."""
    device = st.session_state.get(KEEP + "device", devices()[-1])
    try:
        m = _load(device)
    except (FileNotFoundError, OSError) as e:
        st.session_state["models_error"] = str(e)
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


def presenter() -> bool:
    return bool(st.session_state.get(KEEP + "presenter", False))


def css():
    st.html(stylesheet(presenter()))


def sidebar():
    """Model set and device, presenter mode, one-line status."""
    with st.sidebar:
        default(KEEP + "device", devices()[-1])
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
