"""A lesson's settings as plain values: defaults, validation, and the shareable-link round trip.

A shared link carries the prompt and settings as query parameters. Anything in a link is
typed by a person, so each value is checked: a bad one is replaced by its default and named in
a readable message, never a traceback. The same record builds the engine's `Settings`.

What it leaves out: streamlit itself (pages move these values in and out of session state).
"""
from dataclasses import dataclass, fields, replace

from specviz.generator.engine import VERIFIERS, Settings
from specviz.generator.sampling import SamplingSettings
from specviz.hosting.config import Limits

PRESETS = [
    "The best way to learn is to",
    "It is a truth universally acknowledged, that",
    'Anne asked, "Could you open the window?" "Yes,',
    "He said, he said, he said, he said,",
    "Mr. Darcy walked towards the window, and",
]
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
        return Settings(drafter=self.drafter, verifier=self.verifier, block_size=self.k,
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
    The host's limits bound the prompt length, k and the number of new tokens.

    >>> s, errors = from_params({"k": "99", "verifier": "sampling"}, ["ar", "lookup"])
    >>> s.k, s.verifier, errors
    (4, 'sampling', ['block size k must be between 1 and 16, got 99'])
    """
    values, errors = {}, []
    checks = {
        "prompt": lambda v: _prompt(v, limits.max_prompt_chars),
        "drafter": lambda v: _choice(v, drafters, "drafter"),
        "verifier": lambda v: _choice(v, VERIFIERS, "verifier"),
        "k": lambda v: _number(v, int, 1, limits.max_block_size, "block size k"),
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


@dataclass(frozen=True)
class Cursor:
    """Where a page is in a recorded trace: `shown` rounds on screen (the current one is round
    shown - 1) and the phase of the current round revealed so far.

    The engine runs a whole round at once; the cursor reveals it draft -> verify -> commit.

    >>> c = Cursor().forward(); c
    Cursor(shown=1, phase='draft')
    >>> c.forward().forward(), c.forward().forward().forward()
    (Cursor(shown=1, phase='commit'), Cursor(shown=2, phase='draft'))
    >>> Cursor(2, "draft").back(), Cursor(2, "verify").next_round()
    (Cursor(shown=1, phase='commit'), Cursor(shown=2, phase='commit'))
    """
    shown: int = 0
    phase: str = "commit"

    def forward(self) -> "Cursor":
        """The next phase; after commit, the draft phase of the next round."""
        if self.phase == "commit":
            return Cursor(self.shown + 1, "draft")
        return Cursor(self.shown, PHASE_ORDER[PHASE_ORDER.index(self.phase) + 1])

    def next_round(self) -> "Cursor":
        """Finish the current round, or show the next one whole."""
        if self.shown and self.phase != "commit":
            return Cursor(self.shown, "commit")
        return Cursor(self.shown + 1, "commit")

    def back(self) -> "Cursor":
        if self.shown == 0:
            return self
        if self.phase == "draft":
            return Cursor(self.shown - 1, "commit")
        return Cursor(self.shown, PHASE_ORDER[PHASE_ORDER.index(self.phase) - 1])


PHASE_ORDER = ("draft", "verify", "commit")
