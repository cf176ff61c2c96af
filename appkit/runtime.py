"""What a page runs on: the host's config, the shared model sets, and the one engine lock.

The host's config file (specviz.hosting.config) names the model sets the sidebar offers and the
limits of one run. Each set loads once per server and device (st.cache_resource) and is shared by
every session, so every engine call that touches them goes through `engine()`: one lock, which
also keeps live timings clean (two sessions never time a forward at the same moment).

What it leaves out: the sidebar that chooses a set (appkit.frame), the models themselves (specviz).
"""
import contextlib
import os
import threading
from pathlib import Path

import streamlit as st
import torch

from appkit.screen import stop
from appkit.state import DEVICE, MODEL_SET
from specviz.generator.models import pick_device
from specviz.generator.threads import fit_threads
from specviz.hosting.config import (DEFAULT, REPO_CONFIG, Config, Limits, ModelSetError, check_limits,
                                    load_config, load_model_set)
from specviz.lessons.checklist import cpu_name

S_INPUTS = "inputs_of_"   # + a remembered figure's name: the inputs it was computed from (see remember)


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


def check(prompt: str, settings) -> None:
    """Raise ValueError, with one sentence per excess, when a run asks for more than the host allows."""
    too_big = check_limits(limits(), prompt, settings)
    if too_big:
        raise ValueError(" ".join(too_big))


@st.cache_resource
def _lock() -> threading.Lock:
    return threading.Lock()


@contextlib.contextmanager
def engine():
    """Hold the server-wide engine lock while calling the models."""
    with _lock():
        yield


@st.cache_resource(show_spinner="Loading the models (once per server)…")
def _load(set_name: str, device: str):
    """One model set on one device, shared by every session (a changed set needs a server restart).
    On a CPU the thread count is then measured on the cores free now (specviz.generator.threads)."""
    m = load_model_set(config(), set_name, device)
    with engine():
        fit_threads(m)
    return m


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
    return f"CPU {cpu_name()}"   # the thread count changes as it is re-measured: the status line shows it


def set_device(cfg: Config, name: str) -> str:
    """Where a set runs unless the sidebar says otherwise: its configured device, auto resolved
    (a configured GPU this server lacks falls back to the CPU, which the sidebar then shows)."""
    configured = cfg.sets[name].device
    dev = pick_device(None if configured == "auto" else configured)[0]
    label = f"cuda:{dev.index or 0}" if dev.type == "cuda" else dev.type
    return label if label in devices() else "cpu"


def models():
    """The shared ModelSet chosen in the sidebar, or None (with the reason kept for the page)."""
    cfg = config()
    name = st.session_state.get(MODEL_SET, cfg.default)
    device = st.session_state.get(DEVICE) or set_device(cfg, name)
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
        stop()
    return m


def remember(name: str, inputs: tuple, compute):
    """`compute()` run again only when `inputs` change (kept in this session under `name`), so a
    rerun for another widget on the page does not run the models again for the same figure."""
    if S_INPUTS + name not in st.session_state or st.session_state[S_INPUTS + name] != inputs:
        with engine():
            st.session_state[name] = compute()
        st.session_state[S_INPUTS + name] = inputs
    return st.session_state[name]
