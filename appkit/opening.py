"""The setting the home race opens on, measured once per server right after its models load.

A race that opens on a setting this machine cannot win teaches the opposite of the lesson, and which
setting wins depends on the machine and on what else runs on it. So once a server's models have
loaded, a thread of its own races every drafter at k = 2, 3 and 4 against plain decoding under the
engine lock (specviz.lessons.home.fastest_setting), and the home race opens on what it found
(home.opening_choice): DSpark when it is within the noise of the best. A student's click never pays
for it: a race pressed while it runs is kept, as one pressed while the models load (appkit.waiting),
and runs once it is done, a note saying meanwhile that it waits.

What it leaves out: measuring again later (a server keeps its first measurement; "Find the fastest
setting" on the home page measures now, on demand).
"""
import atexit
import contextlib
import threading

import streamlit as st

from appkit.runtime import chosen, engine, loader
from specviz.hosting.background import Background
from specviz.hosting.config import ModelSetError


STOPPING = threading.Event()   # set when the process exits: a measurement stops at its next run


def _stop(job: Background):
    """At exit, before the interpreter tears down: a thread still in a torch call then aborts the process."""
    STOPPING.set()
    if job.started is not None:   # wait() would start one that never started, and the load with it
        with contextlib.suppress(Exception):
            job.wait(timeout=60)


def _stop_if_stopping(done: int, total: int):
    if STOPPING.is_set():
        raise RuntimeError("the server is stopping")


@st.cache_resource(show_spinner=False)
def measurement(set_name: str, device: str) -> Background:
    """One measurement per model set and device, started by `start` and shared by every session."""
    load = loader(set_name, device)

    def measure():
        m, _ = load.wait()   # first: the load waits for the engine's code (appkit.engine_code), and a second
        from specviz.generator.threads import fit_threads   # thread importing transformers beside it breaks it
        from specviz.lessons import home
        from specviz.lessons.presets import PRESETS
        with engine():
            fit_threads(m)   # the cores free now, as a race fits them
        # the lock run by run: a student's click gets in between two runs rather than waiting for them all
        best = home.fastest_setting(m, PRESETS[0], list(m.drafter_models), ks=home.OPENING_KS,
                                    progress=_stop_if_stopping, guard=engine)
        return best, home.opening_choice(best, m.block_drafters(markov=True))
    job = Background(measure, name=f"opening race of {set_name} on {device}", start=False)
    atexit.register(_stop, job)
    return job


def start() -> None:
    """Start this session's set's measurement, if nothing has: it waits for the models itself."""
    measurement(*chosen()).start()


def opening() -> tuple[dict, tuple[str, int]] | None:
    """(the measurement, the (drafter, k) the race opens on), or None while it runs or when the
    models could not load (the sidebar says why)."""
    job = measurement(*chosen()).start()
    if not job.done:
        return None
    try:
        return job.wait()
    except (ModelSetError, ValueError):
        return None


# every 3 s, as appkit.waiting's clock while the models load: the page is drawn again once it is done
@st.fragment(run_every=3.0)
def _clock(what: str):
    job = measurement(*chosen())
    if job.done:
        st.rerun()
    st.info(f"**Measuring which setting wins on this machine** (once per server; {job.seconds:.0f} s so far): {what}",
            icon=":material/timer:")


def measuring_note(what: str) -> bool:
    """While the models have loaded and the measurement runs: a note saying so, with the seconds so far and
    what waits for it, and the page drawn again once it is done. True while it runs."""
    if not loader(*chosen()).done or measurement(*chosen()).done:
        return False
    _clock(what)
    return True
