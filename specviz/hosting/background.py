"""A slow load run in a thread of its own, so that a server's first page draws while it loads.

`Background(load)` starts `load()` at once in a daemon thread. `done` says whether it has
finished, `seconds` how long it has run (so far, or in all), and `wait()` blocks until it has
finished, then returns its value or raises its error in the caller's thread.

What it leaves out: what is loaded and who waits (appkit.runtime keeps one per model set and
device, and only the actions that need the models wait for it).
"""
import threading
import time


class Background:
    """One call of `load`, started now in its own thread.

    >>> job = Background(lambda: 6 * 7)
    >>> job.wait(), job.done
    (42, True)
    >>> Background(lambda: 1 / 0).wait()
    Traceback (most recent call last):
    ...
    ZeroDivisionError: division by zero
    """

    def __init__(self, load, name: str = "background load"):
        self.started = time.monotonic()
        self._finished: float | None = None
        self._value, self._error = None, None
        self._over = threading.Event()
        # a daemon: a server stopped while it loads must not wait for the load to end
        threading.Thread(target=self._run, args=(load,), name=name, daemon=True).start()

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
        """How long the load has run: until now while it runs, in all once it is done."""
        return (self._finished if self.done else time.monotonic()) - self.started

    def wait(self, timeout: float | None = None):
        """The load's value once it is done (its error raised here); TimeoutError after `timeout` seconds."""
        if not self._over.wait(timeout):
            raise TimeoutError(f"still loading after {self.seconds:.0f} s")
        if self._error is not None:
            raise self._error
        return self._value
