"""One linked setting of a page: the type its text in a link is read as, and what is allowed.

A shared link carries a page's settings as query parameters, and anything in a link is typed by a
person, so each value is checked as it is read: a bad one is named in one readable sentence and the
page keeps its default, never a traceback. Each page's fields are declared once, in its course
record (appkit.course), which its widgets, its link and the class all read.

What it leaves out: streamlit (appkit.links moves these values in and out of session state), and
which page holds which setting (appkit.course).
"""
from dataclasses import dataclass

from specviz.lessons.presets import PRESETS


def read_number(raw: str, kind, lo, hi, name: str):
    try:
        v = kind(raw)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {raw!r}") from None
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be between {lo} and {hi}, got {raw}")
    return v


def read_choice(raw: str, options, name: str) -> str:
    if raw not in options:
        raise ValueError(f"{name} must be one of {', '.join(options)}, got {raw!r}")
    return raw


@dataclass(frozen=True)
class Field:
    """One linked setting: the type its text in a link is read as, and what is allowed.

    `lo`/`hi` bound a number (each number of a list; the length of a text), `options` lists the
    allowed values, and `among` names a list known only at run time (the model set's drafters).
    `default` is what the page opens on.
    A choice the page lists itself (a radio's labels) is read as text: its widget falls back to its
    first option when the text is none of them.
    """
    kind: type
    lo: float | None = None
    hi: float | None = None
    options: tuple = ()
    among: str = ""
    default: object = None   # the page's first value; a function of no arguments for one a lessons module holds

    def first(self):
        """The setting's first value (None: the page gives it, from what only the run knows).

        >>> Field(int, 1, 6, default=3).first(), Field(float, default=lambda: 0.5).first()
        (3, 0.5)
        """
        return self.default() if callable(self.default) else self.default

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
            return [read_number(x, float, self.lo, self.hi, name) for x in raw.split(",") if x.strip()]
        if self.kind is str:
            if self.options or self.among:
                return read_choice(raw, self.options or tuple(choices.get(self.among, ())), name)
            if not raw.strip() or len(raw) > self.hi:
                raise ValueError(f"{name} must be 1 to {self.hi} characters of text")
            return raw
        value = read_number(raw, self.kind, self.lo, self.hi, name)
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

    >>> read_link({"temp": "0.5", "seed": "x", "who": "?"}, {"temp": Field(float, 0.1, 2.0), "seed": SEED}, {})
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
DRAFTER = Field(str, among="drafters")
LABEL = Field(str, hi=200)
SEED = Field(int, 0, 10**6)
