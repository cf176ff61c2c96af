"""A class together: students' browsers follow the presenter's screen and vote before a reveal.

A class is a short random code. The browser that starts it gets a secret key besides the code:
only that key can change what the class sees (`show`), ask a question (`ask`) and reveal it
(`reveal`). A follower (any browser with the code) reads the class (`follow`) and answers the
open question once (`vote`). Votes are counted, not attributed: the class keeps how many chose
each option and a set of random follower tokens that have voted, never which token chose what.

Every value that comes from a browser is checked here, so a page cannot forget to: the code's
alphabet and length, the key, the follower token, the question and the option. A class nobody
touched for `idle_seconds` is forgotten; the number of classes and of followers per class are
limits. State lives in a `Store`: `MemoryStore` in the server process (the default), or
`RedisStore` when several server processes share classes. The class logic is written once,
over the few operations both stores provide.

    >>> room = Classroom(MemoryStore(), max_classes=2, max_followers=30, idle_seconds=3600)
    >>> code, key = room.start()
    >>> room.show(code, key, {"page": "draft_and_verify", "params": {"draft_round": "2"}})
    >>> me = new_token()
    >>> room.follow(code, me)["view"]["page"]
    'draft_and_verify'
    >>> room.ask(code, key, "draft", ["0", "1", "2"])
    >>> room.vote(code, me, "draft", "2"); room.tally(code, key)["votes"]
    {'0': 0, '1': 0, '2': 1}

What it leaves out: accounts and names (a class needs none), persistence across a Redis restart.
"""
import hashlib
import json
import re
import secrets
import threading
import time

ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"   # no 0/O, 1/I: read off a projector and typed
CODE_LENGTH = 8                                  # 32^8 = 10^12 codes: not guessable in a class's hours
CODE_RE = re.compile(f"^[{ALPHABET}]{{{CODE_LENGTH}}}$")
TOKEN_RE = re.compile(r"^[0-9a-f]{32}$")
KEY_RE = re.compile(r"^[0-9a-f]{64}$")
MAX_OPTIONS, MAX_TEXT = 8, 200
MAX_VIEW_BYTES = 3_000_000    # a recorded trace of lesson 1 at the host's largest limits fits
# Each poll is a script run on the server and a redraw in the browser (about 10 ms and 45 ms of CPU on
# a 2-core host, docs/benchmarks.md): a class's followers together poll at most CLASS_POLLS_PER_S
# times a second, so a large class costs the server what ten students do, not three times that.
POLL_S, POLL_MAX_S, CLASS_POLLS_PER_S = 2.0, 8.0, 5.0


class ClassError(ValueError):
    """A request the class refuses; the message is one sentence a page can show."""


def new_token() -> str:
    """A follower's random token (kept in its browser session): how a second vote is known."""
    return secrets.token_hex(16)


def token_or_new(text) -> str:
    """The follower token a browser's own address carries (so a reload keeps its vote), else a new one.

    >>> token_or_new("0123456789abcdef" * 2), len(token_or_new("<script>")), len(token_or_new(None))
    ('0123456789abcdef0123456789abcdef', 32, 32)
    """
    return text if isinstance(text, str) and TOKEN_RE.match(text) else new_token()


def poll_every(followers: int) -> float:
    """Seconds between two polls of one follower in a class of `followers` (see CLASS_POLLS_PER_S):
    two in a small class, longer in a large one, never more than POLL_MAX_S.

    >>> poll_every(1), poll_every(10), poll_every(30), poll_every(500)
    (2.0, 2.0, 6.0, 8.0)
    """
    return min(POLL_MAX_S, max(POLL_S, followers / CLASS_POLLS_PER_S))


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


ADDED, PRESENT, FULL = 2, 1, 0
ADD_SCRIPT = """
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 1 end
if tonumber(ARGV[2]) >= 0 and redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 2
"""


