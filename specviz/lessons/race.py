"""Plain decoding against speculative decoding on the same prompt, run as a race, then replayed.

Both generations run in this one process, one round at a time. The next round always goes to
the runner whose measured decode time is behind, so the two texts grow as they would if the
two ran side by side, each at its own measured speed. Each round's time is measured inside
the engine (draft start to commit end).

The race is run to the end with nothing drawn, and only then replayed (`frames`): redrawing the
lanes after every round put the browser's work on the same cores as the rounds being timed, and
plain decoding, with two to three times as many rounds, paid for more of it (on a 2-core host
41.5 ms/token against a quiet 6). The replay is slow motion, at the measured pace of each lane.

What it leaves out: prefill (time to first token); both runners pay it before the start line.
"""
from dataclasses import dataclass, field

from specviz.generator.engine import Generation, Settings


@dataclass
class Runner:
    name: str
    generation: Generation
    elapsed_ms: float = 0.0
    texts: list = field(default_factory=list)     # (text, kind) per committed token
    marks: list = field(default_factory=list)     # (measured ms, tokens) after each round

    @property
    def ms_per_token(self) -> float | None:
        return self.elapsed_ms / len(self.texts) if self.texts else None

    @property
    def done(self) -> bool:
        return self.generation.done


def start(models, prompt: str, speculative: Settings) -> list[Runner]:
    """Two runners: plain decoding (same verifier and sampling, no drafter) and `speculative`."""
    return [Runner("plain decoding", Generation(models, prompt, speculative.plain())),
            Runner(f"speculative ({speculative.drafter}, k={speculative.block_size})",
                   Generation(models, prompt, speculative))]


def step(runners: list[Runner]) -> Runner | None:
    """Advance the runner that is behind in measured time; None when both have finished."""
    live = [r for r in runners if not r.done]
    if not live:
        return None
    r = min(live, key=lambda x: x.elapsed_ms)
    rnd = r.generation.step()
    if rnd is None:
        return r
    r.elapsed_ms += rnd.total_ms
    r.texts += [(e["text"], e["kind"]) for e in rnd.emitted]
    r.marks.append((r.elapsed_ms, len(r.texts)))
    return r


def finish(runners: list[Runner]) -> list[Runner]:
    """Run the race to the end; nothing is drawn meanwhile, so nothing but the rounds is timed."""
    while step(runners) is not None:
        pass
    return runners


def frames(runners: list[Runner], seconds: float) -> list[tuple[float, int, int, float]]:
    """The finished race replayed so that the last round ends after `seconds`, each lane at its
    measured pace: (seconds from the start, runner index, tokens shown, ms per token so far).

    >>> plain = Runner("plain", None, marks=[(10.0, 1), (20.0, 2)])
    >>> fast = Runner("speculative", None, marks=[(12.0, 3)])
    >>> frames([plain, fast], seconds=2.0)
    [(1.0, 0, 1, 10.0), (1.2, 1, 3, 4.0), (2.0, 0, 2, 10.0)]
    """
    end = max(ms for r in runners for ms, _ in r.marks)
    return sorted((ms / end * seconds, i, n, ms / n) for i, r in enumerate(runners) for ms, n in r.marks)
