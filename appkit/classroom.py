"""A class together: the presenter leads, followers draw the presenter's page and vote.

A presenter starts a class (`lead_class`); after each of its runs `show_class` shares what its page
shows (the page, its link, lesson 1's recorded trace, small results by name from `shared`).
A browser that opened ?class=CODE follows (`follow_class`): on each of the presenter's steps it opens
the same page with the same settings, and polls for the next step every two seconds (longer in a
large class: specviz.hosting.classroom.poll_every). Predictions
become the class's questions: followers vote, the presenter reveals (`class_question`, `vote`,
`presenter_tally`). The class state lives in specviz.hosting.classroom (this process, or Redis).

What it leaves out: the questions and votes (appkit.votes), the lost-screen workarounds (appkit.screen).
"""
import contextlib
import json

import streamlit as st

from appkit.course import HOME, page_of
from appkit.links import own_params, read_again, share_link
from appkit.runtime import config, measure
from appkit.screen import drawing, fragment_run, hold, polling
from appkit.state import (CLASS_FOLLOW, CLASS_LEAD, CLASS_TRACE, CLASS_VIEW, class_view, CLASS_ON, CLASS_PARAM, LEAD_PARAM, OWN, SEEN, TOKEN_PARAM, default,
                          following, leading, presenter)
from specviz.hosting.classroom import ClassError, Classroom, MemoryStore, RedisStore, token_or_new
from specviz.viz.export import qr_image

SHARED = "class_shared"          # the presenter's small results by name, sent with its view (see `shared`)
RUN_HERE = "class_run_here_"     # + a result's name: this follower asked to run the models for it itself
MAX_SHARED_BYTES = 200_000       # a larger result is not sent: a follower runs it when asked
NO_ADDRESS = ("No link for students: this browser opened the app by an address that reaches only this computer "
              "(localhost, 127.0.0.1). Open the app by the address students will use (the Network URL that "
              "`streamlit run` prints), or ask the host to set classes.public_url.")
FOLLOWING = "This screen follows the presenter's and runs no model by itself"


@st.cache_resource(show_spinner=False)
def _room(store: str, max_classes: int, max_followers: int, idle_hours: int) -> Classroom:
    return Classroom(MemoryStore() if store == "memory" else RedisStore(store), max_classes, max_followers,
                     idle_hours * 3600)


def room() -> Classroom:
    """The server's classes, where the host's config keeps them (this process, or Redis)."""
    c = config().classes
    return _room(c.store, c.max_classes, c.max_followers, c.idle_hours)


# --- the presenter ---------------------------------------------------------------------------------
def share(params: dict, url_path: str):
    """In presenter mode, the link to this page as it is now (the class's QR code is in the sidebar)."""
    if not presenter():
        return
    link = share_link(params, url_path)
    st.markdown("**This page, as it is now:**")
    if link:
        st.code(link, language=None, wrap_lines=True)
    else:
        st.caption(NO_ADDRESS)


def lead_class():
    """In presenter mode, in the sidebar: start a class, then show its code, how many follow, and the
    one QR code with its link (or, without an address students can open, what to do)."""
    lead = leading()
    if lead is None:
        def start():
            try:
                code, key = room().start()
                st.session_state[CLASS_LEAD] = {"code": code, "key": key, "shown": None}
            except ClassError as e:
                st.session_state["class_error"] = str(e)
        st.button("Start a class", on_click=start, help="Students who open the class link follow this screen "
                  "and answer each prediction before you reveal it.")
        if st.session_state.get("class_error"):
            st.error(st.session_state.pop("class_error"))
        return
    link = share_link({CLASS_PARAM: lead["code"]}, "")
    hold(class_line, lead["code"], lead["key"])
    if link is None:
        st.warning(NO_ADDRESS)
        return
    st.html(f'<img src="{qr_image(link)}" alt="QR code of the class link below" style="width: 100%">')
    st.code(link, language=None, wrap_lines=True)


@polling(3)
def class_line(code: str, key: str):
    """The class's code and how many follow it now, counted again every three seconds (students
    join while the presenter talks, and the presenter's page does not rerun by itself)."""
    following_now = ""
    with contextlib.suppress(ClassError):
        following_now = f" ({room().following(code, key)} following now)"
    st.markdown(f"**Class {code}:** students follow this screen from this link{following_now}.")


def lead_from_link():
    """A presenter's reload: the class in its own address (lead=CODE.KEY, written by appkit.links)
    is led again once the class confirms the key; an ended class is said so and leaves the address."""
    text = st.query_params.get(LEAD_PARAM)
    if leading() or not text or not presenter():
        return
    code, _, key = text.partition(".")
    try:
        room().following(code, key)
        st.session_state[CLASS_LEAD] = {"code": code, "key": key, "shown": None}
    except ClassError as e:
        del st.query_params[LEAD_PARAM]
        st.warning(f"The class in this address was not resumed: {e}")


def show_class(url_path: str):
    """Before and after the presenter's page runs (app.py): share what it shows (the page, its link,
    lesson 1's recorded trace) when that changed, so followers draw it without running the models.
    Before: a switch reaches them even while the page waits minutes for a fresh server's models."""
    lead = leading()
    if not lead:
        return
    params = {k: v for k, v in st.query_params.to_dict().items() if k not in OWN}
    view = {"page": url_path, "params": params,
            "trace": st.session_state.get(CLASS_TRACE) if page_of(url_path).links_itself else None,
            "shared": shared_on(url_path)}
    if view != lead["shown"]:
        try:
            room().show(lead["code"], lead["key"], view)
            lead["shown"] = view
        except ClassError as e:   # the class expired: the presenter can start another
            st.session_state.pop(CLASS_LEAD)
            st.toast(str(e))