class MemoryStore:
    """The class state in this server process: a dict of values with expiry times, under a lock."""

    def __init__(self, clock=time.monotonic):
        self.clock, self.lock, self.values = clock, threading.Lock(), {}

    def _live(self, name: str):
        value, until = self.values.get(name, (None, 0.0))
        if value is not None and until <= self.clock():
            del self.values[name]
            return None
        return value

    def get(self, name: str) -> str | None:
        with self.lock:
            return self._live(name)

    def put(self, name: str, value: str, ttl: float) -> None:
        with self.lock:
            self.values[name] = (value, self.clock() + ttl)

    def add(self, name: str, member: str, ttl: float, most: float = float("inf")) -> int:
        """Add `member` to the set `name` unless it holds `most` members: ADDED, PRESENT or FULL."""
        with self.lock:
            members = self._live(name) or set()
            if member in members:
                return PRESENT
            if len(members) >= most:
                return FULL
            self.values[name] = (members | {member}, self.clock() + ttl)
            return ADDED

    def size(self, name: str) -> int:
        with self.lock:
            return len(self._live(name) or ())

    def has(self, name: str, member: str) -> bool:
        with self.lock:
            return member in (self._live(name) or ())

    def incr(self, name: str, field: str, ttl: float) -> None:
        with self.lock:
            counts = dict(self._live(name) or {})
            counts[field] = counts.get(field, 0) + 1
            self.values[name] = (counts, self.clock() + ttl)

    def counts(self, name: str) -> dict[str, int]:
        with self.lock:
            return dict(self._live(name) or {})

    def count(self, prefix: str) -> int:
        with self.lock:
            return sum(1 for n in list(self.values) if n.startswith(prefix) and self._live(n) is not None)


class RedisStore:
    """The same operations on a Redis server, so several server processes share the classes.
    Every name expires on its own (Redis's EXPIRE), as the memory store's entries do."""

    def __init__(self, url: str, namespace: str = "specviz:"):
        import redis   # only hosts that configure Redis need the package
        self.r, self.ns = redis.Redis.from_url(url, decode_responses=True), namespace

    def get(self, name):
        return self.r.get(self.ns + name)

    def put(self, name, value, ttl):
        self.r.set(self.ns + name, value, ex=max(1, int(ttl)))

    def add(self, name, member, ttl, most=float("inf")):
        # one script, so that two processes cannot both take the last place
        return int(self.r.eval(ADD_SCRIPT, 1, self.ns + name, member, -1 if most == float("inf") else int(most),
                               max(1, int(ttl))))

    def size(self, name):
        return self.r.scard(self.ns + name)

    def has(self, name, member):
        return bool(self.r.sismember(self.ns + name, member))

    def incr(self, name, field, ttl):
        pipe = self.r.pipeline()
        pipe.hincrby(self.ns + name, field, 1)
        pipe.expire(self.ns + name, max(1, int(ttl)))
        pipe.execute()

    def counts(self, name):
        return {k: int(v) for k, v in self.r.hgetall(self.ns + name).items()}

    def count(self, prefix):
        return sum(1 for _ in self.r.scan_iter(self.ns + prefix + "*"))


def _text(value, what: str) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_TEXT:
        raise ClassError(f"{what} must be a text of 1 to {MAX_TEXT} characters.")
    return value


