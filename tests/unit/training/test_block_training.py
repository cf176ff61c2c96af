"""The block drafters' training run: it resumes where it stopped, DLoop's drafter starts
from the DSpark drafter's weights (so `dloop` and `dloop-plain` differ only by loop-aware steps),
and the drafting mix places its anchors where the engine's rounds start.

Tiny runs on the shipped target (2 sequences of 24 tokens a step, 2 anchors, k = 2; the mix's
rows 16 tokens): these check the run's bookkeeping, not what the drafters learn.
"""
import json

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

import specviz.training.block as block
from specviz.generator.drafters.names import DRAFTERS
from specviz.generator.models import MODELS_DIR, load_embedded

TINY = dict(batch=2, anchors=2, K=2, loop_stages=2, gamma=4.0, lr=2e-3, loop_lr=5e-4, ckpt_every=2,
            mix=dict(batch=2, length=16, anchors=2, corpus_share=0.5, on_policy=0.75, lr=1e-3))
CORPUS = np.random.default_rng(7).integers(10, 4000, size=500, dtype=np.uint16)
NAMES = ["drafter-dflash", "drafter-dspark", "drafter-dspark-loop"]


@pytest.fixture
def text(tmp_path):
    """Two files of token rows, as the recipe writes a sampled and a greedy one."""
    paths = [tmp_path / "sampled.npy", tmp_path / "greedy.npy"]
    for seed, path in enumerate(paths):
        np.save(path, np.random.default_rng(seed).integers(10, 4000, size=(4, 24), dtype=np.uint16))
        path.with_suffix(".json").write_text(json.dumps({"file": path.name, "sequences": 4, "seq_len": 24}))
    return paths


def train(out, text, steps, loop_steps, mix_steps=2, **kw):
    return block.train_block_drafters(MODELS_DIR / "target", MODELS_DIR / "target", text, text, CORPUS, out,
                                      out / "runs", steps=steps, mix_steps=mix_steps, loop_steps=loop_steps, **TINY, **kw)


def test_the_loop_drafter_starts_from_the_dspark_drafter(tmp_path, text):
    facts = train(tmp_path, text, steps=2, loop_steps=0)
    dspark, loop = (load_file(tmp_path / n / "model.safetensors") for n in NAMES[1:])
    assert dspark.keys() == loop.keys() and all((dspark[k] == loop[k]).all() for k in dspark)
    assert [p["text"] for p in facts["dspark-loop"]["phases"]] == ["long", "mix", "mix"]
    assert facts["dspark-loop"]["phases"][-1]["loop_aware"] is True
    assert json.loads((tmp_path / NAMES[2] / "config.json").read_text())["loop_aware"] is True
    assert [p["text"] for p in facts["dspark"]["phases"]] == ["long", "mix"]
    assert [t["file"] for t in facts["dspark"]["text"]["long"]] == ["sampled.npy", "greedy.npy"]
    # the folders the block stage writes are the ones the drafter registry says it trains
    assert sorted(p.name for p in tmp_path.glob("drafter-*")) == sorted({d.folder for d in DRAFTERS if d.trained_by == "block"})


def test_an_interrupted_run_resumes_to_the_same_weights(tmp_path, text, monkeypatch):
    train(tmp_path / "whole", text, steps=4, loop_steps=2)

    def stop_after_the_first_checkpoint(log, name, state, steps, news):
        if name == "block-mix" and state["step"] == 1:
            raise KeyboardInterrupt
    with monkeypatch.context() as m:
        m.setattr(block, "report", stop_after_the_first_checkpoint)
        with pytest.raises(KeyboardInterrupt):
            train(tmp_path / "resumed", text, steps=4, loop_steps=2)
    assert not (tmp_path / "resumed" / NAMES[0]).exists()       # the long phase was done; the mix was not
    train(tmp_path / "resumed", text, steps=4, loop_steps=2)
    for name in NAMES:
        whole, resumed = (load_file(tmp_path / run / name / "model.safetensors") for run in ("whole", "resumed"))
        assert all((whole[k] == resumed[k]).all() for k in whole), name


