"""A lesson's settings as plain values: defaults, validation, and the shareable-link round trip.

A shared link carries the prompt and settings as query parameters: lesson 1's generation, round
and phase (`from_params`, `read_cursor`), every other page's settings by `LINKED`. Anything in a link is
typed by a person, so each value is checked: a bad one is replaced by its default and named in
a readable message, never a traceback. The same record builds the engine's `Settings`.

What it leaves out: streamlit itself (pages move these values in and out of session state).
"""
from dataclasses import dataclass, fields, replace

from specviz.generator.sampling import SamplingSettings
from specviz.generator.settings import VERIFIERS, Settings
from specviz.hosting.config import Limits
from specviz.lessons.presets import PRESETS
from specviz.lessons.cursor import PHASE_ORDER, Cursor

VERIFIER_LABELS = {"greedy": "greedy (argmax match)", "sampling": "speculative sampling (ratio + residual)",
                   "match": "target-draw matching"}

@dataclass(frozen=True)
class LessonSettings:
    prompt: str = PRESETS[0]
    drafter: str = "ar"
    verifier: str = "greedy"
    k: int = 4                  # proposals per round
    temperature: float = 1.0
    seed: int = 0
    max_new: int = 32

    def engine_settings(self) -> Settings:
        """The engine's Settings; greedy verification decodes at temperature 0."""
        temp = 0.0 if self.verifier == "greedy" else self.temperature
        return Settings(drafter=self.drafter, verifier=self.verifier, k=self.k,
                        max_new_tokens=self.max_new, sampling=SamplingSettings(temperature=temp), seed=self.seed)


def _number(raw: str, kind, lo, hi, name: str):
    try:
        v = kind(raw)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {raw!r}") from None
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be between {lo} and {hi}, got {raw}")
    return v


def _choice(raw: str, options, name: str) -> str:
    if raw not in options:
        raise ValueError(f"{name} must be one of {', '.join(options)}, got {raw!r}")
    return raw


def _prompt(raw: str, most: int) -> str:
    if not raw.strip() or len(raw) > most:
        raise ValueError(f"prompt must be 1 to {most} characters of text")
    return raw


def from_params(params: dict, drafters: list[str], base: LessonSettings = LessonSettings(),
                limits: Limits = Limits()) -> tuple[LessonSettings, list[str]]:
    """Settings from query parameters; unknown or bad values fall back, with one message each.
    The host's limits bound the prompt length, k and the number of new tokens; k also stops where
    lesson 1's slider does (DRAFT_K).

    >>> s, errors = from_params({"k": "99", "verifier": "sampling"}, ["ar", "lookup"])
    >>> s.k, s.verifier, errors
    (4, 'sampling', ['block size k must be between 1 and 12, got 99'])
    """
    values, errors = {}, []
    checks = {
        "prompt": lambda v: _prompt(v, limits.max_prompt_chars),
        "drafter": lambda v: _choice(v, drafters, "drafter"),
        "verifier": lambda v: _choice(v, VERIFIERS, "verifier"),
        "k": lambda v: _number(v, int, 1, min(DRAFT_K.hi, limits.max_k), "block size k"),
        "temperature": lambda v: _number(v, float, 0.05, 2.0, "temperature"),
        "seed": lambda v: _number(v, int, 0, 2**31 - 1, "seed"),
        "max_new": lambda v: _number(v, int, 1, limits.max_new_tokens, "max new tokens"),
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


# --- every lesson's settings in its link ----------------------------------------------------------
@dataclass(frozen=True)
class Field:
    """One linked setting: the type its text in a link is read as, and what is allowed.

    `lo`/`hi` bound a number (each number of a list; the length of a text), `options` lists the
    allowed values, and `among` names a list known only at run time (the model set's drafters).
    A choice the page lists itself (a radio's labels) is read as text: its widget falls back to its
    first option when the text is none of them.
    """
    kind: type
    lo: float | None = None
    hi: float | None = None
    options: tuple = ()
    among: str = ""

    def read(self, name: str, raw: str, choices: dict):
        """The value `raw` stands for, or ValueError with a sentence saying what is allowed.

        >>> Field(float, 0.1, 2.0).read("temp", "0.5", {}), Field(bool).read("other", "1", {})
        (0.5, True)
        >>> Field(float, 0.1, 2.0).read("temp", "9", {})
        Traceback (most recent call last):
        ValueError: temp must be between 0.1 and 2.0, got 9
        """
        if self.kind is bool:
            if raw not in ("1", "0", "true", "false"):
                raise ValueError(f"{name} must be 1 or 0, got {raw!r}")
            return raw in ("1", "true")
        if self.kind is list:
            return [_number(x, float, self.lo, self.hi, name) for x in raw.split(",") if x.strip()]
        if self.kind is str:
            if self.options or self.among:
                return _choice(raw, self.options or tuple(choices.get(self.among, ())), name)
            if not raw.strip() or len(raw) > self.hi:
                raise ValueError(f"{name} must be 1 to {self.hi} characters of text")
            return raw
        value = _number(raw, self.kind, self.lo, self.hi, name)
        if self.options and value not in self.options:
            raise ValueError(f"{name} must be one of {', '.join(map(str, self.options))}, got {raw}")
        return value


def write(value) -> str:
    """A setting as its link writes it (numbers without float noise, flags as 1/0, lists comma-separated).

    >>> write(0.1 + 0.2), write(True), write([-4.0, -8.0]), write(1000)
    ('0.3', '1', '-4,-8', '1000')
    """
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple)):
        return ",".join(write(v) for v in value)
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def read_link(params: dict, fields: dict, choices: dict) -> tuple[dict, list[str]]:
    """The linked settings in `params` that pass their Field, and one message per value that does not.
    Names a page does not link are ignored.

    >>> read_link({"temp": "0.5", "seed": "x", "who": "?"}, LINKED["sampling"], {})
    ({'temp': 0.5}, ["seed must be a number, got 'x'"])
    """
    values, errors = {}, []
    for name, field in fields.items():
        if name in params:
            try:
                values[name] = field.read(name, str(params[name]), choices)
            except ValueError as e:
                errors.append(str(e))
    return values, errors