class Classroom:
    """The rules of a class over a store; see the module's docstring."""

    def __init__(self, store, max_classes: int, max_followers: int, idle_seconds: float):
        self.store, self.max_classes = store, max_classes
        self.max_followers, self.idle = max_followers, idle_seconds

    # --- reading and checking ---------------------------------------------------------------------
    def _state(self, code) -> dict:
        if not isinstance(code, str) or not CODE_RE.match(code.strip().upper()):
            raise ClassError(f"A class code is {CODE_LENGTH} letters and digits, as the presenter's screen shows it.")
        raw = self.store.get("class:" + code.strip().upper())
        if raw is None:
            raise ClassError("No class has this code: it may have ended or been idle too long. "
                             "Ask the presenter for the code on the screen.")
        return json.loads(raw)

    def _presenter(self, code, key) -> dict:
        state = self._state(code)
        if not isinstance(key, str) or not KEY_RE.match(key) or _digest(key) != state["key"]:
            raise ClassError("Only the browser that started this class can change what it shows.")
        return state

    def _save(self, state: dict) -> None:
        self.store.put("class:" + state["code"], json.dumps(state), self.idle)

    # --- the presenter --------------------------------------------------------------------------
    def start(self) -> tuple[str, str]:
        """A new class: (code, key). The key stays in the presenter's browser session."""
        if self.store.count("class:") >= self.max_classes:
            raise ClassError(f"This server already holds {self.max_classes} classes, its limit; try again later.")
        code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
        key = secrets.token_hex(32)
        self._save({"code": code, "key": _digest(key), "view": {}, "question": None, "step": 0})
        return code, key

    def show(self, code: str, key: str, view: dict) -> None:
        """What followers draw now: the page, its link parameters and whatever the page records."""
        state = self._presenter(code, key)
        if not isinstance(view, dict) or len(json.dumps(view)) > MAX_VIEW_BYTES:
            raise ClassError("The view to share is not a small enough JSON object.")
        state["view"], state["step"] = view, state["step"] + 1
        self._save(state)

    def ask(self, code: str, key: str, question: str, options: list[str]) -> None:
        """Open a question for votes (the page's "Predict" question); an open one is replaced."""
        state = self._presenter(code, key)
        if not isinstance(options, list) or not 2 <= len(options) <= MAX_OPTIONS:
            raise ClassError(f"A question has 2 to {MAX_OPTIONS} options.")
        options = [_text(o, "An option") for o in options]
        if state["question"] and state["question"]["key"] == question:
            return   # asked again on a rerun: keep its votes
        state["question"] = {"key": _text(question, "A question"), "options": options, "revealed": False,
                             "id": secrets.token_hex(8)}
        state["step"] += 1
        self._save(state)

    def reveal(self, code: str, key: str, question: str) -> None:
        state = self._presenter(code, key)
        if not state["question"] or state["question"]["key"] != question:
            raise ClassError("That question is not open in this class.")
        state["question"]["revealed"], state["step"] = True, state["step"] + 1
        self._save(state)

    def tally(self, code: str, key: str | None = None) -> dict:
        """The open question and its votes per option ({} without a question). Followers see the
        counts only once the question is revealed; the presenter (with its key) sees them live."""
        state = self._state(code) if key is None else self._presenter(code, key)
        q = state["question"]
        if not q:
            return {}
        counts = self.store.counts(f"votes:{state['code']}:{q['id']}")
        shown = key is not None or q["revealed"]
        return {"question": q["key"], "options": q["options"], "revealed": q["revealed"],
                "votes": {o: counts.get(o, 0) for o in q["options"]} if shown else None,
                "voters": self.store.size(f"voters:{state['code']}:{q['id']}")}

    def following(self, code: str, key: str) -> int:
        """How many browsers follow the class (the presenter asks, with its key)."""
        state = self._presenter(code, key)
        return self.store.size(f"followers:{state['code']}")

    # --- a follower ------------------------------------------------------------------------------
    def follow(self, code: str, token: str) -> dict:
        """The class as a follower sees it: {"code", "view", "step", "question", "votes", "voted",
        "poll_s"}; "voted" says whether this token has answered the open question (never what it
        chose), so a browser that reloaded shows its answer as counted; "poll_s" is how often this
        follower should ask again, for the class's size now (`poll_every`)."""
        state = self._state(code)
        if not isinstance(token, str) or not TOKEN_RE.match(token):
            raise ClassError("This browser's follower token is not valid; reload the page.")
        if self.store.add(f"followers:{state['code']}", token, self.idle, self.max_followers) == FULL:
            raise ClassError(f"This class is full ({self.max_followers} followers, the server's limit).")
        q = state["question"]
        return {"code": state["code"], "view": state["view"], "step": state["step"], "question": q,
                "votes": self.tally(state["code"]),
                "voted": bool(q) and self.store.has(f"voters:{state['code']}:{q['id']}", token),
                "poll_s": poll_every(self.store.size(f"followers:{state['code']}"))}

    def vote(self, code: str, token: str, question: str, option: str) -> None:
        state = self._state(code)
        if not isinstance(token, str) or not TOKEN_RE.match(token):
            raise ClassError("This browser's follower token is not valid; reload the page.")
        q = state["question"]
        if not q or q["key"] != question:
            raise ClassError("That question is not open for votes.")
        if q["revealed"]:
            raise ClassError("The answer is already revealed: votes are closed.")
        if option not in q["options"]:
            raise ClassError("That is not one of the question's options.")
        if self.store.add(f"voters:{state['code']}:{q['id']}", token, self.idle) != ADDED:
            raise ClassError("This browser has already voted on this question.")
        self.store.incr(f"votes:{state['code']}:{q['id']}", option, self.idle)
