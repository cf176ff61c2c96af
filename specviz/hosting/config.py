"""The host's config file: which model sets the server offers, on which device, and the limits.

Only the host writes it; the browser can only pick a configured set by its name (`choose_set`),
never a path or a model id. Where it comes from (`load_config`): the file named by the
environment variable SPECVIZ_CONFIG, else `specviz.toml` at the repo root, else built-in
defaults (the embedded set alone, class-sized limits). `specviz.example.toml` documents every key.

A set is either the embedded models (`embedded = true`) or a Hugging Face causal-LM target with
drafters that share its tokenizer, each given as a local path (starting with `/`, `./`, `../` or
`~`; relative paths are read from the config file's folder) or a hub id.

Reading the file needs no model code, so the app's first page draws from it before the models'
classes are imported. What it leaves out: loading a set (specviz.hosting.model_sets), caching
loaded sets and showing errors (the app does both).
"""
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from specviz.generator.drafters.names import EVERY_SET
from specviz.generator.settings import MAX_K, Settings
from specviz.hosting.address import public_url

REPO_CONFIG = Path(__file__).resolve().parents[2] / "specviz.toml"
DEVICES = ("auto", "cpu", "cuda", "mps")          # and cuda:N
DTYPES = ("auto", "float32", "bfloat16", "float16")   # auto: the loader's own (specviz.hosting.model_sets)
# names reach URLs, widgets and HTML: keep them to plain characters
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")
RESERVED_DRAFTERS = (*EVERY_SET, "none")          # EVERY_SET is added to every set; none means plain decoding


class ModelSetError(Exception):
    """A configured model set could not be loaded; the message is one line for the page."""


@dataclass(frozen=True)
class Limits:
    """What one run may ask for. The defaults suit a class sharing one CPU server."""
    max_new_tokens: int = 128
    max_prompt_chars: int = 2000
    max_k: int = 16


@dataclass(frozen=True)
class Classes:
    """Classes (specviz.hosting.classroom): how many a server holds, how many browsers follow one,
    after how long idle one is forgotten, and where they live: "memory" (this server process, the
    default) or a redis:// URL that several server processes behind a load balancer share; and the
    address students open (public_url: empty, the presenter's own unless it is a loopback one;
    specviz.hosting.address)."""
    max_classes: int = 20
    max_followers: int = 60
    idle_hours: int = 4
    store: str = "memory"
    public_url: str = ""


@dataclass(frozen=True)
class SetConfig:
    name: str
    label: str
    embedded: bool = False
    target: str | None = None                      # local path or hub id (foreign sets)
    drafters: dict = field(default_factory=dict)   # drafter name -> local path or hub id
    device: str = "auto"
    dtype: str = "auto"
    trust_remote_code: bool = False
    base_dir: Path = Path(".")                     # where relative paths are read from


@dataclass(frozen=True)
class Config:
    sets: dict                 # name -> SetConfig, in file order
    default: str
    limits: Limits = Limits()
    classes: Classes = Classes()
    allow_download: bool = False
    source: str = "built-in defaults"




def load_config(path: str | Path | None = None) -> Config:
    """Read the host's config; a bad file raises ValueError naming the file and the key.

    >>> load_config(Path("specviz.example.toml")).limits.max_new_tokens  # doctest: +SKIP
    128
    """
    if path is None:
        if os.environ.get("SPECVIZ_CONFIG"):
            path = Path(os.environ["SPECVIZ_CONFIG"])
            if not path.is_file():
                raise ValueError(f"SPECVIZ_CONFIG names {path}, which is not a file")
        elif REPO_CONFIG.is_file():
            path = REPO_CONFIG
        else:
            return DEFAULT
    path = Path(path).expanduser()
    try:
        return parse_config(tomllib.loads(path.read_text(encoding="utf-8")), path.resolve().parent, str(path))
    except (ValueError, OSError) as e:   # tomllib's errors are ValueErrors with line and column
        raise ValueError(f"{path}: {e}") from None


