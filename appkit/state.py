"""Session-state keys and URL parameter names: the words every other appkit module shares.

Session state that must survive a page switch uses keys starting with `keep_`: app.py
re-assigns them on every run (`keep_session_state`), which stops Streamlit from dropping a
widget's value when the page that owns it is not on screen. A page's own keys are
`keep_<page id>_<name>` (`key`), with the page id from appkit.course, never from its title; a page
takes them from `keys(<its id>)` and types none.

What it leaves out: what the keys mean to a page (the pages), the class logic (appkit.classroom).
"""
import streamlit as st

KEEP = "keep_"
PRESENTER = KEEP + "presenter"   # presenter mode's toggle
MODEL_SET = KEEP + "set"         # the sidebar's model set
DEVICE = KEEP + "device"
CLASS_ON = KEEP + "class_on"     # a follower's "Follow the presenter" toggle
PREDICTED = KEEP + "predict_"    # + a prediction's key: the option chosen (a radio's key, kept across pages)
REVEALED = KEEP + "revealed_"    # + a prediction's key: True once Reveal was pressed
CLASS_LEAD = "class_lead"        # the presenter's class: {code, key, shown}
CLASS_FOLLOW = "class_follow"    # a follower's class: {code, token, applied, state}
MODELS_ERROR = "models_error"    # why the models are not available to this session (appkit.runtime)
CLASS_VIEW = "class_view"        # a follower's copy of what the presenter shows (appkit.classroom.apply_view)
CLASS_TRACE = "class_trace"      # a presenter's lesson 1 trace, as JSON, for the class's view

# the address's parameters
PRESENTER_PARAM = "presenter"    # ?presenter=1 opens a page in presenter mode
CLASS_PARAM = "class"            # ?class=CODE follows that class
SEEN = "seen"                    # the number of the last screen this browser received (appkit.screen)
LEAD_PARAM = "lead"              # CODE.KEY: the class this presenter leads, in its own address only
TOKEN_PARAM = "token"            # a follower's anonymous token, in its own address only
OWN = (PRESENTER_PARAM, LEAD_PARAM, TOKEN_PARAM, SEEN)   # a browser's own parameters: never in a shared link


def key(page: str, name: str) -> str:
    """A page's kept session key.

    >>> key("dloop", "S")
    'keep_dloop_S'
    """
    return f"{KEEP}{page}_{name}"


class keys:
    """A page's session keys by name, so a page writes no key by hand: `keys(page).name` is
    `key(page, name)`, and `keys(page)[name]` the same for a name held in a variable. With
    `kept=False` the keys are `<page id>_<name>`: what a page computed and its charts' element keys,
    which are not widget values and need no re-assigning across page switches (`keep_session_state`).

    >>> K = keys("dloop")
    >>> K.k, K["sweep"], keys("dloop", kept=False).sweep
    ('keep_dloop_k', 'keep_dloop_sweep', 'dloop_sweep')
    """

    def __init__(self, page: str, kept: bool = True):
        self.page, self.kept = page, kept

    def __getattr__(self, name: str) -> str:
        if name.startswith("_"):   # Python's own lookups (copy, pickle) are not key names
            raise AttributeError(name)
        return key(self.page, name) if self.kept else f"{self.page}_{name}"

    __getitem__ = __getattr__


def default(name: str, value):
    """Give a widget key its first value (so widgets never also need value=)."""
    if name not in st.session_state:
        st.session_state[name] = value


def at_most(name: str, most):
    """Keep a widget's value within a host limit its range stops at (Streamlit raises otherwise)."""
    if st.session_state.get(name, most) > most:
        st.session_state[name] = most


def keep_session_state():
    """Re-assign every keep_ key so its value outlives the page that shows its widget."""
    for name in list(st.session_state.keys()):
        if str(name).startswith(KEEP):
            st.session_state[name] = st.session_state[name]


def presenter() -> bool:
    return bool(st.session_state.get(PRESENTER, False))


def leading() -> dict | None:
    """The class this presenter leads, or None."""
    return st.session_state.get(CLASS_LEAD)


def following() -> bool:
    """True while this browser follows a class it found, with its toggle on: its pages then draw the
    presenter's settings and run no model by themselves (appkit.classroom)."""
    f = st.session_state.get(CLASS_FOLLOW)
    return bool(f and f.get("state") and st.session_state.get(CLASS_ON))


def class_view() -> dict | None:
    """What the presenter shows, as this follower last received it (None outside a class)."""
    return st.session_state.get(CLASS_VIEW)


def share_trace(trace_json: str):
    """A presenter's lesson 1 trace, for the class's view of that page (`show_class`)."""
    st.session_state[CLASS_TRACE] = trace_json


def models_error() -> str | None:
    """Why the models are not available to this session (None while they are)."""
    return st.session_state.get(MODELS_ERROR)


def in_class() -> bool:
    """Does this session lead or follow a class (and so poll it)?"""
    return bool(leading()) or following()
