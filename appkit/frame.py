"""What app.py draws around every page: page config, kept state, navigation, the sidebar, a lesson's
header and its end (the next lesson, and in presenter mode the class's link), and the apology for
an error no page expected.

An error no page expected never shows its traceback: `apology` (around every page, in app.py)
logs it under a short id in the server's log (standard error) and shows the id with an apology.

What it leaves out: the pages themselves, and everything a page draws (appkit's other modules).
"""
import contextlib
import logging
import secrets

import streamlit as st
from streamlit.errors import FragmentHandledException

from appkit.classroom import follow_class, lead_class, lead_from_link, share
from appkit.course import GLOSSARY, HOME, current_page, navigation, next_page, page_of_file
from appkit.links import keep_own_params, link_state, page_params
from appkit.runtime import STATUS_SLOT, config, device_label, devices, set_device, show_status, without_waiting
from appkit.state import DEVICE, MODEL_SET, PRESENTER, PRESENTER_PARAM, default, keep_session_state, presenter
from specviz.hosting.config import choose_set
from specviz.viz import charts
from specviz.viz.style import stylesheet


def frame():
    """Page config, kept state, navigation, sidebar; returns the navigation for app.py to run.

    app.py calls it on every run and then runs the page: every run, a fresh server's first request
    included, starts in app.py (appkit.course.navigation says why the pages' folder is not pages/).
    """
    presenter_from_link()   # before the page config: presenter mode opens with the sidebar collapsed
    st.set_page_config(page_title="specviz · speculative decoding", page_icon="⚡", layout="wide",
                       initial_sidebar_state="collapsed" if presenter() else "auto")
    charts.TYPE_SIZE.set(charts.PRESENTER_SIZE if presenter() else charts.BASE_SIZE)
    keep_session_state()
    nav = navigation()
    lead_from_link()   # before the sidebar, which shows the class this presenter leads
    sidebar()
    follow_class(current_page(nav))
    # a link's settings are read without waiting for the models, unless it names a drafter: the
    # one setting checked against them (a first page must draw while they load)
    with contextlib.nullcontext() if "drafter" in st.query_params else without_waiting():
        link_state(current_page(nav))
    keep_own_params()   # a reload finds its class again (appkit.links.own_params)
    return nav


def presenter_from_link():
    """A link with presenter=1 opens in presenter mode; read once, then the sidebar's toggle decides."""
    if PRESENTER not in st.session_state and PRESENTER_PARAM in st.query_params:
        st.session_state[PRESENTER] = st.query_params[PRESENTER_PARAM] in ("1", "true")


def sidebar():
    """Model set and device, presenter mode, the models' one-line status (drawn before they are loaded)."""
    cfg = config()
    with st.sidebar:
        if st.session_state.get("config_error"):
            st.error(st.session_state["config_error"])
        if st.session_state.get(MODEL_SET, cfg.default) not in cfg.sets:
            st.session_state[MODEL_SET] = cfg.default   # the host removed the set this session was on
        if MODEL_SET not in st.session_state:
            # a shared link may name a set; only configured names are accepted, never a path
            try:
                st.session_state[MODEL_SET] = choose_set(cfg, st.query_params.get("set"))
            except ValueError as e:
                st.session_state[MODEL_SET] = cfg.default
                st.warning(f"The link's model set was ignored: {e}.")
        st.selectbox("Model set", list(cfg.sets), key=MODEL_SET, format_func=lambda n: cfg.sets[n].label,
                     on_change=lambda: st.session_state.pop(DEVICE, None),
                     help="The host's configured model sets (specviz.toml).")
        default(DEVICE, set_device(cfg, st.session_state[MODEL_SET]))
        st.selectbox("Device", devices(), key=DEVICE, format_func=device_label)
        st.toggle("Presenter mode (large type)", key=PRESENTER,
                  help="Large type for a projector. Step keys on lesson 1: → next phase, ← back, N next round, "
                       "P play, Home reset. On every page, A reveals the answer to the prediction on screen.")
        if presenter():
            lead_class()   # the class's one QR code, where the lecturer finds it without scrolling
        st.session_state[STATUS_SLOT] = st.empty()
        show_status()   # "loading" while the models load: a page that waits for them redraws it


def css():
    """The page's stylesheet; every page calls it first."""
    st.html(stylesheet(presenter()))


def header(page_file: str, source: str, look_for: str):
    """A lesson's title (its course record's: a page passes its __file__, so the sidebar, the "Next:" links
    and the page's own heading say the same), what to look for, and the passages of the source articles
    it comes from.

    `look_for` says what to look at, never what will be found: that is a prediction's answer, which
    the page shows only after appkit.predict. `source` cites the works by title (CHECKS_AHEAD, DRAFT_VERIFY)."""
    css()
    st.title(page_of_file(page_file).title)
    st.markdown(look_for)
    st.caption(f"Source: {source}")
    st.page_link(GLOSSARY.file, label="Glossary: every term these lessons use")


def next_lesson(page_file: str, with_share: bool = True):
    """The end of a page: a link to the next one in the course (after the last, home again), and in
    presenter mode the link to this page (appkit.classroom.share; lesson 1 shares its round from its panel)."""
    here = page_of_file(page_file)
    nxt = next_page(here)
    st.divider()
    st.page_link(nxt.file, label=f"Next: {nxt.title}", icon=":material/arrow_forward:")
    if with_share and not here.links_itself:
        share(page_params(here.id), "" if here is HOME else here.url_path)


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