def parse_config(raw: dict, base_dir: Path = Path("."), source: str = "config") -> Config:
    """A Config from a parsed TOML table.

    >>> c = parse_config({"sets": {"tiny": {"embedded": True}}, "limits": {"max_new_tokens": 64}})
    >>> c.default, c.limits
    ('tiny', Limits(max_new_tokens=64, max_prompt_chars=2000, max_k=16))
    >>> parse_config({"limits": {"max_new_token": 64}})
    Traceback (most recent call last):
    ValueError: unknown key limits.max_new_token (known: max_new_tokens, max_prompt_chars, max_k)
    """
    _known(raw, ("default", "allow_download", "limits", "classes", "sets"), "")
    limits_raw = _table(raw.get("limits", {}), "limits")
    _known(limits_raw, Limits.__dataclass_fields__, "limits.")
    limits = Limits(**{k: _int(v, f"limits.{k}", 1, MAX_K if k == "max_k" else None)
                       for k, v in limits_raw.items()})
    classes = _classes(_table(raw.get("classes", {}), "classes"))
    sets_raw = _table(raw.get("sets", {"embedded": {"embedded": True}}), "sets")
    if not sets_raw:
        raise ValueError("sets is empty: configure at least one model set")
    sets = {name: _set(name, _table(t, f"sets.{name}"), base_dir) for name, t in sets_raw.items()}
    default = raw.get("default", next(iter(sets)))
    if default not in sets:
        raise ValueError(f"default names {default!r}, which is not among the sets ({', '.join(sets)})")
    return Config(sets, default, limits, classes, _bool(raw.get("allow_download", False), "allow_download"), source)


def _classes(t: dict) -> Classes:
    """The [classes] table.

    >>> _classes({"max_followers": 40, "store": "redis://localhost:6379/0"}).max_followers
    40
    >>> _classes({"public_url": "https://specviz.example.edu"}).public_url
    'https://specviz.example.edu'
    >>> _classes({"store": "postgres://x"})
    Traceback (most recent call last):
    ValueError: classes.store must be "memory" or a redis:// URL, got 'postgres://x'
    """
    _known(t, Classes.__dataclass_fields__, "classes.")
    store = t.get("store", "memory")
    if not isinstance(store, str) or not (store == "memory" or store.startswith(("redis://", "rediss://"))):
        raise ValueError(f'classes.store must be "memory" or a redis:// URL, got {store!r}')
    return Classes(**{k: _int(v, f"classes.{k}", 1, None) for k, v in t.items() if k not in ("store", "public_url")},
                   store=store, public_url=public_url(t.get("public_url", "")))


