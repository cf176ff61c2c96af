"""How many CPU threads the models use: measured on the cores that are free now, not assumed.

torch starts with one thread per core. On a quiet machine that is right; on a busy one (a
laptop serving the app while it draws the page, another process on one of two cores) every
parallel kernel waits at its barrier for the thread whose core is taken, and small forwards,
which are all a speculative round is made of, slow down most. Plain decoding then beats
speculative decoding on the very page that teaches the opposite.

So the thread count is chosen by timing the work a round does, a one-token step and a check of
five tokens, at each candidate count, alternated so that a busy moment falls on all of them,
and keeping the count with the smallest median (a count far slower than the best is dropped early). The choice is process-wide (torch's setting),
so callers hold the engine lock while choosing.

What it leaves out: GPUs (the device does the work; the count does not matter there) and
inter-op threads (the engine runs one forward at a time).
"""
import os
import statistics

import torch

from specviz.generator.clock import Stopwatch


def free_cores() -> int:
    """Cores this process may run on (its affinity), which can be fewer than the machine has."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:          # not on Linux
        return os.cpu_count() or 1


def candidates(cores: int) -> list[int]:
    """Thread counts worth timing: one, half the cores and all of them.

    >>> candidates(1), candidates(2), candidates(8)
    ([1], [1, 2], [1, 4, 8])
    """
    return sorted({1, max(1, cores // 2), cores})


@torch.no_grad()
def time_threads(models, counts: list[int], repeats: int = 5, context: int = 32) -> dict[int, float]:
    """Median ms of (a one-token step + a five-token check) on the target, per thread count.

    A count whose run takes over three times the best so far is dropped after that run:
    on a busy machine a count that oversubscribes the cores can be twenty times slower, and
    timing it five more times would cost the class seconds to learn nothing.
    """
    ids = torch.arange(1, context + 1, device=models.device).unsqueeze(0) % models.target.config.vocab_size
    before = torch.get_num_threads()
    times = {n: [] for n in counts}

    def one_run(n: int) -> float:
        torch.set_num_threads(n)
        cache = models.target(ids, use_cache=True).cache   # a fresh cache, made by the model
        watch = Stopwatch(models.device)
        watch.mark()
        models.target(ids[:, -1:], cache=cache, use_cache=True)
        models.target(ids[:, -5:], cache=cache, use_cache=True)
        watch.mark()
        return watch.laps()[0]

    try:
        warm = {n: one_run(n) for n in counts}   # uncounted: each pays its first-call costs
        live = [n for n in counts if warm[n] <= 3 * min(warm.values())]
        for _ in range(repeats):
            for n in list(live):
                times[n].append(one_run(n))
                best = min(statistics.median(times[c]) for c in live if times[c])
                if times[n][-1] > 3 * best and len(live) > 1:
                    live.remove(n)
    finally:
        torch.set_num_threads(before)
    return {n: statistics.median(t) for n, t in times.items() if t}


def fit_threads(models, repeats: int = 5) -> dict:
    """Set torch's thread count to the fastest on the cores free now (CPU only); returns
    {"threads": chosen, "cores": free cores, "ms": {count: median ms}}.
    """
    cores = free_cores()
    if models.device.type != "cpu" or cores == 1:
        return {"threads": torch.get_num_threads(), "cores": cores, "ms": {}}
    ms = time_threads(models, candidates(cores), repeats)
    best = min(ms, key=ms.get)
    torch.set_num_threads(best)
    return {"threads": best, "cores": cores, "ms": ms}
