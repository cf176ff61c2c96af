"""Write a model card (README.md) beside each shipped model.

Facts come from the training run (training.json) and from measurements made here when the
card is written: held-out perplexity, the median time of one decode step, three greedy
sample generations. Nothing is typed in by hand.

What it leaves out: benchmark numbers of speculative decoding (see `python -m specviz bench`).
"""
import json
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, DynamicCache

from specviz.training.lm import encode_corpus, heldout_loss

SAMPLE_PROMPTS = ["The best way to learn is to", "It was a fine morning, and Elizabeth",
                  'Anne asked, "Could you open the window?" "Yes,']
DATA_NOTE = """Training text: Jane Austen's six novels (public domain) as shipped in Debian's
`r-cran-janeaustenr` package (package code MIT-licensed, Julia Silge), plus 6,000 short
dialogue exchanges written for this project from templates in `specviz/training/corpus.py`
(ours, same licence as this repository), in which requests are answered "Yes, of course."
or "Yes, no problem." with equal odds. 2% of documents are held out."""


@torch.no_grad()
def decode_step_ms(model, context: int = 128, repeats: int = 30) -> float:
    """Median milliseconds of one cached single-token forward at a given context length."""
    cache = DynamicCache()
    model(torch.randint(0, model.config.vocab_size, (1, context)), cache=cache, use_cache=True)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        model(torch.randint(0, model.config.vocab_size, (1, 1)), cache=cache, use_cache=True)
        times.append((time.perf_counter() - t) * 1e3)
        cache.crop(-1)
    return statistics.median(times)


@torch.no_grad()
def samples(model, tok, n_new: int = 40) -> list[str]:
    out = []
    for prompt in SAMPLE_PROMPTS:
        ids = torch.tensor([[tok.eos_token_id] + tok.encode(prompt)])
        y = model.generate(ids, do_sample=False, max_new_tokens=n_new, eos_token_id=tok.eos_token_id,
                           pad_token_id=tok.eos_token_id)
        out.append(prompt + tok.decode(y[0, ids.size(1):]))
    return out


def write_card(model_dir: Path, heldout_txt: Path, role: str) -> dict:
    facts = json.loads((model_dir / "training.json").read_text())
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(model_dir)
    loss = heldout_loss(model, encode_corpus(tok, heldout_txt))
    step = decode_step_ms(model)
    facts.update(heldout_perplexity=round(float(np.exp(loss)), 2), decode_step_ms=round(step, 2))
    gens = samples(model, tok)
    c = facts["config"]
    card = f"""# specviz {facts['name']}: {role}

A Llama-architecture causal LM (`LlamaForCausalLM`), trained from scratch on this project's
CPU machine by `python -m specviz train` (recipe in `specviz/training/`). Stored in bf16;
loaded in fp32 on a CPU.

| fact | value |
|---|---|
| parameters | {facts['parameters']:,} |
| layers x width | {c['num_hidden_layers']} x {c['hidden_size']} ({c['num_attention_heads']} heads, {c['num_key_value_heads']} KV heads) |
| vocabulary | {model.config.vocab_size} (byte-level BPE, `<|endoftext|>` and `<|mask|>`) |
| tokens seen | {facts['tokens_seen']:,} ({facts['steps']} steps x {facts['batch']} x {facts['seq_len']}) |
| training time | {facts['train_seconds'] / 60:.1f} min on 2 CPU cores ({platform.machine()}, torch {torch.__version__}) |
| distilled from | {facts['distilled_from'] or '-'} |
| held-out perplexity | {facts['heldout_perplexity']} |
| one decode step | {facts['decode_step_ms']} ms (median, 128-token context, measured when this card was written) |

## Data and licence

{DATA_NOTE}

## Three greedy samples

""" + "\n".join(f"{i + 1}. `{g!r}`" for i, g in enumerate(gens)) + "\n"
    (model_dir / "README.md").write_text(card)
    (model_dir / "training.json").write_text(json.dumps(facts, indent=2))
    return facts
