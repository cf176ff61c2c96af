"""The server-wide engine lock (`appkit.engine()`): sessions share the models, one round at a time.

Every browser session of a server calls the same model objects from its own script thread. Two
things must hold: a round run while another session is stepping gives exactly the round it would
give alone (the same tokens and decisions, its probabilities equal to float32 rounding: a matrix
product in another thread may add in another order), and while one session holds the lock no other gets in (the lock is also what keeps
live timings clean). The second is checked without any clock: the session inside waits for a
signal that the other one got in; with the lock that signal can never come and the wait runs out,
without it the other session is inside at once. Making `engine()` not lock fails this test.

What it leaves out: Streamlit's own session threads (AppTest runs one session); the threads here
call the same functions the pages call, on the same shared models.
"""
import math
import threading

import appkit
from specviz.generator.engine import Generation
from specviz.generator.sampling import SamplingSettings
from specviz.generator.settings import Settings

SESSIONS = [("She had never been so happy as", Settings(drafter="dspark", verifier="sampling", k=3,
                                                         max_new_tokens=12, seed=1,
                                                         sampling=SamplingSettings(temperature=0.9, top_k=40))),
            ("It is a truth universally acknowledged, that", Settings(drafter="ar", verifier="match",
                                                                      k=4, max_new_tokens=12, seed=2))]


def rounds(trace) -> list:
    return [(r.proposed, r.emitted_ids, r.decisions) for r in trace.rounds]


def same_rounds(a: list, b: list) -> bool:
    """The same proposals, emitted tokens and accept decisions with the same uniforms; p, q and their
    ratio equal to float32 rounding (1e-5 relative). A session that disturbed another's cache or random
    stream would change tokens, decisions or uniforms, or move a probability far beyond that."""
    def close(x, y):
        if isinstance(x, dict) and isinstance(y, dict):
            return x.keys() == y.keys() and all(close(x[k], y[k]) for k in x)
        if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
            return len(x) == len(y) and all(close(i, j) for i, j in zip(x, y))
        if isinstance(x, float) and isinstance(y, float):
            return math.isclose(x, y, rel_tol=1e-5, abs_tol=1e-9)
        return x == y
    return close(a, b)


def test_two_sessions_stepping_at_once_get_the_rounds_each_gets_alone(models):
    alone = [rounds(Generation(models, prompt, s).run()) for prompt, s in SESSIONS]
    together, errors = [None, None], []
    start = threading.Barrier(len(SESSIONS))

    def session(i):
        try:
            prompt, s = SESSIONS[i]
            with appkit.engine():
                g = Generation(models, prompt, s)
            start.wait()
            while True:
                with appkit.engine():
                    if g.step() is None:
                        break
            together[i] = rounds(g.trace)
        except Exception as e:   # a thread's failure must fail the test, not vanish with the thread
            errors.append(e)

    threads = [threading.Thread(target=session, args=(i,)) for i in range(len(SESSIONS))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert same_rounds(together, alone), (together, alone)
    assert not same_rounds(together, alone[::-1])          # the comparison tells two sessions apart


def test_no_session_gets_in_while_another_holds_the_lock(models):
    first_in, second_in = threading.Event(), threading.Event()
    seen = {}

    def first():
        with appkit.engine():
            first_in.set()
            Generation(models, "Emma could not help thinking that", Settings.greedy("ar", 4)).run()
            # with the lock the second session cannot be inside now, so this wait runs out
            seen["second inside too"] = second_in.wait(2.0)

    def second():
        first_in.wait()
        with appkit.engine():
            second_in.set()
            seen["second ran"] = True

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"second inside too": False, "second ran": True}
