"""A page's settings in its address: read once from a shared link, written back on every run.

Each page links the settings named in specviz.hosting.app_state.LINKED under its id: the session key
keep_<id>_<name> is <name> in the address. A shared link's values are checked as they are read (a bad
one is named in a warning and the page keeps its default); every later run writes the settings
back, so the address always links to what is on screen. Lesson 1 links its generation, round and
phase itself (`set_link`).

What it leaves out: the class's link and QR code (appkit.classroom).
"""
import urllib.parse

import streamlit as st

from appkit.course import COURSE, page_of
from appkit.runtime import config, models
from appkit.state import (CLASS_FOLLOW, CLASS_PARAM, LEAD_PARAM, MODEL_SET, OWN, PRESENTER_PARAM, SEEN, TOKEN_PARAM, key,
                          leading, presenter)
from specviz.hosting.address import student_address
from specviz.hosting.app_state import LINKED, read_link, write

LINK_READ = "link_read"   # the ids of the pages whose link this session has read


def link_state(url_path: str):
    """Read the page's settings from its link on its first run in this session, else write them
    into the address (see above)."""
    page = page_of(url_path).id
    if page not in LINKED:
        return
    read = st.session_state.setdefault(LINK_READ, set())
    if page in read:
        set_link(page_params(page))
        return
    read.add(page)
    m = models()
    values, errors = read_link(dict(st.query_params), LINKED[page], {"drafters": list(m.drafter_models) if m else []})
    for name, value in values.items():
        st.session_state[key(page, name)] = value
    for e in errors:
        st.warning(f"A setting in the link was ignored: {e}. The default is used instead.")


def read_again(page: str):
    """Read page `page`'s link again on its next run (a class moved it to the presenter's settings)."""
    st.session_state.setdefault(LINK_READ, set()).discard(page)


def page_params(page: str) -> dict:
    """The link parameters of a page's current settings."""
    keys = {name: key(page, name) for name in LINKED.get(page, {})}
    return {name: write(st.session_state[k]) for name, k in keys.items() if k in st.session_state}


def _with_set(params: dict) -> dict:
    """`params` with the model set, unless it is the host's default."""
    chosen = st.session_state.get(MODEL_SET, config().default)
    return params | ({"set": chosen} if chosen != config().default else {})


def own_params() -> dict:
    """This browser's own parameters, so that a reload finds its class again: presenter mode when on,
    the class it leads (code and key: only in the presenter's own address), the class it follows
    with its anonymous token (so a reload keeps its counted vote)."""
    own, lead, f = {}, leading(), st.session_state.get(CLASS_FOLLOW)
    if presenter():
        own[PRESENTER_PARAM] = "1"
    if lead:
        own[LEAD_PARAM] = f"{lead['code']}.{lead['key']}"
    if f:
        own[CLASS_PARAM], own[TOKEN_PARAM] = f["code"], f["token"]
    return own


def keep_own_params():
    """Write this browser's own parameters into its address on any page (a page without linked
    settings never calls `set_link`), and remove those it no longer has."""
    own = own_params()
    for name in (PRESENTER_PARAM, LEAD_PARAM, CLASS_PARAM, TOKEN_PARAM):
        if name in own and st.query_params.get(name) != own[name]:
            st.query_params[name] = own[name]
        elif name not in own and name in st.query_params and name != CLASS_PARAM:
            del st.query_params[name]


def set_link(params: dict):
    """Put `params` in the address, with the model set unless it is the default, and this
    browser's own parameters (`own_params`)."""
    full = _with_set(dict(params)) | own_params()
    if SEEN in st.query_params:   # rewritten only at the end of a run (appkit.screen.mark_seen)
        full[SEEN] = st.query_params[SEEN]
    if st.query_params.to_dict() != full:
        st.query_params.from_dict(full)


def share_link(params: dict, url_path: str) -> str | None:
    """The link that opens a page (its url path) as it is now, for the class: its settings and
    model set, none of this browser's own parameters, at the address students open (the host's
    classes.public_url, else this browser's unless it is a loopback one); None without such an address."""
    base = student_address(config().classes.public_url, st.context.url, [p.url_path for p in COURSE if p.url_path])
    if base is None:
        return None
    full = _with_set({k: v for k, v in params.items() if k not in OWN})
    return f"{base}/{url_path}" + ("?" + urllib.parse.urlencode(full) if full else "")
