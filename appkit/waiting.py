"""While the models load: a note that says so, counting the seconds, and the page drawn again once
they have arrived; and a button's press kept until then.

A press that waited for the models inside its own run (blocking in the load's wait) was lost when
that run was replaced by another before the models came (a click, the note's own timer), and a
class saw nothing happen for minutes. So a press is kept in the session (`keep_press`, the button's
on_click, which Streamlit runs before any of the run) and acted on by the first run that finds the
models there (`pressed`), while the runs before it say that it waits.

What it leaves out: the load itself (appkit.runtime).
"""
import streamlit as st

from appkit.runtime import loading


# every 3 s: often enough to redraw soon after the load, rarely enough that a browser sees the page at
# rest between ticks (a test waiting for two quiet seconds is not held for the whole load)
@st.fragment(run_every=3.0)
def _load_clock(what: str, loud: bool):
    job = loading()
    if job.done:
        st.rerun()   # the whole page again, now with the models
    line = f"**Loading the models** (once per server; {job.seconds:.0f} s so far): {what}"
    if loud:
        st.info(line, icon=":material/hourglass_top:")   # an icon font's: the page's text font has no ⏳
    else:
        st.caption(line)


def loading_note(what: str, loud: bool = False) -> bool:
    """While the models load: a line saying so, with the seconds so far and `what` waits for them
    (`loud`: a box in body type, for a press that waits), and the whole page drawn again once they
    have arrived. True while they load."""
    if loading().done:
        return False
    _load_clock(what, loud)
    return True


def keep_press(key: str) -> dict:
    """st.button's arguments that keep its press in the session under `key` (see above).

    >>> keep_press("home_race_asked")["args"]
    ('home_race_asked', True)
    """
    return {"on_click": st.session_state.__setitem__, "args": (key, True)}


def pressed(key: str, what: str) -> bool:
    """True in the one run that acts on the press kept under `key`: the first that finds the models
    loaded (or failed to load: acting then shows why). While they load, a note says `what` waits."""
    if not st.session_state.get(key) or loading_note(what, loud=True):
        return False
    del st.session_state[key]
    return True
