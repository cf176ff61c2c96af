"""Plain decoding against speculative decoding on the same prompt, stepped as a race.

Both generations run in this one process, one round at a time. The next round always goes to
the runner whose measured decode time is behind, so the two texts grow as they would if the
two ran side by side, each at its own measured speed. Each round's time is measured inside
the engine (draft start to commit end), so waiting for the lock between rounds is not counted.

What it leaves out: prefill (time to first token); both runners pay it before the start line.
"""
from dataclasses import dataclass, field

from specviz.engine import Generation, Settings


@dataclass
class Runner:
    name: str
    generation: Generation
    elapsed_ms: float = 0.0
    tokens: int = 0
    texts: list = field(default_factory=list)     # (text, kind) per committed token

    @property
    def ms_per_token(self) -> float | None:
        return self.elapsed_ms / self.tokens if self.tokens else None

    @property
    def done(self) -> bool:
        return self.generation.done


def start(models, prompt: str, speculative: Settings) -> list[Runner]:
    """Two runners: plain decoding (same verifier and sampling, no drafter) and `speculative`."""
    plain = Settings(drafter=None, verifier=speculative.verifier, block_size=1,
                     max_new_tokens=speculative.max_new_tokens, sampling=speculative.sampling, seed=speculative.seed)
    return [Runner("plain decoding", Generation(models, prompt, plain)),
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
    r.tokens += len(rnd.emitted)
    r.texts += [(e["text"], e["kind"]) for e in rnd.emitted]
    return r
