"""Streamlit plumbing shared by every page: models, the engine lock, the sidebar, lesson headers.

The host's config file (specviz.hosting.config) names the model sets the sidebar offers and the limits
of one run. Each set loads once per server and device (st.cache_resource) and is shared by every session,
so every engine call that touches them goes through `engine()`: one lock, which also keeps
live timings clean (two sessions never time a forward at the same moment).

Session state that must survive a page switch uses keys starting with `keep_`: app.py
re-assigns them on every run, which stops Streamlit from dropping a widget's value when the
page that owns it is not on screen.

An error no page expected never shows its traceback: `apology` (around every page, in app.py)
logs it under a short id in the server's log (standard error) and shows the id with an apology.

What it leaves out: lesson logic (specviz) and drawing (specviz.viz).
"""
import contextlib
import json
import logging
import os
import re
import secrets
import threading
import time
import urllib.parse
from pathlib import Path

import streamlit as st
import torch
from streamlit.errors import FragmentHandledException
from streamlit.runtime.scriptrunner import get_script_run_ctx

from specviz.generator.models import DRAFTER_LABELS, pick_device
from specviz.generator.threads import fit_threads
from specviz.hosting.app_state import LINKED, read_link, write
from specviz.hosting.classroom import ClassError, Classroom, MemoryStore, RedisStore, new_token
from specviz.hosting.config import (DEFAULT, REPO_CONFIG, Config, Limits, ModelSetError, check_limits, choose_set,
                            load_config, load_model_set)
from specviz.lessons import race
from specviz.lessons.checklist import cpu_name
from specviz.viz import charts
from specviz.viz.export import chart_config, qr_image  # noqa: F401  (chart_config: for the pages' main charts)
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
    ("pages/inside_a_round.py", "9 · Inside a round"),
    ("pages/glossary.py", "Glossary"),
]
S_INPUTS = "inputs_of_"   # + a remembered figure's name: the inputs it was computed from (see remember)
FRAMED = "app_frame_running"   # True while app.py runs the page (see navigation)
# a page's name in its keep_ keys and in LINKED: home, l1 … l9 for the numbered lessons, else its file's stem
PAGE_PREFIX = {"": "home", Path(HOME).stem: "home"} | {
    Path(path).stem: f"l{title.split(' ')[0]}" if title[0].isdigit() else Path(path).stem for path, title in LESSONS}
PRESENTER_PARAM = "presenter"   # ?presenter=1 opens a page in presenter mode


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
    presenter_from_link()   # before the page config: presenter mode opens with the sidebar collapsed
    st.set_page_config(page_title="specviz · speculative decoding", page_icon="⚡", layout="wide",
                       initial_sidebar_state="collapsed" if presenter() else "auto")
    charts.TYPE_SIZE.set(charts.PRESENTER_SIZE if presenter() else charts.BASE_SIZE)
    keep_session_state()
    nav = navigation()
    sidebar()
    follow_class(nav)
    link_state(current_page(nav))
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


def run_row(prefix: str, prompts: list[str], drafters: list[str], drafter_box: str, k_label: str,
            most_k: int) -> int:
    """One row of a live lesson's settings: prompt, drafter and k, kept under keep_<prefix>_*;
    returns k."""
    c1, c2, c3 = st.columns([2, 2, 1])
    default(f"keep_{prefix}_prompt", prompts[0])
    default(f"keep_{prefix}_drafter", drafters[0])
    default(f"keep_{prefix}_k", 4)
    c1.selectbox("Prompt", prompts, key=f"keep_{prefix}_prompt", format_func=prompt_label)
    c2.selectbox(drafter_box, drafters, key=f"keep_{prefix}_drafter", format_func=drafter_label)
    return block_slider(c3, k_label, most_k, f"keep_{prefix}_k")


def rounds_and_seed(prefix: str, choices: list[int], start: int) -> tuple[int, int]:
    """One row of a simulation's settings: how many rounds to draw, and the random seed, kept
    under keep_<prefix>_n and keep_<prefix>_seed; returns (rounds, seed)."""
    c1, c2 = st.columns(2)
    default(f"keep_{prefix}_n", start)
    default(f"keep_{prefix}_seed", 0)
    n = c1.select_slider("rounds", choices, key=f"keep_{prefix}_n")
    return n, c2.number_input("random seed", 0, 10**6, step=1, key=f"keep_{prefix}_seed")


