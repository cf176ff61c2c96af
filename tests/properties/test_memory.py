"""Memory stays flat on a long-running server: rounds and resets leave nothing behind.

A class steps through hundreds of rounds and resets in one server process. After a warm-up
(allocator pools, lazily built tensors), 500 rounds over 50 fresh generations, cycling through
every drafter and verifier, may grow resident memory (VmRSS, Linux) by less than 50 MB; and a
generation that is dropped, as when a browser session ends, is freed at once.
"""
import gc
import itertools
import weakref
from pathlib import Path

import pytest

from specviz.generator.engine import Generation
from specviz.generator.sampling import SamplingSettings
from specviz.generator.settings import Settings

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmRSS from Linux's /proc")
PROMPTS = ["The best way to learn is to", "It is a truth universally acknowledged, that",
           'Anne asked, "Could you open the window?" "Yes,', "He said, he said, he said, he said,"]


def rss_mb() -> float:
    """Resident memory of this process in MB, after collecting garbage."""
    gc.collect()
    line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def sessions(models):
    """Endless (prompt, settings) pairs over every drafter, both verifiers, and a few block sizes."""
    for i in itertools.count():
        drafter = list(models.drafter_models)[i % len(models.drafter_models)]
        verifier = "sampling" if i % 2 else "greedy"
        yield PROMPTS[i % len(PROMPTS)], Settings(drafter=drafter, verifier=verifier, k=2 + i % 5,
                                                  max_new_tokens=96, seed=i,
                                                  sampling=SamplingSettings(temperature=1.0))


def run(models, rounds: int, resets: int) -> tuple[int, int]:
    """Step fresh generations 10 rounds each until both counts are reached; returns (rounds, resets)."""
    done_rounds = done_resets = 0
    source = sessions(models)
    while done_rounds < rounds or done_resets < resets:
        prompt, settings = next(source)
        g = Generation(models, prompt, settings)
        done_resets += 1
        for _ in range(10):
            if g.step() is None:
                break
            done_rounds += 1
    return done_rounds, done_resets


@pytest.mark.slow   # 560 rounds of every drafter
def test_500_rounds_and_50_resets_grow_resident_memory_by_less_than_50_mb(models):
    run(models, rounds=60, resets=12)   # warm-up: every drafter, both verifiers, twice
    before = rss_mb()
    rounds, resets = run(models, rounds=500, resets=50)
    grown = rss_mb() - before
    assert rounds >= 500 and resets >= 50
    assert grown < 50, f"resident memory grew by {grown:.1f} MB over {rounds} rounds and {resets} resets"


def test_a_dropped_generation_is_freed_with_its_caches(models):
    g = Generation(models, PROMPTS[0], Settings(drafter="ar", max_new_tokens=16))
    g.run()
    alive = [weakref.ref(x) for x in (g, g.cache, g.drafter, g.trace)]
    del g
    gc.collect()
    assert [r() for r in alive] == [None] * len(alive)
