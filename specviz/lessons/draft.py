"""Lesson 1's controller: a recorded generation, where the page is in it, and how to move.

The engine runs a round whole and records it (specviz.generator.trace); the page reveals the
recorded round in three phases, draft -> verify -> commit, at a `Cursor`. A `Stepper` holds the
trace, the live generation that can extend it, and the cursor: moving past the last recorded
round runs the engine for the next one, moving back or resetting never calls a model, and a
saved trace (or the class presenter's) replays with no model at all.

  Stepper       start, load, follow, move (forward, round, back, reset), go to a linked cursor

`Cursor` (which round is on screen and how much of it is revealed) is specviz.lessons.cursor.

What it leaves out: drawing (course_pages/draft_and_verify.py, specviz.viz) and reading the link
(appkit.links reads a cursor from one).
"""
import time

from specviz.generator.engine import CHAT_NOTICE, Generation
from specviz.generator.trace import Trace
from specviz.lessons.cursor import Cursor, order

ENDED_LIVE = "The generation has finished."
ENDED_REPLAY = "End of the recorded trace."
AHEAD = "The presenter has not shown this yet: this screen follows the presenter's."


class Stepper:
    """A trace on screen, the generation that extends it (None when replaying), and the cursor.

    `measure(f, *args)` makes every model call (the app passes appkit.measure, which holds its
    server-wide engine lock; by default the call is made as it is). A move that cannot
    happen (past the end) returns the sentence to show, and stops playing.

    >>> s = Stepper()
    >>> s.load('not json'), s.error[:24], s.trace
    (False, 'Could not load the file:', None)
    >>> s.move("forward")   # nothing recorded yet
    'End of the recorded trace.'
    """

    def __init__(self, measure=lambda f, *args: f(*args)):
        self.measure = measure
        self.trace: Trace | None = None
        self.gen: Generation | None = None
        self.cursor = Cursor()
        self.replay = False
        self.error: str | None = None
        self.playing = False
        self.last_move = 0.0
        self.limit: Cursor | None = None   # following a class: the presenter's cursor, never passed

    def start(self, models, prompt: str, settings) -> bool:
        """Prefill a fresh generation (no round runs yet); False, refused (see `refuse`), when it cannot."""
        self.error, self.playing = None, False
        try:
            gen = self.measure(Generation, models, prompt, settings)
        except ValueError as e:
            self.refuse(str(e))
            return False
        self._show(gen.trace, gen, replay=False)
        return True

    def refuse(self, error: str):
        """A start refused (a prompt over the host's limit, an empty one): the refusal is what is on
        screen, so the older generation goes with it; stepping it beside the refusal read as the new
        prompt's rounds.

        >>> s = Stepper(); s.cursor = Cursor(2, "verify"); s.refuse("too long")
        >>> s.error, s.trace, s.cursor, s.move("forward")
        ('too long', None, Cursor(shown=0, phase='commit'), 'End of the recorded trace.')
        """
        self.trace, self.gen, self.cursor, self.playing, self.limit = None, None, Cursor(), False, None
        self.error = error

    def load(self, data: str | bytes, name: str = "the file", max_new_tokens: int | None = None) -> bool:
        """Replay a saved trace, checked whole before any of it is kept (specviz.generator.trace_schema);
        False with `error` naming the first thing wrong. A saved trace with no rounds has nothing to show."""
        return self._replay(data, name, max_new_tokens, need_rounds=True)

    def follow(self, data: str, cursor: Cursor | None, max_new_tokens: int | None = None) -> bool:
        """Replay a class presenter's recorded rounds (none yet, when it has just started) at its
        cursor, or at the start when the cursor is past them. A move never passes that cursor: the
        rounds after it are recorded, but the presenter has not shown them (nor a question's answer)."""
        if not self._replay(data, "the class's round", max_new_tokens, need_rounds=False):
            return False
        if cursor is not None and cursor.shown <= len(self.trace.rounds):
            self.cursor = cursor
        self.limit = self.cursor
        return True

    def _replay(self, data, name: str, max_new_tokens: int | None, need_rounds: bool) -> bool:
        try:
            trace = Trace.from_json(data, max_new_tokens=max_new_tokens)
            if need_rounds and not trace.rounds:
                raise ValueError("the trace holds no rounds")
        except ValueError as e:
            self.error = f"Could not load {name}: {e}"
            return False
        self.error = None
        self._show(trace, None, replay=True)
        return True

    def _show(self, trace: Trace, gen: Generation | None, replay: bool):
        self.trace, self.gen, self.replay, self.cursor, self.playing = trace, gen, replay, Cursor(), False
        self.limit = None

    def ensure(self, index: int) -> bool:
        """Is round `index` recorded? Run the engine for it if needed and possible."""
        if self.trace is None:
            return False
        while len(self.trace.rounds) <= index:
            if self.gen is None or self.gen.done:
                return False
            if self.measure(self.gen.step) is None:
                return False
        return True

    def move(self, action: str, seen: Cursor | None = None) -> str | None:
        """Move the cursor: "forward" (a phase), "round", "back" or "reset". Returns the sentence to
        show when the end stops it (None otherwise, and for "back", which has nothing to say).

        `seen` is the cursor of the screen a button was pressed on: a press that reaches the server
        after the cursor has moved on (the same click delivered twice by a busy server, or pressed
        on a screen the browser had not yet replaced) moves nothing, so a click never moves two steps.

        >>> s = Stepper(); s.cursor = Cursor(2, "verify")
        >>> s.move("back", seen=Cursor(2, "commit")), s.cursor
        (None, Cursor(shown=2, phase='verify'))
        """
        if seen is not None and seen != self.cursor:
            return None
        new = {"forward": self.cursor.forward, "round": self.cursor.next_round, "back": self.cursor.back,
               "reset": Cursor}[action]()
        self.last_move = time.monotonic()
        if self.limit is not None and order(new) > order(self.limit):
            self.playing = False
            return AHEAD
        if new.shown == 0 or self.ensure(new.shown - 1):
            self.cursor = new
            return None
        self.playing = False
        return None if action == "back" else ENDED_REPLAY if self.replay or self.gen is None else ENDED_LIVE

    def go_to(self, cursor: Cursor) -> str | None:
        """Run the rounds up to a linked cursor and show it; the sentence to show when the
        generation ended before it."""
        if cursor.shown == 0 or self.ensure(cursor.shown - 1):
            self.cursor = cursor
            return None
        return (f"round {cursor.shown} was never reached: the generation ended after round "
                f"{len(self.trace.rounds) if self.trace else 0}")

    def toggle_play(self):
        self.playing = not self.playing
        self.last_move = 0.0

    def due(self, tick_s: float) -> bool:
        """While playing: has a tick passed since the last move?"""
        return self.playing and time.monotonic() - self.last_move >= tick_s * 0.9


def prompt_texts(trace: Trace) -> list[str]:
    """Text of each prompt token, as recorded (a trace saved before it recorded them shows ids)."""
    return trace.prompt_tokens or [f"#{i}" for i in trace.prompt_ids]


def prompt_read(trace: Trace) -> str:
    """The prompt as the target read it: a chat target reads it inside its template, so its tokens
    are shown; any other, the prompt as typed."""
    return "".join(prompt_texts(trace)) if CHAT_NOTICE in trace.notices else trace.prompt
