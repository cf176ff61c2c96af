"""The target's run carries across working sessions: a fresh machine with no checkpoint in
`runs/` resumes from the committed carry (bf16 weights and state) at the step it reached, with
the same sampler, and the learning rate ramps in again because AdamW's moments start at zero.

A tiny run (one layer of width 32, 2 windows of 16 tokens a step) on a corpus written here:
these check the run's bookkeeping, not what the model learns.
"""
import json
import shutil

import pytest
import torch

from specviz.generator.models import MODELS_DIR
from specviz.training.lm import lr_at, train_lm

TINY = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1)


@pytest.fixture
def corpus(tmp_path):
    text = "<|endoftext|>".join(f"Anne asked, \"Could you open window {i}?\" \"Yes, of course.\"" for i in range(40))
    for name in ("train.txt", "heldout.txt", "heldout_code.txt"):
        (tmp_path / name).write_text(text if name == "train.txt" else text[:400] + "\ndef f(x):\n    return x\n")
    return tmp_path


def run(corpus, steps, carry, work="runs"):
    return train_lm("tiny", TINY, MODELS_DIR / "target", corpus, corpus / "out", corpus / work, steps=steps,
                    batch=2, seq_len=16, lr=1e-3, warmup=2, ckpt_every=2, curve_every=2, carry_dir=carry)


def test_a_fresh_machine_resumes_from_the_carry_at_the_step_it_reached(corpus):
    carry = corpus / "carry"
    run(corpus, steps=4, carry=carry)
    state = json.loads((carry / "state.json").read_text())
    assert state["step"] == 4 and state["tokens"] == 4 * 2 * 16
    assert [p["step"] for p in state["curve"]] == [2, 4] and {"prose", "code"} <= set(state["curve"][0])
    shutil.rmtree(corpus / "runs")                      # a fresh machine: only the committed carry
    facts = run(corpus, steps=6, carry=carry, work="fresh")
    assert facts["tokens_seen"] == 6 * 2 * 16                          # 4 carried + 2 new steps, not 6 new
    assert [p["step"] for p in facts["heldout_curve"]] == [2, 4, 6]   # the curve carried too
    logged = [json.loads(line)["curve"]["step"] for line in (corpus / "fresh" / "tiny.log").read_text().splitlines()
              if line.startswith('{"curve"')]
    assert logged == [6]                                              # this machine trained steps 5 and 6 only


def test_the_carried_weights_are_the_runs_weights_in_bf16(corpus):
    carry = corpus / "carry"
    run(corpus, steps=2, carry=carry)
    saved = torch.load(corpus / "runs" / "tiny.pt", weights_only=False)["model"]
    from safetensors.torch import load_file
    carried = load_file(carry / "model.safetensors")
    assert "lm_head.weight" not in carried                              # tied to the embedding, not stored twice
    for name, w in carried.items():
        assert w.dtype == torch.bfloat16 and torch.equal(w, saved[name].to(torch.bfloat16)), name


def test_after_a_resume_with_fresh_moments_the_rate_ramps_in_again():
    """Planted bug: resuming at the schedule's full rate with zeroed AdamW moments."""
    assert lr_at(500, 1000, 1e-3, warmup=100, resumed_at=500) == pytest.approx(lr_at(500, 1000, 1e-3) / 100)
    assert lr_at(600, 1000, 1e-3, warmup=100, resumed_at=500) == lr_at(600, 1000, 1e-3)
    assert lr_at(50, 1000, 1e-3, warmup=100) == pytest.approx(1e-3 * 51 / 100)   # the first warmup unchanged
