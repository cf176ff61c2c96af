"""Whole rounds are lossless under sampling, proven exactly by enumerating every random outcome.

The engine runs its real round (draft, one target forward, verify, correction or bonus, commit)
on the tiny model set of `tests.tiny`, with a 6-token vocabulary. Every random decision of the
round goes through two calls: `sample(distribution, gen)` (the drafter's picks, the target's
draws of target-draw matching, the correction or bonus) and one `torch.rand(k)` (the uniforms of
speculative sampling). The test replaces both with an enumerator that walks every outcome:

  sample      every token t with distribution[t] > 0, with weight distribution[t]: the weight is
              the engine's own argument, so a correction drawn from the wrong distribution is
              weighted as a real sampler would draw it
  uniforms    u_i lies in [0, r_i) (accept) or [r_i, 1) (reject), r_i = min(1, p_i(x_i) / q_i(x_i))
              computed here from the target directly; each interval is represented by its middle
              and weighted by its length (the uniforms after the first rejection are not read
              and count with weight 1)

Every path of the round is run once, which gives the exact law of the round's emitted tokens.
Losslessness says: those tokens, continued by the target itself, are distributed as plain
sampling from the target. So each emitted sequence is extended with the target's p (computed
with full forwards, no cache) to N = (proposals + 1) tokens, or to end-of-text, and the result
must equal the target's joint law of N tokens, sequence by sequence, to 1e-5.

Rounds are enumerated from two states: right after the prompt, and after seeded rounds have
been committed (so a stale cache or drafter state would show). The wrong rounds the tests must
catch, planted one at a time in the engine: the correction drawn from residual(p[n], q[0])
instead of residual(p[n], q[n]) (total variation 0.03 to 0.2 here), the correction drawn from
p instead of the residual, the bonus drawn from the residual, acceptance at u <= 1 - ratio.

What it leaves out: greedy verification (tests/properties/test_lossless_greedy.py compares it with
transformers), the embedded models (tests/properties/test_lossless_sampling.py samples them).
"""
import copy
import itertools

import pytest
import torch

from specviz.generator import engine
from specviz.generator.engine import Generation
from specviz.generator.sampling import SamplingSettings, transform
from specviz.generator.settings import Settings
from tests.tiny import V, tiny_models

PROMPT = "a b c a b"                # lookup finds "c a b" after it
TOL = 1e-5
SPREAD = SamplingSettings(temperature=1.3, top_k=3)
WIDE = SamplingSettings(temperature=1.2, top_k=4)
NUCLEUS = SamplingSettings(temperature=0.9, top_p=0.95)
BOTH = SamplingSettings(temperature=1.1, top_k=4, top_p=0.9)


@pytest.fixture(scope="module")
def tiny():
    return tiny_models()


class TargetLaw:
    """p(. | prompt + history) from full target forwards (no cache), after the sampling transform."""

    def __init__(self, models, prompt_ids: list[int], sampling: SamplingSettings):
        self.m, self.prompt, self.s, self.memo = models, prompt_ids, sampling, {}

    def __call__(self, history: tuple) -> torch.Tensor:
        if history not in self.memo:
            with torch.no_grad():
                logits = self.m.target(torch.tensor([self.prompt + list(history)])).logits[0, -1]
            self.memo[history] = transform(logits, self.s).double()
        return self.memo[history]

    def extend(self, law: dict, n: int) -> dict:
        """Continue every sequence of `law` with the target up to n tokens or end-of-text."""
        out, todo = {}, list(law.items())
        while todo:
            seq, w = todo.pop()
            if len(seq) >= n or (seq and seq[-1] == self.m.eos_id):
                out[seq] = out.get(seq, 0.0) + w
                continue
            p = self(seq)
            todo += [(seq + (t,), w * float(p[t])) for t in range(V) if p[t] > 0]
        return out


class Paths:
    """The random source of one path: each event takes the next scripted choice (default 0)."""

    def __init__(self, script: list[int], law: TargetLaw, base: list[int]):
        self.script, self.law, self.base = script, law, base
        self.options, self.trail, self.weight = [], [], 1.0
        self.draft = None

    def choose(self, outcomes: list[tuple]) -> object:
        """outcomes: [(value, weight), ...] with weight > 0; returns the chosen value."""
        depth = len(self.trail)
        i = self.script[depth] if depth < len(self.script) else 0
        self.options.append(len(outcomes))
        self.trail.append(i)
        self.weight *= outcomes[i][1]
        return outcomes[i][0]

    def sample(self, probs: torch.Tensor, gen) -> int:
        probs = probs.double()
        return self.choose([(t, float(probs[t])) for t in range(len(probs)) if probs[t] > 0])

    def rand(self, n: int, generator=None) -> torch.Tensor:
        x, qs = self.draft.tokens[:n], self.draft.q[:n]
        ratios = []
        for i, t in enumerate(x):
            p_x = float(self.law(tuple(self.base + x[:i]))[t])
            ratios.append(min(1.0, p_x / float(qs[i][t])))
        outcomes = []   # m = the first rejected position (n: none rejected)
        for m in range(n + 1):
            w = 1.0
            for r in ratios[:m]:
                w *= r
            if m < n:
                w *= 1 - ratios[m]
            if w > 0:
                us = [r / 2 for r in ratios[:m]] + ([(1 + ratios[m]) / 2] if m < n else [])
                outcomes.append((us + [0.5] * (n - len(us)), w))
        return torch.tensor(self.choose(outcomes), dtype=torch.float64)


