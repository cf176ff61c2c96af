"""Sampled speculative output follows the target's distribution, on the real models.

One round from the same history, many seeds: the first emitted token's frequencies must match
the target's p at that history (after the same temperature / top-k). The drafter's own q is
far from p, so a verifier that let q through would fail the same bound.
"""
import pytest
import torch

from specviz.generator.engine import Generation, Settings
from specviz.generator.sampling import SamplingSettings, transform

PROMPT = "She had never been so happy as"
SAMPLING = SamplingSettings(temperature=1.0, top_k=8)
N = 400


def tv(a: torch.Tensor, b: torch.Tensor) -> float:
    return 0.5 * float((a - b).abs().sum())


@pytest.fixture(scope="module")
def p_and_q(models):
    ids = [models.eos_id] + models.tokenizer.encode(PROMPT)
    x = torch.tensor([ids], device=models.device)
    with torch.no_grad():
        p = transform(models.target(x).logits[0, -1], SAMPLING)
        q = transform(models.drafter_models["ar"](x).logits[0, -1], SAMPLING)
    return p, q


@pytest.mark.parametrize("verifier", ["sampling", "match"])
def test_first_emitted_token_follows_p(models, p_and_q, verifier):
    p, q = p_and_q
    counts = torch.zeros_like(p)
    for seed in range(N):
        g = Generation(models, PROMPT, Settings(drafter="ar", verifier=verifier, block_size=3,
                                                max_new_tokens=4, sampling=SAMPLING, seed=seed))
        counts[g.step().emitted[0]["id"]] += 1
    freq = counts / N
    # sampling noise of 400 draws over 8 tokens: TV about 0.05; 0.1 leaves room, and q is further
    assert tv(freq, p) < 0.1, (tv(freq, p), tv(q, p))


def test_the_drafter_alone_would_be_caught(p_and_q):
    p, q = p_and_q
    assert tv(q, p) > 0.1
