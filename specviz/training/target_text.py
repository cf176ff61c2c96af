"""Text written by the frozen target: what the block drafters train on.

A drafter is worth what it agrees with the target, so DFlash trains its drafter on the
target's own responses rather than on the corpus: the tokens a training block hides are then
the target's choices, the ones verification will check, not an author's. Each sequence here
starts with a window of `prompt_len` corpus tokens and goes on with the target's tokens at a
given temperature. The recipe writes two files (`specviz.training.recipe.TARGET_TEXT`): one at
temperature 0.8 (the usual setting for regenerating drafter data: sharper than the target's raw
distribution) and one greedy, loops and all, because under greedy verification the greedy
tokens are the ones checked (half of each lifted held-out greedy acceptance at k=4 by 16% over
the sampled text alone, in a scratch fine-tune the README reports).

Generation runs in batches, each seeded by its index, and the file is rewritten after every
batch, so an interrupted run resumes where it stopped and produces the same rows.

What it leaves out: filtering (degenerate continuations are kept, as the target wrote them).
"""
import json
from pathlib import Path

import numpy as np
import torch
from transformers import AutoModelForCausalLM, DynamicCache

from specviz.generator.sampling import SamplingSettings, transform
from specviz.training.recipe import TEXT_ROWS


@torch.no_grad()
def continue_windows(target, prompts: torch.Tensor, new_tokens: int, temperature: float,
                     gen: torch.Generator) -> torch.Tensor:
    """[B, P] prompt ids -> [B, P + new_tokens], each row continued by sampling from the target.

    End-of-text is an ordinary token here: the target goes on past it, as the corpus stream does.
    Temperature 0 is greedy, as everywhere in specviz (`specviz.generator.sampling.transform`).

    >>> continue_windows(target, torch.tensor([[5, 6]]), 3, 0.8, g).shape   # doctest: +SKIP
    torch.Size([1, 5])
    """
    cache, rule = DynamicCache(), SamplingSettings(temperature=temperature)
    rows, step = [prompts], prompts
    for _ in range(new_tokens):
        probs = transform(target(step, cache=cache, use_cache=True).logits[:, -1], rule)
        step = torch.multinomial(probs, 1, generator=gen)
        rows.append(step)
    return torch.cat(rows, 1)


def write_target_text(target_dir: Path, corpus_ids: np.ndarray, out: Path, sequences: int = TEXT_ROWS["sequences"],
                      seq_len: int = 256, prompt_len: int = TEXT_ROWS["prompt_len"], temperature: float = 0.8,
                      batch: int = TEXT_ROWS["batch"], seed: int = 0, progress=print) -> dict:
    """Write `sequences` rows of `seq_len` ids to `out` (.npy, uint16), and what they are to
    `out` with a .json suffix (the block drafters' cards quote it); resumes a partial file."""
    target = AutoModelForCausalLM.from_pretrained(target_dir, dtype=torch.float32).eval()
    done = np.load(out) if out.exists() else np.zeros((0, seq_len), dtype=np.uint16)
    data = torch.from_numpy(corpus_ids.astype(np.int64))
    while len(done) < sequences:
        index = len(done) // batch
        gen = torch.Generator().manual_seed(seed + index)
        starts = torch.randint(0, len(data) - prompt_len, (batch,), generator=gen).tolist()
        prompts = torch.stack([data[s:s + prompt_len] for s in starts])
        rows = continue_windows(target, prompts, seq_len - prompt_len, temperature, gen)
        done = np.concatenate([done, rows.numpy().astype(np.uint16)])[:sequences]
        np.save(out, done)
        progress(f"target text: {len(done)}/{sequences} sequences")
    facts = {"file": out.name, "sequences": sequences, "seq_len": seq_len, "prompt_len": prompt_len,
             "temperature": temperature, "tokens_written_by_target": sequences * (seq_len - prompt_len)}
    out.with_suffix(".json").write_text(json.dumps(facts, indent=2))
    return facts
