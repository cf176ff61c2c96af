"""The stopwatch behind every round's draft / verify / overhead milliseconds."""
import time

import pytest
import torch

from specviz.clock import Stopwatch
from specviz.engine import Generation, Settings


def test_laps_measure_the_time_between_marks_on_the_cpu():
    w = Stopwatch(torch.device("cpu"))
    w.mark()
    time.sleep(0.02)
    w.mark()
    w.mark()
    first, second = w.laps()
    assert first >= 20 and 0 <= second < first


def test_a_round_splits_its_whole_time_into_draft_verify_and_overhead(models):
    r = Generation(models, "The best way to learn is to", Settings(drafter="ar", block_size=3)).step()
    assert min(r.draft_ms, r.verify_ms, r.overhead_ms) > 0
    assert r.draft_ms + r.verify_ms + r.overhead_ms == pytest.approx(r.total_ms)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_laps_include_queued_work():
    dev = torch.device("cuda")
    a = torch.randn(4096, 4096, device=dev)
    w = Stopwatch(dev)
    w.mark()
    for _ in range(20):   # queued asynchronously: a CPU timer alone would see almost nothing
        a = a @ a / 64
    w.mark()
    assert w.laps()[0] > 1.0