# --- a follower ------------------------------------------------------------------------------------
def follow_class(nav_url_path: str):
    """A browser that opened ?class=CODE follows the presenter while its toggle is on (see above)."""
    drawing(page_of(nav_url_path).file)   # every whole run, a class's or not: the page its polls keep (appkit.screen)
    code = st.query_params.get(CLASS_PARAM)
    f = st.session_state.get(CLASS_FOLLOW)
    if code and not presenter() and (f is None or f["code"] != code.strip().upper()):
        # the token in this browser's own address (a reload, a copied tab) keeps its counted vote
        f = st.session_state[CLASS_FOLLOW] = {"code": code.strip().upper(),
                                              "token": token_or_new(st.query_params.get(TOKEN_PARAM)),
                                              "applied": None, "state": None}
        default(CLASS_ON, True)
    if not f:
        return
    with st.container(border=True):
        said = st.empty()   # one line each, never a narrow column: the toggle's label read "Follow the p…" at 1024 px
        st.toggle("Follow the presenter", key=CLASS_ON)
        try:
            f["state"] = room().follow(f["code"], f["token"])
        except ClassError as e:
            said.error(str(e))
            f["state"] = None
            return
        said.markdown(f"**Class {f['code']}**: " + ("this screen follows the presenter's."
                                                    if st.session_state[CLASS_ON] else "exploring alone."))
    if not st.session_state[CLASS_ON]:
        return
    f["page"] = nav_url_path   # the page this run draws (see `poll_class`)
    if f["state"]["step"] != f["applied"] or f["state"]["view"].get("page", nav_url_path) != nav_url_path:
        # applied only once a run has drawn it to the end (appkit.screen.mark_seen): a run cut short
        # leaves the step pending, and the next poll draws the page again
        f["drawing"] = f["state"]["step"]
        apply_view(f["state"]["view"], nav_url_path)
    hold(poll_class)   # alone in a container, so a cleared poll moves no element (appkit.screen)


def poll_s() -> float:
    """How often this follower polls: as its class's size asks (the follow of this whole run)."""
    return ((st.session_state.get(CLASS_FOLLOW) or {}).get("state") or {}).get("poll_s", 2.0)


@polling(poll_s)
def poll_class():
    """Every few seconds (`poll_s`): draw the page again when the presenter has stepped, or when
    this browser never received the screen this session last drew (appkit.screen)."""
    f = st.session_state.get(CLASS_FOLLOW)
    if not f or not st.session_state.get(CLASS_ON):
        return
    if not fragment_run():   # inside a whole run, which is drawing the page already: asking would loop
        return
    with contextlib.suppress(ClassError):
        now = room().follow(f["code"], f["token"])
        # a page other than the presenter's: a poll sent from the page before a switch can run the
        # whole app again on that old page (Streamlit reruns the page a request names)
        if now["step"] != f["applied"] or now["view"].get("page", f.get("page")) != f.get("page"):
            st.rerun(scope="app")


def apply_view(view: dict, here: str):
    """Open the presenter's page as the presenter's link describes it (each value checked on
    reading, as any link's is); lesson 1 replays the presenter's recorded trace."""
    url_path = view.get("page")
    try:
        page = page_of(url_path)
    except KeyError:
        return
    params = {k: str(v) for k, v in (view.get("params") or {}).items() if k not in OWN} | own_params()
    if SEEN in st.query_params:   # rewritten only at the end of the run (appkit.screen.mark_seen)
        params[SEEN] = st.query_params[SEEN]
    st.query_params.from_dict(params)
    read_again(page.id)
    st.session_state[CLASS_VIEW] = view
    if url_path != here:
        st.switch_page(HOME.file if page is HOME else page.file)


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


def not_measured_here():
    """A follower's lesson 7 or 8 before the student measures: what the empty space is for."""
    st.info(f"{FOLLOWING}: press **Measure again** to measure on this server.")


def shared(name: str, inputs, compute, what: str):
    """`compute()`: a small result of the models for `inputs`, made of JSON values (lists, not tuples),
    computed on a follower's screen only when it cannot be helped. The presenter's result also goes
    into the class's view (`show_class`); a follower whose inputs are the presenter's draws that
    one; any other follower gets None until the student asks for the run (`run_here`). `name`
    starts with its page's id and an underscore (sampling_dist), so each page shares only its own."""
    key = json.dumps(inputs, sort_keys=True, default=str)
    if following():
        got = ((class_view() or {}).get("shared") or {}).get(name)
        if isinstance(got, dict) and got.get("inputs") == key:
            return got.get("value")
        if not run_here(name, what):
            return None
    value = measure(compute)   # under the engine lock, as every run of the models
    if leading():
        with contextlib.suppress(TypeError, ValueError):   # not JSON: followers run it when asked
            text = json.dumps(value)
            if len(text) <= MAX_SHARED_BYTES:
                st.session_state.setdefault(SHARED, {})[name] = {"inputs": key, "value": json.loads(text)}
    return value


def shared_on(url_path: str) -> dict:
    """The presenter's shared results that belong to the page at `url_path` (see `shared`)."""
    prefix = page_of(url_path).id + "_"
    return {n: v for n, v in st.session_state.get(SHARED, {}).items() if n.startswith(prefix)}
