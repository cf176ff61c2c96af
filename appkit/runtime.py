"""What a page runs on: the host's config, the shared model sets, and the one engine lock.

The host's config file (specviz.hosting.config) names the model sets the sidebar offers and the
limits of one run. Each set loads once per server and device, in a thread of its own started once the
first run has drawn its page (`start_loading`, called by app.py) or by the first action that needs the
models, whichever comes first (`loader`), and is shared by every session: a page draws at once, and
only what runs the models waits for them (`models`, `require_models`, with a "loading the models"
spinner). The code that runs them is imported first, by one thread (appkit.engine_code). A page runs
them through `measure` (or `remember`): one lock, which also keeps live timings clean (two sessions
never time a forward at the same moment).

What it leaves out: the sidebar that chooses a set (appkit.frame), the models themselves (specviz).
"""
import contextlib
import contextvars
import os
import threading
from pathlib import Path

import streamlit as st
import torch

from appkit.engine_code import ENGINE_CODE, import_engine_code
from appkit.screen import stop
from appkit.state import DEVICE, MODEL_SET, MODELS_ERROR, models_error
from specviz.generator.devices import cpu_name, pick_device
from specviz.generator.drafters.names import DRAFTER_LABELS
from specviz.generator.threads import fit_threads
from specviz.hosting.background import Background
from specviz.hosting.config import DEFAULT, REPO_CONFIG, Config, Limits, ModelSetError, check_limits, load_config

S_INPUTS = "inputs_of_"          # + a remembered figure's name: the inputs it was computed from (remember)


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


@st.cache_resource(show_spinner=False)
def loader(set_name: str, device: str) -> Background:
    """One model set on one device, loading in its own thread, shared by every session. A changed
    set, or one that failed to load (its error is kept and shown), needs a server restart. On a CPU
    the thread count is then measured on the cores free now (specviz.generator.threads); the load's
    value is (models, that measurement). Created unstarted: see `start_loading`."""
    cfg, lock = config(), _lock()

    def load():
        # imported by ENGINE_CODE's thread: transformers' model classes take seconds to import, and the
        # first page draws without them (nothing else the pages draw at first needs them)
        ENGINE_CODE.wait()
        from specviz.hosting.model_sets import load_model_set
        m = load_model_set(cfg, set_name, device)
        with lock:
            return m, fit_threads(m)
    return Background(load, name=f"load {set_name} on {device}", start=False)


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


def chosen() -> tuple[str, str]:
    """The model set and device this session's sidebar names."""
    cfg = config()
    name = st.session_state.get(MODEL_SET, cfg.default)
    return name, st.session_state.get(DEVICE) or set_device(cfg, name)


def loading() -> Background:
    """The load of this session's set (see `loader`), which may not have started yet."""
    return loader(*chosen())


def start_loading():
    """Start loading this session's set, if nothing has: app.py calls it once a run has drawn its page,
    since loading (transformers' imports, the thread count's measurement) takes both cores for seconds
    (on the 2-core host the home page's race button came 9.2-9.5 s after `streamlit run`, 9.8-10.1 s
    with the load started mid-run; scripts/first_page.py). What needs the models starts it itself.
    This run then waits for the engine's code, which the load waits for too (appkit.engine_code)."""
    loading().start()   # first: its seconds, which the pages show, count from here
    import_engine_code()


_NO_WAIT = contextvars.ContextVar("models_no_wait", default=False)


@contextlib.contextmanager
def without_waiting():
    """`models()` inside returns None while the set still loads, instead of waiting for it."""
    token = _NO_WAIT.set(True)
    try:
        yield
    finally:
        _NO_WAIT.reset(token)


def models(wait: bool = True):
    """The shared ModelSet chosen in the sidebar, or None (with the reason kept for the page).

    While the set loads, `wait` shows a spinner until it has (what runs the models needs them);
    `wait=False`, or a call inside `without_waiting`, returns None at once (what only shows them)."""
    job = loading()
    if not job.done:
        if not wait or _NO_WAIT.get():
            return None
        with st.spinner(f"Loading the models (once per server; {job.seconds:.0f} s so far)…"):
            with contextlib.suppress(ModelSetError, ValueError):   # said below
                m, fit = job.wait()
                if m.device.type == "cpu":
                    # torch's thread count is per thread: the load measured it in its own, and threads
                    # started after it take it, but this one was already running
                    torch.set_num_threads(fit["threads"])
    if st.session_state.get(STATUS_LOADING):
        show_status()   # the sidebar, drawn earlier in this run, said they were loading
    try:
        m, _ = job.wait()
    except (ModelSetError, ValueError) as e:
        st.session_state[MODELS_ERROR] = f"{e}. Choose another model set in the sidebar."
        return None
    st.session_state.pop(MODELS_ERROR, None)
    return m


STATUS_SLOT = "sidebar_models_status"   # the sidebar's status line (an st.empty), redrawn once the models arrive
STATUS_LOADING = "sidebar_models_loading"   # True while that line says they are loading


def show_status():
    """The sidebar's one-line status of the models, in the slot appkit.frame keeps for it."""
    slot = st.session_state.get(STATUS_SLOT)
    if slot is None:
        return
    job = loading()
    st.session_state[STATUS_LOADING] = not job.done
    with slot.container():
        if not job.done:
            st.caption(f"**Loading the models** (once per server; {job.seconds:.0f} s so far). Pages draw now; "
                       "what runs the models waits for them.")
            return
        m = models()
        if m is None:
            st.error(f"No models: {models_error()}")
            return
        params = sum(p.numel() for p in m.target.parameters()) / 1e6
        label = lambda d: DRAFTER_LABELS.get(d, d)   # noqa: E731 (appkit.widgets.drafter_label, which imports this module)
        drafters = ", ".join(f"{label(d)} ({m.kind(d)})" if m.kind(d) else label(d) for d in m.drafter_models)
        st.caption(f"**Model set:** {m.name} · target {params:.1f} M params "
                   f"({m.target.config.num_hidden_layers} layers) · drafters: {drafters} · "
                   f"{str(m.dtype).replace('torch.', '')} on {m.device}"
                   + (f", {torch.get_num_threads()} thread(s), measured on the free cores"
                      if m.device.type == "cpu" else ""))


def require_models():
    """The models (waiting for them while they load), or stop the page with a clear message naming
    what is missing."""
    m = models()
    if m is None:
        st.error(f"The models are not available: {models_error()}")
        stop()
    return m


def measure(compute, *args, **kwargs):
    """`compute(*args, **kwargs)` under the engine lock: how a page runs a lessons function on the
    models (a page never takes the lock itself: tests/app/test_page_ids.py).

    >>> measure(sum, [1, 2, 3])
    6
    """
    with engine():
        return compute(*args, **kwargs)


def remember(name: str, inputs: tuple, compute):
    """`compute()` run again only when `inputs` change (kept in this session under `name`), so a
    rerun for another widget on the page does not run the models again for the same figure."""
    if S_INPUTS + name not in st.session_state or st.session_state[S_INPUTS + name] != inputs:
        st.session_state[name] = measure(compute)
        st.session_state[S_INPUTS + name] = inputs
    return st.session_state[name]