def check(prompt: str, settings) -> None:
    """Raise ValueError, with one sentence per excess, when a run asks for more than the host allows."""
    too_big = check_limits(limits(), prompt, settings)
    if too_big:
        raise ValueError(" ".join(too_big))


@st.cache_resource(show_spinner="Loading the models (once per server)…")
def _load(set_name: str, device: str):
    """One model set on one device, shared by every session (a changed set needs a server restart).
    On a CPU the thread count is then measured on the cores free now (specviz.generator.threads)."""
    m = load_model_set(config(), set_name, device)
    with engine():
        fit_threads(m)
    return m


@st.cache_resource(show_spinner=False)
def race_default(set_name: str, device: str, _models, prompt: str) -> dict:
    """The drafter and block size the home race opens with: the fastest measured on this server,
    once per server and model set (specviz.lessons.race.fastest_setting), with progress shown."""
    bar = st.progress(0.0, "Measuring which drafter is fastest on this server (once per server)…")
    with engine():   # the threads were fitted when the set loaded (`_load`), moments before
        best = race.fastest_setting(_models, prompt, list(_models.drafter_models),
                                    progress=lambda done, total: bar.progress(
                                        done / total, f"Measuring which drafter is fastest on this server "
                                                      f"(once per server): run {done + 1} of {total}…"))
    bar.empty()
    return best


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
    return f"CPU {cpu_name()}"   # the thread count changes as it is re-measured: the status line shows it


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
        stop()
    return m


def prompt_label(prompt: str) -> str:
    """A prompt on one line of a select box: a code prompt's line breaks show as ↵.

    >>> prompt_label('def f(x):\\n    return')
    'def f(x): ↵    return'
    """
    return prompt.replace("\n", " ↵")


def drafter_label(name: str) -> str:
    return DRAFTER_LABELS.get(name, name)


def keep_session_state():
    """Re-assign every keep_ key so its value outlives the page that shows its widget."""
    for key in list(st.session_state.keys()):
        if str(key).startswith(KEEP):
            st.session_state[key] = st.session_state[key]


def remember(name: str, inputs: tuple, compute):
    """`compute()` run again only when `inputs` change (kept in this session under `name`), so a
    rerun for another widget on the page does not run the models again for the same figure."""
    if S_INPUTS + name not in st.session_state or st.session_state[S_INPUTS + name] != inputs:
        with engine():
            st.session_state[name] = compute()
        st.session_state[S_INPUTS + name] = inputs
    return st.session_state[name]


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


def presenter_from_link():
    """A link with presenter=1 opens in presenter mode; read once, then the sidebar's toggle decides."""
    if KEEP + "presenter" not in st.session_state and PRESENTER_PARAM in st.query_params:
        st.session_state[KEEP + "presenter"] = st.query_params[PRESENTER_PARAM] in ("1", "true")


def current_page(nav) -> str:
    """The url path of the page this run shows: the browser's address names it (also in the first
    run of a fresh server, see `frame`); the home page's address names none, nor does AppTest's, and
    then the navigation answers."""
    path = urllib.parse.urlsplit(st.context.url or "").path.rstrip("/").rsplit("/", 1)[-1]
    return path if path and path in PAGE_PREFIX else nav.url_path


def link_state(page: str):
    """A page's settings and its address (`LINKED`: keep_<page>_<name> is <name> in the link).

    The page's first run in a session reads a shared link's settings, each checked: a bad value
    is named in a warning and the page keeps its default. Every later run writes the settings
    back, so the address always links to what is on screen. Lesson 1 links its generation, round
    and phase itself."""
    prefix = PAGE_PREFIX.get(page, "home")
    if prefix not in LINKED:
        return
    read = st.session_state.setdefault("link_read", set())
    if prefix in read:
        set_link(page_params(prefix))
        return
    read.add(prefix)
    m = models()
    values, errors = read_link(dict(st.query_params), LINKED[prefix], {"drafters": list(m.drafter_models) if m else []})
    for name, value in values.items():
        st.session_state[f"{KEEP}{prefix}_{name}"] = value
    for e in errors:
        st.warning(f"A setting in the link was ignored: {e}. The default is used instead.")


def page_params(prefix: str) -> dict:
    """The link parameters of a page's current settings."""
    keys = {name: f"{KEEP}{prefix}_{name}" for name in LINKED.get(prefix, {})}
    return {name: write(st.session_state[key]) for name, key in keys.items() if key in st.session_state}


