"""The class's questions: a prediction asked of the room, the votes, the tally and the reveal.

A presenter's prediction opens a question (`class_question`); each follower votes once by its
anonymous token (`vote`); the presenter's screen counts the answers every two seconds
(`presenter_tally`) and reveals (`reveal_to_class`). The server never stores what a token chose.

What it leaves out: the prediction widget itself (appkit.predict), the class (appkit.classroom).
"""
import contextlib

import streamlit as st

from appkit.classroom import room
from appkit.screen import hold, polling
from appkit.state import CLASS_FOLLOW, CLASS_ON, leading
from specviz.hosting.classroom import ClassError

VOTED = "class_voted_"           # + a prediction's key: the option index this follower's counted vote chose

def class_question(key: str, options: list) -> dict | None:
    """The class's open question when this browser follows a class and the presenter asks `key`
    (None otherwise). On the presenter's screen the question is opened for votes here."""
    lead = leading()
    if lead:
        with contextlib.suppress(ClassError):
            room().ask(lead["code"], lead["key"], key, [str(i) for i in range(len(options))])
        return None
    f = st.session_state.get(CLASS_FOLLOW)
    if not f or not f["state"] or not st.session_state.get(CLASS_ON):
        return None
    q = f["state"]["question"]
    return (q | {"votes": (f["state"]["votes"] or {}).get("votes"), "voted": f["state"].get("voted", False)}
            if q and q["key"] == key else None)


def vote(key: str, index: int):
    f = st.session_state[CLASS_FOLLOW]
    try:
        room().vote(f["code"], f["token"], key, str(index))
        st.session_state[VOTED + key] = index
    except ClassError as e:
        st.session_state["class_error"] = str(e)


def reveal_to_class(key: str):
    """The presenter revealed `key`: followers see the answer and the class's spread."""
    lead = leading()
    if lead:
        with contextlib.suppress(ClassError):
            room().reveal(lead["code"], lead["key"], key)


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
    lead, f = leading(), st.session_state.get(CLASS_FOLLOW)
    with contextlib.suppress(ClassError):
        t = (room().tally(lead["code"], lead["key"]) if lead else
             f["state"]["votes"] if f and f["state"] and st.session_state.get(CLASS_ON) else None)
        if t and t["question"] == key and t["revealed"]:
            class_votes(t, options, format_func)


def presenter_tally(key: str, options: list, format_func):
    """The presenter's live count while `key` is open (`tally`), held in a container of the whole
    run's so that a cleared tally run moves nothing else (appkit.screen.hold)."""
    hold(tally, key, options, format_func)


@polling(2)
def tally(key: str, options: list, format_func):
    """The presenter's live count while `key` is open: how many of the followers have answered, not
    what (the room would copy the spread); the spread itself once revealed. Refreshed every two seconds."""
    lead = leading()
    with contextlib.suppress(ClassError):
        t = room().tally(lead["code"], lead["key"])
        if t and t["question"] == key:
            if t["revealed"]:
                class_votes(t, options, format_func)
            else:
                st.markdown(answered(t["voters"], room().following(lead["code"], lead["key"])))


def answered(voters: int, followers: int) -> str:
    """The presenter's count while a question is open.

    >>> answered(3, 8), answered(1, 1), answered(0, 0)
    ('**3 of 8** following students have answered.', '**1 of 1** following student has answered.', 'No student follows this class yet.')
    """
    if not followers:
        return "No student follows this class yet."
    return (f"**{voters} of {followers}** following student{'s have' if followers != 1 else ' has'} answered.")