TEXT = Field(str, hi=2000)            # a typed prompt; the host's limit is checked when it runs
PRESET = Field(str, options=tuple(PRESETS))
DRAFT_K = Field(int, 1, 12)   # lesson 1's k: its slider and its link (`from_params`)
DRAFTER = Field(str, among="drafters")
LABEL = Field(str, hi=200)
SEED = Field(int, 0, 10**6)
# Each page's linked settings: its widget keys are keep_<page>_<name> (lesson 1 links the settings
# of its running generation, its round and its phase itself: see `from_params` and `read_cursor`).
# The bounds are the widgets' own: a page's k slider reads its bound here (`most_k`), and
# tests/app/test_app_links.py checks the other widgets against them.
LINKED = {
    "home": {"prompt": TEXT, "drafter": DRAFTER, "k": Field(int, 1, 8)},
    "sampling": {"source": LABEL, "prompt": PRESET, "drafter": DRAFTER, "temp": Field(float, 0.1, 2.0), "other": Field(bool),
           "n": Field(int, 10, 50000, options=(10, 100, 1000, 10000, 50000)), "seed": SEED, "gen_seed": SEED},
    "parallel": {},
    "budget": {"R": Field(int, 1, len(PRESETS)), "k": Field(int, 1, 6)},
    "admission": {"p": Field(float, 0.0, 1.0), "q": Field(float, 0.05, 1.0),
           "n": Field(int, 100, 20000, options=(100, 500, 1000, 5000, 20000)), "seed": SEED},
    "dloop": {"S": Field(int, 1, 6), "k": Field(int, 1, 8), "prompt": PRESET, "g": Field(float, -20.0, 0.0),
           "drafter": DRAFTER, "sweep": Field(list, -20.0, 0.0)},
    "cost": {"base": Field(float, 0.1, 1000.0), "round": Field(float, 0.1, 5000.0), "tokens": Field(int, 1, 64),
           "prompt": PRESET, "drafter": DRAFTER, "k": Field(int, 1, 12)},
    "speedup": {},
    "inside": {"prompt": PRESET, "drafter": DRAFTER, "k": Field(int, 1, 8), "temp": Field(float, 0.1, 2.0),
           "topk": Field(int, 0, 50)},
    "glossary": {},
}


def most_k(page: str) -> int:
    """The largest block size k a page's slider offers and its link accepts (before the host's limit).

    >>> most_k("dloop"), most_k("draft")
    (8, 12)
    """
    return int((DRAFT_K if page == "draft" else LINKED[page]["k"]).hi)


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
            shown = _number(str(params["round"]), int, 0, most_rounds, "round")
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
