"""A slow load run in a thread of its own, so that a server's first page draws while it loads.

`Background(load)` starts `load()` at once in a daemon thread; `Background(load, start=False)`
waits for `start()` (or for the first `wait()`), so its owner can choose the moment. `done` says
whether it has finished, `seconds` how long it has run (so far, or in all; 0 before it starts), and
`wait()` blocks until it has finished, then returns its value or raises its error in the caller's
thread.

What it leaves out: what is loaded and who waits (appkit.runtime keeps one per model set and
device, and only the actions that need the models wait for it).
"""
import threading
import time


class Background:
    """One call of `load`, in its own thread: started now, or by `start()` or `wait()`.

    >>> job = Background(lambda: 6 * 7)
    >>> job.wait(), job.done
    (42, True)
    >>> later = Background(lambda: 6 * 7, start=False)
    >>> later.done, later.seconds, later.wait()
    (False, 0.0, 42)
    >>> Background(lambda: 1 / 0).wait()
    Traceback (most recent call last):
    ...
    ZeroDivisionError: division by zero
    """

    def __init__(self, load, name: str = "background load", start: bool = True):
        self.started: float | None = None
        self._finished: float | None = None
        self._value, self._error = None, None
        self._over = threading.Event()
        self._load, self._name, self._starting = load, name, threading.Lock()
        if start:
            self.start()

    def start(self) -> "Background":
        """Start the load in its thread, once: a later call does nothing."""
        with self._starting:
            if self.started is None:
                self.started = time.monotonic()
                # a daemon: a server stopped while it loads must not wait for the load to end
                threading.Thread(target=self._run, args=(self._load,), name=self._name, daemon=True).start()
        return self

    def _run(self, load):
        try:
            self._value = load()
        except BaseException as e:   # kept for the waiter, whose thread reports it
            self._error = e
        finally:
            self._finished = time.monotonic()
            self._over.set()

    @property
    def done(self) -> bool:
        return self._over.is_set()

    @property
    def seconds(self) -> float:
        """How long the load has run: until now while it runs, in all once it is done, 0 before it starts."""
        if self.started is None:
            return 0.0
        return (self._finished if self.done else time.monotonic()) - self.started

    def wait(self, timeout: float | None = None):
        """The load's value once it is done (its error raised here), starting it if nothing has;
        TimeoutError after `timeout` seconds."""
        self.start()
        if not self._over.wait(timeout):
            raise TimeoutError(f"still loading after {self.seconds:.0f} s")
        if self._error is not None:
            raise self._error
        return self._value