def set_link(params: dict):
    """Put `params` in the address, with the model set unless it is the default and presenter mode when on."""
    full = dict(params)
    if st.session_state.get(KEEP + "set", config().default) != config().default:
        full["set"] = st.session_state[KEEP + "set"]
    if presenter():
        full[PRESENTER_PARAM] = "1"
    if st.session_state.get("class_follow"):
        full[CLASS_PARAM] = st.session_state["class_follow"]["code"]
    if SEEN in st.query_params:   # rewritten only at the end of a run (`mark_seen`)
        full[SEEN] = st.query_params[SEEN]
    if st.query_params.to_dict() != full:
        st.query_params.from_dict(full)


def share_link(params: dict, page: str) -> str:
    """The link that opens `page` (its url path) as it is now, for the class: its settings and
    model set, not presenter mode. Absolute where the browser told its address (AppTest does not)."""
    full = {k: v for k, v in params.items() if k != PRESENTER_PARAM}
    if st.session_state.get(KEEP + "set", config().default) != config().default:
        full["set"] = st.session_state[KEEP + "set"]
    return (st.context.url or f"/{page}") + ("?" + urllib.parse.urlencode(full) if full else "")


def share(params: dict, page: str):
    """In presenter mode, the link to this page as it is now, with a QR code the room can scan."""
    if not presenter():
        return
    link = share_link(params, page)
    st.markdown("**This page, as it is now, for the class:** scan the code or open the link.")
    st.html(f'<img src="{qr_image(link)}" alt="QR code of the link below" style="width: 14rem">')
    st.code(link, language=None, wrap_lines=True)
    lead_class()


def next_lesson(page_file: str, with_share: bool = True):
    """The end of a page: a link to the next one in the course (after the last, home again), and in
    presenter mode the link to this page (`share`; lesson 1 shares its round from its panel)."""
    order = [HOME] + [path for path, _ in LESSONS]
    here = order.index(f"pages/{Path(page_file).name}")
    nxt = order[(here + 1) % len(order)]
    st.divider()
    st.page_link(nxt, label=f"Next: {dict(LESSONS).get(nxt, 'Home: draft, then verify')}",
                 icon=":material/arrow_forward:")
    prefix = PAGE_PREFIX[Path(page_file).stem]
    if with_share and prefix in LINKED:
        share(page_params(prefix), "" if prefix == "home" else Path(page_file).stem)


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
                       "P play, Home reset. On every page, A reveals the answer to the prediction on screen.")
        m = models()
        if m is None:
            st.error(f"No models: {st.session_state.get('models_error')}")
        else:
            params = sum(p.numel() for p in m.target.parameters()) / 1e6
            drafters = ", ".join(f"{drafter_label(d)} ({m.kind(d)})" if m.kind(d) else drafter_label(d)
                                 for d in m.drafter_models)
            st.caption(f"**Model set:** {m.name} · target {params:.1f} M params "
                       f"({m.target.config.num_hidden_layers} layers) · drafters: {drafters} · "
                       f"{str(m.dtype).replace('torch.', '')} on {m.device}"
                       + (f", {torch.get_num_threads()} thread(s), measured on the free cores" if m.device.type == "cpu" else ""))


CHECKS_AHEAD = "*How speculative decoding checks ahead*"   # the two source articles, cited by title
DRAFT_VERIFY = "*Draft, Then Verify*"
PREDICTED = KEEP + "predict_"    # + a page's key: the option chosen (a radio's key, kept across pages)
REVEALED = KEEP + "revealed_"    # + a page's key: True once Reveal was pressed


