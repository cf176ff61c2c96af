"""After every round a drafter is in the state of a fresh drafter primed on the committed text.

A drafter keeps state between rounds (the autoregressive drafter its KV cache, a block drafter
the keys/values of the target's context features, DLoop its provisional context inside a
round). A stale entry does not break losslessness, it only lowers acceptance, so no output test
would notice it. Here, after each round of a generation, a copy of the engine's drafter and a
fresh drafter primed on the same committed text (`prefill` with the target's hidden states from
one full forward) must propose the same next tokens with the same q; block drafters must also
hold the same number of context positions and the same cached keys and values. DLoop runs with
a gate that lets every stage through, so its later stages, which attend to the provisional
context built from its own hidden states, are compared too.

Block sizes 1, 2, 7, 16 and 32 on the tiny model set (its context is 64 tokens, so k = 32 runs
against the end of it), and k = 32 on the embedded models (autoregressive, DFlash, DLoop) with a prompt cut to fill the
512-token context. Planted bugs this catches: the engine keeping hidden[1:...] instead of
hidden[:...] (shifted context), the autoregressive drafter's cache cropped one position too
long (a rejected proposal left in it), a block drafter appending its context at the wrong
positions.

What it leaves out: prompt lookup beyond its one property (it keeps no state: it is compared
like the others, which checks that it reads the committed text and nothing else).
"""
import copy
import itertools

import pytest
import torch

from specviz.generator.engine import Generation
from specviz.generator.sampling import SamplingSettings
from specviz.generator.settings import Settings
from tests.tiny import tiny_models

GATE_OPEN = -50.0   # DLoop's gate: every stage passes, so all max_stages stages are drafted


def greedy_pick(logits: torch.Tensor) -> tuple[int, torch.Tensor]:
    return int(logits.argmax()), torch.softmax(logits.float(), -1)


def shared(models) -> dict:
    memo = {id(models): models}
    for model in [models.target, *[d for d in models.drafter_models.values() if d is not None]]:
        for obj in itertools.chain(model.modules(), model.parameters(), model.buffers()):
            memo[id(obj)] = obj
    return memo


def fresh_drafter(g: Generation):
    """A new drafter of the same kind, primed on g's committed text as the engine primes one."""
    s, ids = g.s, g.committed
    d = g.m.drafter(s.drafter, s.loop_threshold, s.max_stages)
    hidden = None
    if d.target_layers:
        with torch.no_grad():
            out = g.m.target(torch.tensor([ids[:-1]], device=g.m.device), output_hidden_states=True)
        hidden = torch.cat([out.hidden_states[i + 1] for i in d.target_layers], -1)[0]
    d.prefill(ids, hidden)
    return d


def assert_same_state(g: Generation, k: int):
    kept = copy.deepcopy(g.drafter, shared(g.m))
    fresh = fresh_drafter(g)
    if hasattr(fresh, "n_ctx"):
        assert kept.n_ctx == fresh.n_ctx == len(g.committed) - 1
        for (k1, v1), (k2, v2) in zip(kept.ctx_kv, fresh.ctx_kv):
            assert torch.allclose(k1, k2, atol=1e-4) and torch.allclose(v1, v2, atol=1e-4)
    if hasattr(fresh, "decoder"):
        assert kept.decoder.length == fresh.decoder.length == len(g.committed) - 1
    a = kept.propose(list(g.committed), k, greedy_pick)
    b = fresh.propose(list(g.committed), k, greedy_pick)
    assert a.tokens == b.tokens
    assert all(torch.allclose(qa, qb, atol=1e-4) for qa, qb in zip(a.q, b.q))
    assert [s["start"] for s in a.info.get("stages", [])] == [s["start"] for s in b.info.get("stages", [])]


def run_and_compare(models, prompt: str, settings: Settings, rounds: int):
    g = Generation(models, prompt, settings)
    assert_same_state(g, settings.k)
    for _ in range(rounds):
        if g.step() is None:
            break
        assert_same_state(g, settings.k)
    return g


@pytest.fixture(scope="module")
def tiny():
    return tiny_models()


@pytest.mark.parametrize("drafter", ["ar", "lookup", "dflash", "dspark", "dloop"])
@pytest.mark.parametrize("k", [1, 2, 7, 16, 32])
@pytest.mark.parametrize("verifier", ["greedy", "sampling"])
def test_after_every_round_the_drafter_is_a_fresh_one_primed_on_the_committed_text(tiny, drafter, k, verifier):
    # the longest prompt the context allows, so the last rounds run at its end
    s = Settings(drafter=drafter, verifier=verifier, k=k, max_new_tokens=12, seed=3,
                 sampling=SamplingSettings(temperature=1.0), loop_threshold=GATE_OPEN, max_stages=2)
    g = run_and_compare(tiny, "a b c d " * 20, s, rounds=12)
    assert len(g.committed) == tiny.max_context - k - 1 or g.committed[-1] == tiny.eos_id or g.done


@pytest.mark.parametrize("drafter", ["ar", "dflash", "dloop"])
def test_the_embedded_drafters_keep_their_state_to_the_end_of_the_context(models, drafter):
    k = 32
    s = Settings.greedy(drafter, 8, k=k, loop_threshold=GATE_OPEN, max_stages=2)
    g = run_and_compare(models, "It was a bright cold day in April, and the clocks were striking. " * 60, s, rounds=2)
    assert len(g.committed) > models.max_context - 8 - k - 1   # the rounds ran near the context's end


@pytest.mark.parametrize("drafter", ["dflash", "dspark", "dloop"])
def test_a_block_drafter_given_no_features_keeps_its_context_as_it_was(tiny, drafter):
    # the drafter interface passes hidden=None where the target processed nothing new (the engine's
    # prefill of a one-token prompt); None and an empty tensor add no position
    d = tiny.drafter(drafter, GATE_OPEN, 2)
    d.prefill([tiny.eos_id], None)
    assert d.n_ctx == 0 and all(k.shape[1] == v.shape[1] == 0 for k, v in d.ctx_kv)
    d.commit([tiny.eos_id, 1], None)
    d.commit([tiny.eos_id, 1], torch.zeros(0, 2 * 16))
    assert d.n_ctx == 0 and all(k.shape[1] == v.shape[1] == 0 for k, v in d.ctx_kv)
    assert len(d.propose([tiny.eos_id], 3, greedy_pick).tokens) == 3 * (2 if drafter == "dloop" else 1)
