"""The stopwatch behind every round's draft / verify / overhead milliseconds."""
import time

import pytest
import torch

from specviz.generator.clock import Stopwatch


def test_laps_measure_the_time_between_marks_on_the_cpu():
    w = Stopwatch(torch.device("cpu"))
    w.mark()
    time.sleep(0.02)
    w.mark()
    w.mark()
    first, second = w.laps()
    assert first >= 20 and 0 <= second < first


@pytest.mark.gpu
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