def predict(key: str, question: str, options: list, *, format_func=str, horizontal: bool = True,
            on_reveal=None) -> bool:
    """Ask for a prediction before showing its answer: a question whose label begins with
    "Predict", its options, and a **Reveal** button (key A, for answer, in presenter mode, so the
    teacher reveals for the room; Streamlit keeps R and C for itself). Returns True once an option is picked or Reveal is pressed: the page
    draws every element that carries the answer only then. The choice and the reveal are keep_
    keys, so they survive reruns and page switches. `on_reveal` runs once, when it is revealed.
    One prediction is on screen at a time (the key A belongs to it)."""
    chosen, revealed = PREDICTED + key, REVEALED + key

    def reveal():
        if not st.session_state.get(revealed):
            st.session_state[revealed] = True
            if on_reveal:
                on_reveal()

    default(chosen, None)
    asked = class_question(key, options)
    if asked is not None:   # following a class: this browser votes, the presenter reveals
        mine = st.session_state.get(VOTED + key)
        st.radio(f"**Predict:** {question}", options, key=chosen, format_func=format_func, horizontal=horizontal,
                 on_change=lambda: vote(key, options.index(st.session_state[chosen])),
                 disabled=mine is not None or asked["revealed"])
        if st.session_state.get("class_error") and not asked["revealed"]:
            st.error(st.session_state.pop("class_error"))   # a refused vote says why at once
        if mine is not None:   # in words too: a browser can draw the locked radio unchecked
            st.caption(f"You answered **{format_func(options[mine])}**. Your answer is counted"
                       + ("." if asked["revealed"] else ": the answer appears here when the presenter reveals it."))
        if asked["revealed"]:
            class_votes(asked, options, format_func)
        return asked["revealed"]

    def reveal_all():
        reveal()
        lead = st.session_state.get("class_lead")
        if lead:
            with contextlib.suppress(ClassError):
                room().reveal(lead["code"], lead["key"], key)

    st.radio(f"**Predict:** {question}", options, key=chosen, format_func=format_func, horizontal=horizontal,
             on_change=None if st.session_state.get("class_lead") else reveal)
    shown = bool(st.session_state.get(revealed)) or (
        st.session_state.get(chosen) is not None and not st.session_state.get("class_lead"))
    if st.session_state.get("class_lead"):
        presenter_tally(key, options, format_func)
    if not shown:
        st.button("Reveal", key="predict_reveal_" + key, on_click=reveal_all, shortcut="A" if presenter() else None,
                  help="Show the answer without choosing (in presenter mode: the key A).")
    return shown


# --- a class together: followers see the presenter's page and vote (specviz.hosting.classroom) ------
CLASS_PARAM = "class"            # ?class=CODE follows that class
VOTED = "class_voted_"           # + a prediction's key: the option index this follower's counted vote chose
SHARED = "class_shared"          # the presenter's small results by name, sent with its view (see `shared`)
RUN_HERE = "class_run_here_"     # + a result's name: this follower asked to run the models for it itself
MAX_SHARED_BYTES = 200_000       # a larger result is not sent: a follower runs it when asked


@st.cache_resource(show_spinner=False)
def _room(store: str, max_classes: int, max_followers: int, idle_hours: int) -> Classroom:
    return Classroom(MemoryStore() if store == "memory" else RedisStore(store), max_classes, max_followers,
                     idle_hours * 3600)


def room() -> Classroom:
    """The server's classes, where the host's config keeps them (this process, or Redis)."""
    c = config().classes
    return _room(c.store, c.max_classes, c.max_followers, c.idle_hours)


def lead_class():
    """In presenter mode: start a class, then show its code, link and QR code and how many follow."""
    lead = st.session_state.get("class_lead")
    if lead is None:
        def start():
            try:
                code, key = room().start()
                st.session_state["class_lead"] = {"code": code, "key": key, "shown": None}
            except ClassError as e:
                st.session_state["class_error"] = str(e)
        st.button("Start a class", on_click=start, help="Students who open the class link follow this screen "
                  "and answer each prediction before you reveal it.")
        if st.session_state.get("class_error"):
            st.error(st.session_state.pop("class_error"))
        return
    link = share_link({CLASS_PARAM: lead["code"]}, "")
    st.markdown(f"**Class {lead['code']}:** students follow this screen from this link.")
    st.html(f'<img src="{qr_image(link)}" alt="QR code of the class link below" style="width: 14rem">')
    st.code(link, language=None, wrap_lines=True)


def show_class(page: str):
    """After the presenter's page ran: share what it shows (the page, its link, lesson 1's recorded
    trace) when that changed, so followers draw it without running the models."""
    lead = st.session_state.get("class_lead")
    if not lead:
        return
    params = {k: v for k, v in st.query_params.to_dict().items() if k not in (PRESENTER_PARAM, SEEN)}
    view = {"page": page, "params": params, "trace": st.session_state.get("class_trace") if page == "draft_and_verify" else None,
            "shared": shared_on(page)}
    if view != lead["shown"]:
        try:
            room().show(lead["code"], lead["key"], view)
            lead["shown"] = view
        except ClassError as e:   # the class expired: the presenter can start another
            st.session_state.pop("class_lead")
            st.toast(str(e))


