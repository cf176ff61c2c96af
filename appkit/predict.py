"""Predict, then reveal: a page asks before it shows the answer, alone or as the class's question.

What it leaves out: the class's votes and tally (appkit.votes), the answers (each page).
"""
import streamlit as st

from appkit.state import PREDICTED, REVEALED, default, leading, presenter
from appkit.votes import VOTED, class_question, class_votes, presenter_tally, reveal_to_class, vote


def predict(key: str, question: str, options: list, *, format_func=str, horizontal: bool = True,
            on_reveal=None) -> bool:
    """Ask for a prediction before showing its answer: a question whose label begins with
    "Predict", its options, and a **Reveal** button (key A, for answer, in presenter mode, so the
    teacher reveals for the room; Streamlit keeps R and C for itself). Returns True once an option
    is picked or Reveal is pressed: the page draws every element that carries the answer only then.
    The choice and the reveal are keep_ keys, so they survive reruns and page switches. `on_reveal`
    runs once, when it is revealed. One prediction is on screen at a time (the key A belongs to it).
    A follower of a class votes instead, and sees the answer when the presenter reveals it."""
    chosen, revealed = PREDICTED + key, REVEALED + key
    default(chosen, None)
    asked = class_question(key, options)
    if asked is not None:
        return _vote(key, question, options, asked, format_func, horizontal)

    def reveal():
        if not st.session_state.get(revealed):
            st.session_state[revealed] = True
            if on_reveal:
                on_reveal()

    def reveal_all():
        reveal()
        reveal_to_class(key)

    lead = leading()
    st.radio(f"**Predict:** {question}", options, key=chosen, format_func=format_func, horizontal=horizontal,
             on_change=None if lead else reveal)
    shown = bool(st.session_state.get(revealed)) or (st.session_state.get(chosen) is not None and not lead)
    if lead:
        presenter_tally(key, options, format_func)
    # a slot of its own, drawn revealed or not: the page below keeps its places when the button goes, so a
    # browser never shows the old element beside its moved copy while the reveal's run draws (a strict
    # locator in the first-page browser test met two "Start the race" buttons, one of them the stale one)
    slot = st.empty()
    if not shown:
        slot.button("Reveal", key="predict_reveal_" + key, on_click=reveal_all, shortcut="A" if presenter() else None,
                    help="Show the answer without choosing (in presenter mode: the key A).")
    return shown


def _vote(key: str, question: str, options: list, asked: dict, format_func, horizontal: bool) -> bool:
    """A follower's side of `predict`: vote once; the presenter reveals."""
    chosen, mine = PREDICTED + key, st.session_state.get(VOTED + key)
    counted = mine is not None or asked.get("voted")   # the class knows this token answered, never what
    st.radio(f"**Predict:** {question}", options, key=chosen, format_func=format_func, horizontal=horizontal,
             on_change=lambda: vote(key, options.index(st.session_state[chosen])),
             disabled=bool(counted) or asked["revealed"])
    if st.session_state.get("class_error") and not asked["revealed"]:
        st.error(st.session_state.pop("class_error"))   # a refused vote says why at once
    if counted:   # in words too: a browser can draw the locked radio unchecked
        st.caption((f"You answered **{format_func(options[mine])}**. " if mine is not None else
                    "This browser has answered (before it reloaded). ")
                   + "Your answer is counted"
                   + ("." if asked["revealed"] else ": the answer appears here when the presenter reveals it."))
    if asked["revealed"]:
        class_votes(asked, options, format_func)
    return asked["revealed"]


def prediction(key: str):
    """The option chosen for `predict(key, ...)`, or None."""
    return st.session_state.get(PREDICTED + key)


def forget_predictions(prefix: str):
    """Clear every prediction whose key starts with `prefix` (a page starting over asks again)."""
    for name in list(st.session_state.keys()):
        if str(name).startswith((PREDICTED + prefix, REVEALED + prefix)):
            del st.session_state[name]
