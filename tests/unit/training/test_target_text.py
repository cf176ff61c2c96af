"""The block drafters' training text: corpus windows continued by the shipped target."""
import json

import numpy as np
import torch

from specviz.generator.engine import Generation
from specviz.generator.models import MODELS_DIR
from specviz.generator.settings import Settings
from specviz.training.target_text import continue_windows, write_target_text

PROMPT = "It is a truth universally acknowledged, that a single man"


def test_temperature_zero_continues_with_the_targets_greedy_tokens(models):
    plain = Generation(models, PROMPT, Settings(drafter=None, max_new_tokens=8)).run()
    prompt = torch.tensor([plain.prompt_ids])
    rows = continue_windows(models.target, prompt, 8, 0.0, torch.Generator().manual_seed(0))
    assert rows[0, :prompt.size(1)].tolist() == plain.prompt_ids
    assert rows[0, prompt.size(1):].tolist() == plain.new_ids


def test_sampled_rows_keep_their_prompts_and_repeat_under_the_same_seed(models):
    prompts = torch.tensor([[5, 6, 7], [8, 9, 10]])
    first = continue_windows(models.target, prompts, 6, 0.8, torch.Generator().manual_seed(1))
    again = continue_windows(models.target, prompts, 6, 0.8, torch.Generator().manual_seed(1))
    assert first.shape == (2, 9) and torch.equal(first[:, :3], prompts)
    assert torch.equal(first, again)


def test_an_interrupted_file_resumes_to_the_same_rows(tmp_path):
    corpus = np.arange(100, 400, dtype=np.uint16)
    whole, part = tmp_path / "whole.npy", tmp_path / "part.npy"
    args = dict(sequences=4, seq_len=8, prompt_len=3, batch=2, progress=lambda line: None)
    write_target_text(MODELS_DIR / "target", corpus, whole, **args)
    np.save(part, np.load(whole)[:2])          # as if stopped after the first batch
    write_target_text(MODELS_DIR / "target", corpus, part, **args)
    rows = np.load(whole)
    assert rows.shape == (4, 8) and rows.dtype == np.uint16
    assert np.array_equal(np.load(part), rows)
    assert json.loads((tmp_path / "whole.json").read_text())["prompt_len"] == 3
    starts = [int(np.flatnonzero(corpus == r[0])[0]) for r in rows]   # each row opens with a corpus window
    assert all(np.array_equal(r[:3], corpus[s:s + 3]) for r, s in zip(rows, starts))