def follow_class(nav):
    """A browser that opened ?class=CODE follows the presenter while its toggle is on: on each of
    the presenter's steps it opens the same page with the same settings, and polls for the next
    step every two seconds."""
    code = st.query_params.get(CLASS_PARAM)
    f = st.session_state.get("class_follow")
    if code and not presenter() and (f is None or f["code"] != code.strip().upper()):
        f = st.session_state["class_follow"] = {"code": code.strip().upper(), "token": new_token(), "applied": None,
                                                "state": None}
        default(KEEP + "class_on", True)
    if not f:
        return
    with st.container(border=True):
        c1, c2 = st.columns([3, 1])
        c2.toggle("Follow the presenter", key=KEEP + "class_on")
        try:
            f["state"] = room().follow(f["code"], f["token"])
        except ClassError as e:
            c1.error(str(e))
            f["state"] = None
            return
        c1.markdown(f"**Class {f['code']}**: " + ("this screen follows the presenter's."
                                                   if st.session_state[KEEP + "class_on"] else "exploring alone."))
    if not st.session_state[KEEP + "class_on"]:
        return
    if f["state"]["step"] != f["applied"]:
        f["applied"] = f["state"]["step"]
        apply_view(f["state"]["view"], nav)
    poll_class()


@st.fragment(run_every=2)
def poll_class():
    """Every two seconds: draw the page again when the presenter has stepped, or when this browser
    never received the screen this session last drew (`mark_seen`)."""
    f = st.session_state.get("class_follow")
    if not f or not st.session_state.get(KEEP + "class_on"):
        return
    with contextlib.suppress(ClassError):
        if room().follow(f["code"], f["token"])["step"] != f["applied"] or screen_lost():
            st.rerun(scope="app")   # (screen_lost is False within a whole run: no loop)


def apply_view(view: dict, nav):
    """Open the presenter's page as the presenter's link describes it (each value checked on
    reading, as any link's is); lesson 1 replays the presenter's recorded trace."""
    page = view.get("page")
    if page not in PAGE_PREFIX:
        return
    params = {k: str(v) for k, v in (view.get("params") or {}).items()} | {CLASS_PARAM: st.session_state["class_follow"]["code"]}
    if SEEN in st.query_params:   # rewritten only at the end of the run (`mark_seen`)
        params[SEEN] = st.query_params[SEEN]
    st.query_params.from_dict(params)
    st.session_state.setdefault("link_read", set()).discard(PAGE_PREFIX[page])   # read this link again
    st.session_state["class_view"] = view
    if page != current_page(nav):
        st.switch_page(HOME if PAGE_PREFIX[page] == "home" else f"pages/{page}.py")


def following() -> bool:
    """True while this browser follows a class it found, with its toggle on: its pages then draw the
    presenter's settings and run no model by themselves (`run_here`, `shared`)."""
    f = st.session_state.get("class_follow")
    return bool(f and f.get("state") and st.session_state.get(KEEP + "class_on"))


def run_here(name: str, what: str) -> bool:
    """May this page run the models for `what` now? Always on a browser of its own; on a follower's
    only once the student presses the button this draws (the choice is kept for the session).
    Thirty followers opening a lesson would otherwise each run the same models at once, queued
    behind the one engine lock, for what the presenter's screen already shows."""
    if not following() or st.session_state.get(RUN_HERE + name):
        return True
    st.button(f"Run {what} on this screen", key="run_here_button_" + name,
              on_click=lambda: st.session_state.__setitem__(RUN_HERE + name, True),
              help=FOLLOWING + ".")
    return False


FOLLOWING = "This screen follows the presenter's and runs no model by itself"


def not_measured_here():
    """A follower's lesson 7 or 8 before the student measures: what the empty space is for."""
    st.info(f"{FOLLOWING}: press **Measure again** to measure on this server.")


def shared(name: str, inputs, compute, what: str):
    """`compute()`: a small result of the models for `inputs`, made of JSON values (lists, not tuples),
    computed on a follower's screen only when it cannot be helped. The presenter's result also goes
    into the class's view (`show_class`); a follower whose inputs are the presenter's draws that
    one; any other follower gets None until the student asks for the run (`run_here`). `name`
    starts with its page's prefix and an underscore (l2_dist), so each page shares only its own."""
    key = json.dumps(inputs, sort_keys=True, default=str)
    if following():
        got = ((st.session_state.get("class_view") or {}).get("shared") or {}).get(name)
        if isinstance(got, dict) and got.get("inputs") == key:
            return got.get("value")
        if not run_here(name, what):
            return None
    value = compute()
    if st.session_state.get("class_lead"):
        with contextlib.suppress(TypeError, ValueError):   # not JSON: followers run it when asked
            text = json.dumps(value)
            if len(text) <= MAX_SHARED_BYTES:
                st.session_state.setdefault(SHARED, {})[name] = {"inputs": key, "value": json.loads(text)}
    return value


