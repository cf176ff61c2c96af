"""A Background load runs beside its caller: the caller goes on at once, and gets the value or the
error when it waits."""
import threading

import pytest

from specviz.hosting.background import Background


def test_the_caller_goes_on_while_the_load_runs_and_gets_its_value_when_it_waits():
    gate = threading.Event()
    job = Background(lambda: gate.wait(10) and "models")
    assert not job.done                      # the caller is here before the load could end
    with pytest.raises(TimeoutError, match="still loading"):
        job.wait(timeout=0.05)
    gate.set()
    assert job.wait(timeout=10) == "models" and job.done


def test_the_load_runs_in_another_thread_once():
    calls = []
    job = Background(lambda: calls.append(threading.current_thread()) or len(calls))
    assert job.wait(10) == 1 and job.wait(10) == 1
    assert calls[0] is not threading.current_thread()


def test_a_failed_load_raises_its_own_error_in_the_waiting_thread():
    def load():
        raise FileNotFoundError("no target model at models/target")
    job = Background(load)
    with pytest.raises(FileNotFoundError, match="no target model"):
        job.wait(10)
    assert job.done


def test_seconds_grow_while_it_runs_and_stop_when_it_is_done():
    gate = threading.Event()
    job = Background(gate.wait)
    first = job.seconds
    assert job.seconds >= first >= 0
    gate.set()
    job.wait(10)
    assert job.seconds == job.seconds        # frozen at the load's end