def models_memo(models) -> dict:
    """Objects a copy of a generation must share, not duplicate: the models and the tokenizer."""
    memo = {id(models): models, id(models.tokenizer): models.tokenizer}
    for model in [models.target, *[d for d in models.drafter_models.values() if d is not None]]:
        for obj in itertools.chain(model.modules(), model.parameters(), model.buffers()):
            memo[id(obj)] = obj
    return memo


def round_law(models, settings: Settings, rounds_before: int, monkeypatch) -> tuple[dict, TargetLaw, int]:
    """Exact law of one round's emitted ids, after `rounds_before` seeded rounds.

    Returns (law {emitted ids: probability}, the target's law after the committed text, proposals k).
    """
    start = Generation(models, PROMPT, settings)
    for _ in range(rounds_before):
        start.step()
    law = TargetLaw(models, list(start.committed), settings.sampling)
    memo, result, stack, k = models_memo(models), {}, [[]], 0
    while stack:
        script = stack.pop()
        g = copy.deepcopy(start, dict(memo))
        paths = Paths(script, law, [])
        propose = g.drafter.propose

        def recorded(committed, n, pick):
            paths.draft = propose(committed, n, pick)
            return paths.draft
        g.drafter.propose = recorded
        with monkeypatch.context() as patch:
            patch.setattr(engine, "sample", paths.sample)
            patch.setattr(engine.torch, "rand", paths.rand)
            r = g.step()
        k = max(k, len(r.proposed))
        emitted = tuple(e["id"] for e in r.emitted)
        result[emitted] = result.get(emitted, 0.0) + paths.weight
        for depth in range(len(script), len(paths.trail)):
            stack += [paths.trail[:depth] + [alt] for alt in range(1, paths.options[depth])]
    return result, law, k


def assert_lossless(law: dict, target: TargetLaw, n: int):
    assert sum(law.values()) == pytest.approx(1.0, abs=TOL)
    got = target.extend(law, n)
    want = target.extend({(): 1.0}, n)
    tv = 0.5 * sum(abs(got.get(s, 0.0) - want.get(s, 0.0)) for s in set(got) | set(want))
    assert tv < TOL, f"the round's output, continued by the target, is {tv:.4f} in total variation from p"


# Each sampling setting is one under which the drafter's q differs from position to position in
# this set, so that a correction drawn with another position's q moves the law (by 0.0004 to 0.04
# here, against a tolerance of 1e-5).
CASES = [   # (drafter, verifier, sampling, proposals k, DLoop stages)
    ("ar", "sampling", SPREAD, 2, 1), ("ar", "match", NUCLEUS, 2, 1),
    ("lookup", "sampling", SPREAD, 3, 1), ("lookup", "match", BOTH, 3, 1),
    ("dflash", "sampling", BOTH, 2, 1), ("dflash", "match", SPREAD, 2, 1),
    ("dspark", "sampling", WIDE, 2, 1), ("dspark", "match", BOTH, 2, 1),
    ("dloop", "sampling", SPREAD, 1, 3), ("dloop", "match", NUCLEUS, 1, 2),
]


@pytest.mark.parametrize("drafter,verifier,sampling,k,stages", CASES)
@pytest.mark.parametrize("rounds_before", [0, 2])
def test_a_whole_round_continued_by_the_target_is_the_target_law(tiny, monkeypatch, drafter, verifier, sampling,
                                                                 k, stages, rounds_before):
    # a gate of -50 lets DLoop draft all of its stages, so the round checks S * k proposals
    s = Settings(drafter=drafter, verifier=verifier, k=k, max_new_tokens=20, sampling=sampling,
                 seed=5, loop_threshold=-50.0, max_stages=stages)
    law, target, proposed = round_law(tiny, s, rounds_before, monkeypatch)
    assert proposed == k * stages or drafter == "lookup"   # lookup proposes what it finds
    assert_lossless(law, target, proposed + 1)


@pytest.mark.parametrize("verifier", ["sampling", "match"])
def test_a_round_cut_by_the_length_limit_is_the_target_law_of_the_tokens_left(tiny, monkeypatch, verifier):
    s = Settings(drafter="dspark", verifier=verifier, k=3, max_new_tokens=4, sampling=BOTH, seed=5)
    law, target, proposed = round_law(tiny, s, 1, monkeypatch)
    assert max(len(e) for e in law) <= 4 - 1   # one seeded round emitted at least one token
    assert_lossless(law, target, proposed + 1)


def test_the_enumeration_sees_a_drafter_that_is_not_the_target(tiny, monkeypatch):
    """Accepting every proposal would emit q, not p: the same comparison must see that."""
    s = Settings(drafter="dspark", verifier="sampling", k=2, max_new_tokens=20, sampling=WIDE, seed=5)
    real = engine.speculative_sampling
    with monkeypatch.context() as patch:   # every uniform 0: each proposal the target allows is kept
        patch.setattr(engine, "speculative_sampling", lambda x, p, q, u: real(x, p, q, [0.0] * len(u)))
        law, target, proposed = round_law(tiny, s, 0, monkeypatch)
    with pytest.raises(AssertionError, match="total variation"):
        assert_lossless(law, target, proposed + 1)