def _set(name: str, t: dict, base_dir: Path) -> SetConfig:
    where = f"sets.{name}."
    if not NAME.fullmatch(name):
        raise ValueError(f"sets.{name}: a set name is 1-40 letters, digits, '_', '.' or '-'")
    embedded = _bool(t.get("embedded", False), where + "embedded")
    _known(t, ("embedded", "label", "device", "dtype") if embedded else
           ("label", "target", "drafters", "device", "dtype", "trust_remote_code"), where)
    device, dtype = t.get("device", "auto"), t.get("dtype", "auto")
    if device not in DEVICES and not re.fullmatch(r"cuda:\d+", str(device)):
        raise ValueError(f"{where}device must be one of {', '.join(DEVICES)} or cuda:N, got {device!r}")
    if dtype not in DTYPES:
        raise ValueError(f"{where}dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    label = t.get("label", "Embedded models (trained here, small enough for a CPU)" if embedded else name)
    if not isinstance(label, str):
        raise ValueError(f"{where}label must be a string")
    if embedded:
        return SetConfig(name, label, True, device=device, dtype=dtype, base_dir=base_dir)
    if "target" not in t:
        raise ValueError(f"{where}target is missing: a local path or a Hugging Face model id "
                         f"(or embedded = true for the shipped models)")
    drafters = _table(t.get("drafters", {}), where + "drafters")
    for d, source in drafters.items():
        if not NAME.fullmatch(d) or d in RESERVED_DRAFTERS:
            raise ValueError(f"{where}drafters.{d}: a drafter name is 1-40 letters, digits, '_', '.' or '-', "
                             f"and not {' or '.join(RESERVED_DRAFTERS)}")
        _source(source, f"{where}drafters.{d}")
    return SetConfig(name, label, target=_source(t["target"], where + "target"), drafters=dict(drafters),
                     device=device, dtype=dtype, base_dir=base_dir,
                     trust_remote_code=_bool(t.get("trust_remote_code", False), where + "trust_remote_code"))


def _known(t: dict, known, where: str):
    for key in t:
        if key not in known:
            raise ValueError(f"unknown key {where}{key} (known: {', '.join(known)})")


def _table(v, where: str) -> dict:
    if not isinstance(v, dict):
        raise ValueError(f"{where} must be a table, got {v!r}")
    return v


def _bool(v, where: str) -> bool:
    if not isinstance(v, bool):
        raise ValueError(f"{where} must be true or false, got {v!r}")
    return v


def _int(v, where: str, lo: int, hi: int | None) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < lo or (hi is not None and v > hi):
        raise ValueError(f"{where} must be a whole number from {lo}{f' to {hi}' if hi else ' up'}, got {v!r}")
    return v


def is_path(source: str) -> bool:
    return source.startswith(("/", "./", "../", "~"))


def _source(v, where: str) -> str:
    if not isinstance(v, str) or not (is_path(v) or HUB_ID.fullmatch(v)):
        raise ValueError(f"{where} must be a local path (starting with /, ./, ../ or ~) "
                         f"or a Hugging Face model id such as Qwen/Qwen2.5-0.5B, got {v!r}")
    return v


DEFAULT = parse_config({})


def choose_set(config: Config, requested: str | None) -> str:
    """The configured set a browser asked for; anything else is refused (never a path).

    >>> choose_set(DEFAULT, None), choose_set(DEFAULT, "embedded")
    ('embedded', 'embedded')
    >>> choose_set(DEFAULT, "/etc/passwd")
    Traceback (most recent call last):
    ValueError: there is no model set '/etc/passwd' on this server; choose one of: embedded
    """
    if requested is None or requested == "":
        return config.default
    if isinstance(requested, str) and requested in config.sets:
        return requested
    return _refuse(config, requested)


def _refuse(config: Config, requested) -> str:
    shown = repr(requested if len(str(requested)) <= 40 else str(requested)[:40] + "…")
    raise ValueError(f"there is no model set {shown} on this server; choose one of: {', '.join(config.sets)}")


def check_limits(limits: Limits, prompt: str, settings: Settings) -> list[str]:
    """One readable message per way the prompt or settings exceed the host's limits.

    >>> check_limits(Limits(max_k=8), "Hello", Settings(k=12))
    ["Block size 12 is above this server's limit of 8 proposals per round."]
    >>> check_limits(Limits(), "Hello", Settings())
    []
    """
    out = []
    if len(prompt) > limits.max_prompt_chars:
        out.append(f"The prompt is {len(prompt):,} characters; this server accepts at most "
                   f"{limits.max_prompt_chars:,}.")
    if settings.max_new_tokens > limits.max_new_tokens:
        out.append(f"Max new tokens {settings.max_new_tokens} is above this server's limit of "
                   f"{limits.max_new_tokens} per run.")
    # plain decoding ignores the block size, so it is not held against it
    if settings.drafter and settings.k > limits.max_k:
        out.append(f"Block size {settings.k} is above this server's limit of "
                   f"{limits.max_k} proposals per round.")
    return out
