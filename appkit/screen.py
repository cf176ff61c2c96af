"""A screen the browser never received: numbering each class screen, and drawing it again when lost.

A class keeps a polling fragment on its screens (a follower's poll; the presenter's count of
followers, and its tally while a question is open), so each browser sends a rerun request every few
seconds. Streamlit (1.67) forwards a run's messages to the browser from its event loop, after the
run; when the next request reaches a session whose run has just ended but whose messages the loop
has not yet forwarded (a busy server), it starts a new ScriptRunner and drops the old one's messages
as "from a non-current ScriptRunner" (AppSession._handle_scriptrunner_event_on_event_loop). A vote's
redraw (the radio locked, "Your answer is counted") or a step's was then lost for good: the vote
counted, the screen unchanged; with thirty followers the presenter's own step reached every
follower but not the presenter's screen. So every run that draws a class screen numbers it
and writes the number into the address as its last message (`mark_seen`); the browser sends its
address with every request, and a poll that finds an older number there after CATCH_UP_S draws the
page again. A server so busy that even that redraw arrives late waits twice as long before the next
one (up to PATIENCE_MAX_S), so redraws cannot pile onto the load.

A second race, at the start of a fragment's run (a poll, the presenter's tally, lesson 1's panel):
Streamlit clears from the queue the unsent messages of that fragment (AppSession._clear_queue:
ForwardMsgQueue.clear with fragment_ids_this_run), also those of the whole run queued just before it,
which include the slot of the fragment's own container. The browser then drops that slot and draws
every later element one place up (a page switch under load left a student's lesson one element off).
`hold` removes the cause: a fragment sits alone in a container the whole run draws, so a cleared
fragment leaves that container empty and no other element moves.

A third, after a page switch: a polling fragment's timer lives in the browser, which sends each
tick with the page it shows. A tick sent between the server's switch (a follower moved to the
presenter's page, a presenter's click in the sidebar) and the browser's receipt of the new page is
run by Streamlit (1.67) after the new page's run, as a fragment run on the old page: its new_session
message names the old page, and the frontend (App.handleNewSession: a page other than its own
calls clearAppState) removes every element the new page drew. The screen kept the class bar over
an empty page, and every later poll found nothing to do. Only Streamlit can stop that message (its
fragment runs take the page from the request); each polling fragment is made by `polling`, whose
every own run first asks `page_cleared` and then draws the page of the last whole run again
(`redraw_page`), within that one poll.

What it leaves out: the class itself (appkit.classroom), which calls these.
"""
import functools
import time

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from appkit.state import CLASS_FOLLOW, SEEN, in_class

SCREEN = "class_screen"     # (number, time, patience in s) of the last screen this session drew
DRAWN = "class_page_drawn"  # (Streamlit's page hash, course file) of the page the last whole run drew
CATCH_UP_S = 15.0      # how long a busy server may take to forward a run before it counts as lost
PATIENCE_MAX_S = 60.0


def mark_seen():
    """The end of a run that drew a class screen (app.py after the page; lesson 1's panel after a
    step or a vote): number the screen and put the number in the address, as the run's last message,
    so that an address carrying it means the browser got the whole screen (see above)."""
    if not in_class():
        return
    f = st.session_state.get(CLASS_FOLLOW)
    if f and "drawing" in f:   # this run drew the presenter's step to its end (appkit.classroom.follow_class)
        f["applied"] = f.pop("drawing")
    last, _, patience = st.session_state.get(SCREEN, (0, 0.0, CATCH_UP_S))
    # the address still holds the browser's number here (appkit.links keeps it)
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


def hold(fragment, *args):
    """Draw `fragment(*args)` (an st.fragment) alone in a container of the run's own (see above).

    The container's slot belongs to the whole run, the fragment's to the fragment: clearing the
    fragment's messages empties the container and leaves its neighbours where they are."""
    with st.container():
        return fragment(*args)


def fragment_run() -> bool:
    """Is this run a fragment's alone (a click inside one, or its timer), not the whole page?"""
    ctx = get_script_run_ctx()
    return bool(ctx and ctx.fragment_ids_this_run)


def stop():
    """st.stop, after numbering the screen drawn so far (a stopped run enqueues nothing more)."""
    mark_seen()
    st.stop()


def drawing(file: str):
    """A whole run, after the navigation chose its page (`file`, a course page's file): remember
    that page as the one this browser shows (see `page_cleared`)."""
    ctx = get_script_run_ctx()
    if ctx and not ctx.fragment_ids_this_run:
        st.session_state[DRAWN] = (ctx.page_script_hash, file)


def page_cleared() -> bool:
    """Is this a fragment's run on a page other than the one the last whole run drew? Its
    new_session message has just told the browser to clear that page (see above)."""
    ctx, drawn = get_script_run_ctx(), st.session_state.get(DRAWN)
    return bool(ctx and ctx.fragment_ids_this_run and drawn and ctx.page_script_hash != drawn[0])


def polling(every):
    """`st.fragment(run_every=every)` for a class's polling fragment: each of its own runs first
    draws the page again when Streamlit ran it on another page (`page_cleared`) or when the browser
    never received the last screen (`screen_lost`), so a tick sent before a page switch costs the
    browser one redraw, never its page. Every screen of a class has one such fragment (a follower's
    poll, the presenter's count of followers), so no lost screen outlives a poll.

    `every` is seconds, or a function that returns them, asked by each whole run that draws the
    fragment (a class's size sets its followers' pace). Streamlit keeps the fragment's id (its
    name and place), and the browser restarts the fragment's timer when the interval changes
    (1.67: App.handleAutoRerun)."""
    def make(fragment):
        @functools.wraps(fragment)   # the same name: Streamlit keeps a fragment's id by it
        def run(*args, **kwargs):
            if page_cleared():
                # the page's own address, as this request carries it; the run then writes the rest
                st.switch_page(st.session_state[DRAWN][1], query_params=st.query_params.to_dict())
            if screen_lost():
                st.rerun(scope="app")
            return fragment(*args, **kwargs)

        @functools.wraps(fragment)
        def draw(*args, **kwargs):
            return st.fragment(run_every=every() if callable(every) else every)(run)(*args, **kwargs)
        return draw
    return make