def shared_on(page: str) -> dict:
    """The presenter's shared results that belong to `page` (see `shared`)."""
    prefix = PAGE_PREFIX.get(page, "home") + "_"
    return {n: v for n, v in st.session_state.get(SHARED, {}).items() if n.startswith(prefix)}


# --- a screen the browser never received -------------------------------------------------------------
# A class keeps a polling fragment on its screens (`poll_class` on a follower's, `presenter_tally` on
# the presenter's while a question is open), so each browser sends a rerun request every two seconds.
# Streamlit (1.67) forwards a run's messages to the browser from its event loop, after the run; when
# the next request reaches a session whose run has just ended but whose messages the loop has not
# yet forwarded (a busy server), it starts a new ScriptRunner and drops the old one's messages as
# "from a non-current ScriptRunner". A vote's redraw (the radio locked, "Your answer is counted") or a
# step's was then lost for good: the vote counted, the screen unchanged. So every run that draws a
# class screen numbers it and writes the number into the address as its last message (`mark_seen`);
# the browser sends its address with every request, and a poll that finds an older number there
# after CATCH_UP_S draws the page again. A server so busy that even that redraw arrives late waits
# twice as long before the next one (up to PATIENCE_MAX_S), so redraws cannot pile onto the load.
SEEN = "seen"          # the address's number of the last screen this browser received
SCREEN = "class_screen"     # (number, time, patience in s) of the last screen this session drew
CATCH_UP_S = 15.0      # how long a busy server may take to forward a run before it counts as lost
PATIENCE_MAX_S = 60.0


def in_class() -> bool:
    """Does this session lead or follow a class (and so poll it)?"""
    return bool(st.session_state.get("class_lead")) or following()


def mark_seen():
    """The end of a run that drew a class screen (app.py after the page; lesson 1's panel after a
    step or a vote): number the screen and put the number in the address, as the run's last message,
    so that an address carrying it means the browser got the whole screen (see above)."""
    if not in_class():
        return
    last, _, patience = st.session_state.get(SCREEN, (0, 0.0, CATCH_UP_S))
    # the address still holds the browser's number here (set_link and apply_view keep it)
    caught_up = st.query_params.get(SEEN) == str(last)
    patience = CATCH_UP_S if caught_up or not last else min(2 * patience, PATIENCE_MAX_S)
    st.session_state[SCREEN] = (last + 1, time.monotonic(), patience)
    st.query_params[SEEN] = str(last + 1)


def screen_lost() -> bool:
    """Did this browser miss the last screen its session drew? Asked by a polling fragment's own
    run: the address its request carries still holds an older number CATCH_UP_S (or the longer
    patience of a busy server) after that screen was drawn. Never within a whole run, which draws the
    screen again anyway (and whose address is the same old one: asking there would rerun it forever)."""
    number, drawn_at, patience = st.session_state.get(SCREEN, (None, 0.0, CATCH_UP_S))
    return (fragment_run() and number is not None and st.query_params.get(SEEN) != str(number)
            and time.monotonic() - drawn_at > patience)


def fragment_run() -> bool:
    """Is this run a fragment's alone (a click inside one, or its timer), not the whole page?"""
    ctx = get_script_run_ctx()
    return bool(ctx and ctx.fragment_ids_this_run)


def stop():
    """st.stop, after numbering the screen drawn so far (a stopped run enqueues nothing more)."""
    mark_seen()
    st.stop()


def class_question(key: str, options: list) -> dict | None:
    """The class's open question when this browser follows a class and the presenter asks `key`
    (None otherwise). On the presenter's screen the question is opened for votes here."""
    lead = st.session_state.get("class_lead")
    if lead:
        with contextlib.suppress(ClassError):
            room().ask(lead["code"], lead["key"], key, [str(i) for i in range(len(options))])
        return None
    f = st.session_state.get("class_follow")
    if not f or not f["state"] or not st.session_state.get(KEEP + "class_on"):
        return None
    q = f["state"]["question"]
    return q | {"votes": (f["state"]["votes"] or {}).get("votes")} if q and q["key"] == key else None


