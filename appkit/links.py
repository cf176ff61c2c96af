"""A page's settings in its address: read once from a shared link, written back on every run.

Each page links the settings its course record names (appkit.course): the session key
keep_<id>_<name> is <name> in the address. A shared link's values are checked as they are read (a bad
one is named in a warning and the page keeps its default); every later run writes the settings
back, so the address always links to what is on screen. Lesson 1 links its generation, round and
phase itself (`from_params`, `read_cursor`, `set_link`), with the same record's bounds.

What it leaves out: the class's link and QR code (appkit.classroom).
"""
import urllib.parse
from dataclasses import dataclass, fields, replace

import streamlit as st

from appkit.course import COURSE, by_id, page_of
from appkit.fields import read_choice, read_number, read_link, write
from appkit.runtime import config, models
from appkit.state import (CLASS_FOLLOW, CLASS_PARAM, LEAD_PARAM, MODEL_SET, OWN, PRESENTER_PARAM, SEEN, TOKEN_PARAM, key,
                          leading, presenter)
from specviz.hosting.address import student_address
from specviz.generator.sampling import SamplingSettings
from specviz.generator.settings import Settings
from specviz.hosting.config import Limits
from specviz.lessons.cursor import PHASE_ORDER, Cursor

LINK_READ = "link_read"   # the ids of the pages whose link this session has read


def link_state(url_path: str):
    """Read the page's settings from its link on its first run in this session, else write them
    into the address (see above)."""
    record = page_of(url_path)
    page = record.id
    if record.links_itself:
        return
    read = st.session_state.setdefault(LINK_READ, set())
    if page in read:
        set_link(page_params(page))
        return
    read.add(page)
    m = models()
    values, errors = read_link(dict(st.query_params), record.settings, {"drafters": list(m.drafter_models) if m else []})
    for name, value in values.items():
        st.session_state[key(page, name)] = value
    for e in errors:
        st.warning(f"A setting in the link was ignored: {e}. The default is used instead.")


def read_again(page: str):
    """Read page `page`'s link again on its next run (a class moved it to the presenter's settings)."""
    st.session_state.setdefault(LINK_READ, set()).discard(page)


def page_params(page: str) -> dict:
    """The link parameters of a page's current settings."""
    keys = {name: key(page, name) for name in by_id(page).settings}
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


# --- lesson 1's generation, round and phase in its link ------------------------------------------
_FIRST = {name: f.first() for name, f in by_id("draft").settings.items()}   # lesson 1's record: all plain values


@dataclass(frozen=True)
class LessonSettings:
    """Lesson 1's generation settings, its course record's first values by default."""
    prompt: str = _FIRST["prompt"]
    drafter: str = _FIRST["drafter"]
    verifier: str = _FIRST["verifier"]
    k: int = _FIRST["k"]                 # proposals per round
    temperature: float = _FIRST["temperature"]
    seed: int = _FIRST["seed"]
    max_new: int = _FIRST["max_new"]

    def engine_settings(self) -> Settings:
        """The engine's Settings; greedy verification decodes at temperature 0."""
        temp = 0.0 if self.verifier == "greedy" else self.temperature
        return Settings(drafter=self.drafter, verifier=self.verifier, k=self.k,
                        max_new_tokens=self.max_new, sampling=SamplingSettings(temperature=temp), seed=self.seed)


def _prompt(raw: str, most: int) -> str:
    if not raw.strip() or len(raw) > most:
        raise ValueError(f"prompt must be 1 to {most} characters of text")
    return raw


def from_params(params: dict, drafters: list[str], base: LessonSettings = LessonSettings(),
                limits: Limits = Limits()) -> tuple[LessonSettings, list[str]]:
    """Settings from query parameters; unknown or bad values fall back, with one message each.
    The bounds are lesson 1's course record's (appkit.course), within the host's limits on the prompt
    length, k and the number of new tokens.

    >>> s, errors = from_params({"k": "99", "verifier": "sampling"}, ["ar", "lookup"])
    >>> s.k, s.verifier, errors
    (4, 'sampling', ['block size k must be between 1 and 12, got 99'])
    """
    values, errors = {}, []
    f = by_id("draft").settings
    checks = {
        "prompt": lambda v: _prompt(v, min(f["prompt"].hi, limits.max_prompt_chars)),
        "drafter": lambda v: read_choice(v, drafters, "drafter"),
        "verifier": lambda v: read_choice(v, f["verifier"].options, "verifier"),
        "k": lambda v: read_number(v, int, f["k"].lo, min(f["k"].hi, limits.max_k), "block size k"),
        "temperature": lambda v: read_number(v, float, f["temperature"].lo, f["temperature"].hi, "temperature"),
        "seed": lambda v: read_number(v, int, f["seed"].lo, f["seed"].hi, "seed"),
        "max_new": lambda v: read_number(v, int, f["max_new"].lo, min(f["max_new"].hi, limits.max_new_tokens),
                                     "max new tokens"),
    }
    for name, check in checks.items():
        if name in params:
            try:
                values[name] = check(str(params[name]))
            except ValueError as e:
                errors.append(str(e))
    if base.drafter not in drafters and "drafter" not in values and drafters:
        values["drafter"] = drafters[0]
    return replace(base, **values), errors


def to_params(s: LessonSettings) -> dict:
    """The query parameters that restore `s`.

    >>> to_params(LessonSettings())["k"]
    '4'
    """
    return {f.name: str(getattr(s, f.name)) for f in fields(s)}


def read_cursor(params: dict, most_rounds: int) -> tuple[Cursor | None, list[str]]:
    """Lesson 1's round and phase from a link (None when the link names no valid round), with messages.

    >>> read_cursor({"round": "3", "phase": "verify"}, 32)
    (Cursor(shown=3, phase='verify'), [])
    >>> read_cursor({"round": "99", "phase": "later"}, 32)[1]
    ['round must be between 0 and 32, got 99', "phase must be one of draft, verify, commit, got 'later'"]
    """
    errors, shown, phase = [], None, str(params.get("phase", "commit"))
    if "round" in params:
        try:
            shown = read_number(str(params["round"]), int, 0, most_rounds, "round")
        except ValueError as e:
            errors.append(str(e))
    if phase not in PHASE_ORDER:
        errors.append(f"phase must be one of {', '.join(PHASE_ORDER)}, got {phase!r}")
        phase = "commit"
    if shown is None:
        return None, errors
    return (Cursor(shown, phase) if shown else Cursor()), errors


def cursor_params(c: Cursor) -> dict:
    """The link's round and phase for a cursor.

    >>> cursor_params(Cursor(2, "verify"))
    {'round': '2', 'phase': 'verify'}
    """
    return {"round": str(c.shown), "phase": c.phase}