def test_a_fresh_machine_resumes_the_block_run_from_the_carry(tmp_path, text, monkeypatch):
    """Planted bug: a carry written but never read (the run starts again from step 0)."""
    carry = tmp_path / "carry"
    train(tmp_path / "a", text, steps=2, loop_steps=2, carry_dir=carry)
    assert json.loads((carry / "block" / "state.json").read_text())["step"] == 2
    assert {k.split(".")[0] for k in load_file(carry / "block" / "model.safetensors")} == {"dflash", "dspark"}
    trained = []
    monkeypatch.setattr(block, "report", lambda log, name, state, steps, news: trained.append((name, state["step"])))
    facts = train(tmp_path / "b", text, steps=4, loop_steps=2, carry_dir=carry)
    assert trained == [("block", 3), ("block", 4)]          # no step again; the mix's and the loop's carries were done
    assert facts["dspark"]["phases"][0]["tokens"] == 4 * 2 * 24       # 2 carried + 2 new steps
    assert sorted(p.name for p in carry.iterdir()) == ["block", "block-mix", "loop"]


def test_on_policy_anchors_sit_right_after_the_drafters_misses():
    """Planted bug: anchors at the misses themselves (one position early) or drawn uniformly."""
    g = torch.Generator().manual_seed(0)
    after = torch.zeros(40, dtype=torch.bool)
    after[[5, 17, 30]] = True
    drawn = block.draw_anchors(400, 36, after, 0.75, g)
    share = sum(a in (5, 17, 30) for a in drawn.tolist()) / 400
    assert 0.7 < share < 0.85                       # 3 in 4, plus the few uniform ones that land there
    assert drawn.min() >= 1 and drawn.max() < 36
    assert block.draw_anchors(4, 36, None, 0.0, torch.Generator().manual_seed(0)).tolist() == \
        torch.randint(1, 36, (4,), generator=torch.Generator().manual_seed(0)).tolist()


def test_a_first_guess_miss_is_the_drafters_own_argmax_against_the_next_token():
    """On a row the drafter wrote itself (each token its first guess from the one before, reading the
    target's features of the text before that), nothing is a miss; with those tokens replaced, most are.
    Planted bugs: the anchor's own position in its context, the Markov bias left out, an off-by-one."""
    models = load_embedded()
    m, target, tok = models.drafter_models["dspark"], models.target, models.tokenizer

    def context_kv(tokens):
        with torch.no_grad():
            out = target(tokens[None], output_hidden_states=True)
            feats = torch.cat([out.hidden_states[i + 1][0] for i in m.config.target_layers], -1)
            return m.context_kv(m.context_features(feats), torch.arange(len(tokens)))

    def first_guess(row):
        with torch.no_grad():
            h = m.forward_block(row[-1:], torch.tensor([len(row) - 1]), context_kv(row[:-1]))
            return (m.lm_head(h)[0] + m.markov_bias(int(row[-1]))).argmax()[None]
    row = torch.tensor([tok.eos_token_id] + tok.encode("It was a fine morning, and"))
    for _ in range(6):
        row = torch.cat([row, first_guess(row)])
    with torch.no_grad():
        assert block.first_guess_misses(m, context_kv(row), row)[-7:].tolist() == [False] * 7
        other = torch.cat([row[:-6], torch.tensor(tok.encode(" purple elephant quantum seventeen zebra xylophone"))[:6]])
        assert block.first_guess_misses(m, context_kv(other), other)[-7:-1].sum() >= 4


def test_with_no_anchors_the_loss_is_the_first_proposal_at_every_position():
    """The dense phase (scripts/dense_phase.py) trains the first proposal alone: a one-slot block at each
    position j of the row, reading the target's features before j, scored by cross-entropy against the
    target's distribution at j, DSpark's too. Planted bugs: an empty block stage run anyway, the anchor's
    own features in its context, the positions shifted by one, DSpark's 0.1 CE + 0.9 TV kept."""
    models = load_embedded()
    m, target = models.drafter_models["dspark"], models.target
    row = torch.tensor(models.tokenizer.encode("It was a fine morning, and the sun was out."))
    with torch.no_grad():
        out = target(row[None], output_hidden_states=True)
        feats = torch.cat([out.hidden_states[i + 1][0] for i in m.config.target_layers], -1)
        t_logp = torch.log_softmax(out.logits[0].float(), -1)
        got = block.drafter_loss(m, feats, row, t_logp, torch.tensor([], dtype=torch.long), K=2, stages=1,
                                 gamma=4.0, dense=True)
        one_by_one = []
        for j in range(1, len(row) - 1):
            kv = m.context_kv(m.context_features(feats[:j]), torch.arange(j))
            logits = m.lm_head(m.forward_block(row[j:j + 1], torch.tensor([j]), kv))[0] + m.markov_bias(int(row[j]))
            one_by_one.append(block.distill(logits[None], t_logp[j].exp()[None], markov=False)[0])
    assert sorted(got) == ["first", "loss"]
    assert float(got["loss"]) == pytest.approx(float(torch.cat(one_by_one).mean()), rel=1e-4)
