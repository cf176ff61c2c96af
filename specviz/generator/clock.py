"""Milliseconds between marks, measured the way the device needs.

On a GPU, work is queued and runs later, so a CPU timer alone would time the queueing. On
CUDA each mark records an event on the device's stream and the intervals are read from the
events once the last one has completed (`torch.cuda.Event.elapsed_time`); on Apple MPS the
device is synchronised at every mark; on the CPU a mark is simply `time.perf_counter()`.

What it leaves out: several CUDA streams (the engine uses the default one).
"""
import time

import torch


class Stopwatch:
    """Marks on one device; `laps()` gives the milliseconds between consecutive marks.

    >>> w = Stopwatch(torch.device("cpu")); w.mark(); _ = sum(range(1000)); w.mark()
    >>> laps = w.laps(); len(laps), laps[0] >= 0
    (1, True)
    """

    def __init__(self, device: torch.device):
        self.device = device
        self.marks = []

    def mark(self):
        if self.device.type == "cuda":
            event = torch.cuda.Event(enable_timing=True)
            event.record(torch.cuda.current_stream(self.device))
            self.marks.append(event)
            return
        if self.device.type == "mps":
            torch.mps.synchronize()
        self.marks.append(time.perf_counter())

    def laps(self) -> list[float]:
        if self.device.type == "cuda":
            self.marks[-1].synchronize()
            return [a.elapsed_time(b) for a, b in zip(self.marks, self.marks[1:])]
        return [(b - a) * 1e3 for a, b in zip(self.marks, self.marks[1:])]
