"""Greedy speculative decoding is lossless: token for token the target's own greedy output.

Checked against `model.generate(do_sample=False)` for every drafter of the embedded model set:
at block sizes 1, 2, 4 and 8, each on its own quarter of twenty prompts (prose, dialogue,
repetition, odd characters, numbers), so that every prompt and every block size meet every
drafter. Also against transformers' own assisted generation (`assistant_model=`) for the
autoregressive drafter.
Random prompts at random block sizes are tests/properties/test_fuzz.py's.
"""
import pytest
import torch

from specviz.generator.engine import Generation, encode_prompt
from specviz.generator.settings import Settings
from tests.prompts import PROMPTS

NEW = 24
BLOCK_SIZES = [1, 2, 4, 8]


def target_greedy(models, prompt: str, new: int) -> list[int]:
    """The target's own greedy continuation of prompt, from transformers."""
    ids, _ = encode_prompt(models, prompt, Settings(max_new_tokens=new))
    x = torch.tensor([ids], device=models.device)
    y = models.target.generate(x, do_sample=False, max_new_tokens=new, eos_token_id=models.eos_id,
                               pad_token_id=models.eos_id)
    return y[0, len(ids):].tolist()


@pytest.fixture(scope="module")
def reference(models):
    return {prompt: target_greedy(models, prompt, NEW) for prompt in PROMPTS}


def test_plain_decoding_through_the_engine_is_the_target_greedy_output(models, reference):
    for prompt in PROMPTS:
        g = Generation(models, prompt, Settings(drafter=None, max_new_tokens=NEW))
        assert g.run().new_ids == reference[prompt], prompt


@pytest.mark.parametrize("k", BLOCK_SIZES)
def test_every_drafter_matches_the_target_token_for_token(models, reference, k):
    # the prompts are dealt out in turn, so each block size gets a spread of kinds
    # (k=4 gets the repetition and the odd characters, k=8 the counting)
    for prompt in PROMPTS[BLOCK_SIZES.index(k)::len(BLOCK_SIZES)]:
        for drafter in models.drafter_models:
            trace = Generation(models, prompt, Settings(drafter=drafter, k=k,
                                                        max_new_tokens=NEW)).run()
            assert trace.new_ids == reference[prompt], (drafter, k, prompt)


def test_autoregressive_drafter_matches_transformers_assisted_generation(models, reference):
    for prompt in PROMPTS[:10]:
        ids, _ = encode_prompt(models, prompt, Settings(max_new_tokens=NEW))
        x = torch.tensor([ids], device=models.device)
        assisted = models.target.generate(
            x, assistant_model=models.drafter_models["ar"], do_sample=False, max_new_tokens=NEW,
            num_assistant_tokens=4, num_assistant_tokens_schedule="constant",
            eos_token_id=models.eos_id, pad_token_id=models.eos_id)[0, len(ids):].tolist()
        ours = Generation(models, prompt, Settings(drafter="ar", k=4, max_new_tokens=NEW)).run()
        assert ours.new_ids == assisted == reference[prompt], prompt


def test_speculation_really_happens(models):
    # losslessness would hold trivially if nothing were ever accepted
    trace = Generation(models, PROMPTS[1], Settings(drafter="ar", k=4, max_new_tokens=NEW)).run()
    assert sum(r.accepted for r in trace.rounds) > 0
    assert len(trace.rounds) < NEW