def vote(key: str, index: int):
    f = st.session_state["class_follow"]
    try:
        room().vote(f["code"], f["token"], key, str(index))
        st.session_state[VOTED + key] = index
    except ClassError as e:
        st.session_state["class_error"] = str(e)


def class_votes(asked: dict, options: list, format_func):
    """The class's answers beside the revealed answer."""
    if st.session_state.get("class_error"):
        st.error(st.session_state.pop("class_error"))
    counts = asked.get("votes") or {}
    total = sum(counts.values())
    st.markdown(f"**The class answered** ({total} vote{'s' if total != 1 else ''}): "
                + " · ".join(f"{format_func(o)}: {counts.get(str(i), 0)}" for i, o in enumerate(options)))


def class_result(key: str, options: list, format_func=str):
    """After the reveal, the class's answers to `key` where a page shows its answer elsewhere than
    beside the question (lesson 1 steps on to its verify phase)."""
    lead, f = st.session_state.get("class_lead"), st.session_state.get("class_follow")
    with contextlib.suppress(ClassError):
        t = (room().tally(lead["code"], lead["key"]) if lead else
             f["state"]["votes"] if f and f["state"] and st.session_state.get(KEEP + "class_on") else None)
        if t and t["question"] == key and t["revealed"]:
            class_votes(t, options, format_func)


@st.fragment(run_every=2)
def presenter_tally(key: str, options: list, format_func):
    """The presenter's live count of the class's answers (refreshed every two seconds)."""
    lead = st.session_state.get("class_lead")
    if screen_lost():
        st.rerun(scope="app")   # (False within a whole run: no loop)
    with contextlib.suppress(ClassError):
        t = room().tally(lead["code"], lead["key"])
        if t and t["question"] == key:
            class_votes(t, options, format_func)


def prediction(key: str):
    """The option chosen for `predict(key, ...)`, or None."""
    return st.session_state.get(PREDICTED + key)


def forget_predictions(prefix: str):
    """Clear every prediction whose key starts with `prefix` (a page starting over asks again)."""
    for name in list(st.session_state.keys()):
        if str(name).startswith((PREDICTED + prefix, REVEALED + prefix)):
            del st.session_state[name]


def header(title: str, source: str, look_for: str):
    """A lesson's title, what to look for, and the passages of the source articles it comes from.

    `look_for` says what to look at, never what will be found: that is a prediction's answer, which
    the page shows only after `predict`. `source` cites the works by title (CHECKS_AHEAD, DRAFT_VERIFY)."""
    css()
    st.title(title)
    st.markdown(look_for)
    st.caption(f"Source: {source}")
    st.page_link("pages/glossary.py", label="Glossary: every term these lessons use")


def html(markup: str):
    """Render builder output (already escaped by specviz.viz)."""
    st.html(markup)


LOG = logging.getLogger("specviz")
if not LOG.handlers:   # the server's standard error, with a time, whatever the host's logging setup
    _to_stderr = logging.StreamHandler()
    _to_stderr.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    LOG.addHandler(_to_stderr)


@contextlib.contextmanager
def apology():
    """Around a page (or a fragment): an error nothing expected is logged with its traceback under
    a short id, and the page shows an apology with that id instead of the traceback.

    Input a page reads (a prompt, a link, an uploaded file) is checked by the page itself and
    answered in words; this is for what no one foresaw. st.stop and st.rerun pass through
    (Streamlit raises them as BaseExceptions, not Exceptions).
    """
    try:
        yield
    except FragmentHandledException:   # a fragment's own error, which Streamlit has already shown
        raise
    except Exception:
        incident = secrets.token_hex(4)
        LOG.exception("unexpected error %s", incident)
        st.error(f"Sorry, this page hit an error it did not expect. If reloading does not help, tell the "
                 f"host error id **{incident}**: it is in the server's log.")


def plain(text: str) -> str:
    """Text from a user (a file name, a value out of a file) for a markdown element, shown as typed:
    every sign that could start a link, an image, code, markup or a formula is escaped.

    >>> plain("![x](http://h) <b>*a*</b>")
    '\\!\\[x\\](http://h) \\<b\\>\\*a\\*\\</b\\>'
    """
    return re.sub(r"([\\`*\[\]<>!$~|])", r"\\\1", text)
