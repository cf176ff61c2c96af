"""The block drafters' training run: it resumes where it stopped, and DLoop's drafter starts
from the DSpark drafter's weights (so `dloop` and `dloop-plain` differ only by loop-aware steps).

Tiny runs on the shipped target (2 sequences of 24 tokens a step, 2 anchors, k = 2): these
check the run's bookkeeping, not what the drafters learn.
"""
import json

import numpy as np
import pytest
from safetensors.torch import load_file

import specviz.training.block as block
from specviz.generator.models import MODELS_DIR

TINY = dict(batch=2, anchors=2, K=2, loop_stages=2, ckpt_every=2)
NAMES = ["drafter-dflash", "drafter-dspark", "drafter-dspark-loop"]


@pytest.fixture
def text(tmp_path):
    """Two files of token rows, as the recipe writes a sampled and a greedy one."""
    paths = [tmp_path / "sampled.npy", tmp_path / "greedy.npy"]
    for seed, path in enumerate(paths):
        np.save(path, np.random.default_rng(seed).integers(10, 4000, size=(4, 24), dtype=np.uint16))
        path.with_suffix(".json").write_text(json.dumps({"file": path.name, "sequences": 4, "seq_len": 24}))
    return paths


def train(out, text, steps, loop_steps):
    return block.train_block_drafters(MODELS_DIR / "target", MODELS_DIR / "target", text, out, out / "runs",
                                      steps=steps, loop_steps=loop_steps, **TINY)


def test_the_loop_drafter_starts_from_the_dspark_drafter(tmp_path, text):
    facts = train(tmp_path, text, steps=2, loop_steps=0)
    dspark, loop = (load_file(tmp_path / n / "model.safetensors") for n in NAMES[1:])
    assert dspark.keys() == loop.keys() and all((dspark[k] == loop[k]).all() for k in dspark)
    assert facts["dspark-loop"]["initialized_from"] == {"model": "drafter-dspark", "steps": 2}
    assert json.loads((tmp_path / NAMES[2] / "config.json").read_text())["loop_aware"] is True
    assert "initialized_from" not in facts["dspark"]
    assert [t["file"] for t in facts["dspark"]["text"]] == ["sampled.npy", "greedy.npy"]


def test_an_interrupted_run_resumes_to_the_same_weights(tmp_path, text, monkeypatch):
    train(tmp_path / "whole", text, steps=4, loop_steps=2)

    def stop_after_the_first_checkpoint(log, name, state, steps, news):
        if name == "block" and state["step"] == 3:
            raise KeyboardInterrupt
    with monkeypatch.context() as m:
        m.setattr(block, "report", stop_after_the_first_checkpoint)
        with pytest.raises(KeyboardInterrupt):
            train(tmp_path / "resumed", text, steps=4, loop_steps=2)
    assert not (tmp_path / "resumed" / NAMES[0]).exists()
    train(tmp_path / "resumed", text, steps=4, loop_steps=2)
    for name in NAMES:
        whole, resumed = (load_file(tmp_path / run / name / "model.safetensors") for run in ("whole", "resumed"))
        assert all((whole[k] == resumed[k]).all() for k in whole), name


def test_a_fresh_machine_resumes_the_block_run_from_the_carry(tmp_path, text, monkeypatch):
    """Planted bug: a carry written but never read (the run starts again from step 0)."""
    carry = tmp_path / "carry"
    block.train_block_drafters(MODELS_DIR / "target", MODELS_DIR / "target", text, tmp_path / "a", tmp_path / "a" / "runs",
                               steps=2, loop_steps=2, carry_dir=carry, **TINY)
    assert json.loads((carry / "block" / "state.json").read_text())["step"] == 2
    assert {k.split(".")[0] for k in load_file(carry / "block" / "model.safetensors")} == {"dflash", "dspark"}
    trained = []
    monkeypatch.setattr(block, "report", lambda log, name, state, steps, news: trained.append((name, state["step"])))
    facts = block.train_block_drafters(MODELS_DIR / "target", MODELS_DIR / "target", text, tmp_path / "b",
                                       tmp_path / "b" / "runs", steps=4, loop_steps=2, carry_dir=carry, **TINY)
    assert trained == [("block", 3), ("block", 4)]                    # no step again; the loop's carry was done
    assert facts["dspark"]["target_tokens_seen"] == 4 * 2 * 24       # 2 carried + 2 new steps
