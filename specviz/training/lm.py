"""Train a small Llama-architecture causal LM (the target or the autoregressive drafter).

One loop for both: random windows of the tokenised corpus, AdamW with warmup and cosine decay,
a checkpoint every `ckpt_every` steps that a rerun resumes from, a log file, and a progress
line. A drafter can be distilled from a frozen target: its loss is then only the KL divergence
from the target's next-token distribution, not the corpus cross-entropy, because a drafter is
worth what it agrees with the target, not what it knows about the text (a cross-entropy term
let a long-trained drafter learn the corpus past an under-trained target).

Forward passes run under bfloat16 autocast (weights, gradients and the optimizer stay fp32): on
a CPU with bf16 matrix units (AVX512-BF16, AMX) a target step takes less than half the fp32
time (docs/benchmarks.md, "Training"); held-out loss is measured in fp32.

What it leaves out: multi-GPU, gradient accumulation.
"""
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

EOT = "<|endoftext|>"

TARGET_CONFIG = dict(hidden_size=384, intermediate_size=1024, num_hidden_layers=8,
                     num_attention_heads=6, num_key_value_heads=2)
DRAFTER_CONFIG = dict(hidden_size=256, intermediate_size=768, num_hidden_layers=1,
                      num_attention_heads=4, num_key_value_heads=2)


def encode_corpus(tok: PreTrainedTokenizerFast, txt: Path) -> np.ndarray:
    """Token ids of a corpus file, documents joined by the end-of-text id (cached as .npy; the
    cache is rebuilt when the text or the tokenizer that `tok` was loaded from is newer)."""
    cache = txt.with_suffix(".ids.npy")
    sources = [txt, Path(tok.name_or_path) / "tokenizer.json"]
    if cache.exists() and all(cache.stat().st_mtime > s.stat().st_mtime for s in sources if s.exists()):
        return np.load(cache)
    eot = tok.convert_tokens_to_ids(EOT)
    ids = []
    for doc in txt.read_text(encoding="utf-8").split(EOT):
        ids += tok.encode(doc) + [eot]
    arr = np.array(ids, dtype=np.uint16)
    np.save(cache, arr)
    return arr


def make_config(tok: PreTrainedTokenizerFast, sizes: dict) -> LlamaConfig:
    eot = tok.convert_tokens_to_ids(EOT)
    return LlamaConfig(vocab_size=len(tok), max_position_embeddings=512, rope_theta=10000.0,
                       tie_word_embeddings=True, bos_token_id=eot, eos_token_id=eot,
                       pad_token_id=eot, **sizes)


def autocast():
    """bfloat16 autocast for a training forward pass, on whichever device type torch uses."""
    return torch.autocast("cuda" if torch.cuda.is_available() else "cpu", dtype=torch.bfloat16)


def batches(ids: np.ndarray, batch: int, seq_len: int, gen: torch.Generator):
    """Endless random windows: (inputs, labels) both [batch, seq_len]."""
    data = torch.from_numpy(ids.astype(np.int64))
    while True:
        starts = torch.randint(0, len(data) - seq_len - 1, (batch,), generator=gen)
        x = torch.stack([data[s:s + seq_len + 1] for s in starts.tolist()])
        yield x[:, :-1], x[:, 1:]


@torch.no_grad()
def heldout_loss(model, ids: np.ndarray, seq_len: int = 256, max_windows: int = 64) -> float:
    """Mean next-token cross-entropy over consecutive held-out windows (perplexity = exp)."""
    model.eval()
    data = torch.from_numpy(ids.astype(np.int64))
    losses = []
    for i in range(0, min(len(data) - 1, seq_len * max_windows), seq_len):
        x = data[i:i + seq_len + 1]
        if len(x) < 2:
            break
        logits = model(x[None, :-1]).logits[0]
        losses.append(F.cross_entropy(logits.float(), x[1:], reduction="sum").item() / (len(x) - 1))
    model.train()
    return float(np.mean(losses))


def lr_at(step: int, steps: int, lr: float, warmup: int = 100) -> float:
    """Linear warmup then cosine decay to a tenth of `lr`."""
    if step < warmup:
        return lr * (step + 1) / warmup
    t = (step - warmup) / max(1, steps - warmup)
    return lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))


def report(log, name: str, state: dict, steps: int, news: str) -> None:
    """Every 10 steps: a progress bar with `news` on stderr and in the log file."""
    if state["step"] % 10 and state["step"] != steps:
        return
    done = state["step"] / steps
    bar = "#" * int(30 * done) + "." * (30 - int(30 * done))
    line = f"{name} [{bar}] step {state['step']}/{steps} {news} {state['seconds'] / 60:.1f} min"
    print(line, file=sys.stderr, flush=True)
    log.write(line + "\n")
    log.flush()


def train_lm(name: str, sizes: dict, tok_dir: Path, corpus_dir: Path, out_dir: Path, work_dir: Path,
             steps: int, batch: int = 16, seq_len: int = 256, lr: float = 1e-3,
             teacher: Path | None = None, ckpt_every: int = 100, seed: int = 0) -> dict:
    """Train (or resume) model `name` and save it with save_pretrained into `out_dir`.

    Returns the training facts a model card needs (tokens seen, seconds, held-out loss).
    """
    torch.manual_seed(seed)
    tok = PreTrainedTokenizerFast.from_pretrained(tok_dir)
    train_ids = encode_corpus(tok, corpus_dir / "train.txt")
    held_ids = encode_corpus(tok, corpus_dir / "heldout.txt")
    model = LlamaForCausalLM(make_config(tok, sizes))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.1)
    teacher_model = None
    if teacher is not None:
        teacher_model = LlamaForCausalLM.from_pretrained(teacher, dtype=torch.float32).eval()
    work_dir.mkdir(parents=True, exist_ok=True)
    ckpt, log_path = work_dir / f"{name}.pt", work_dir / f"{name}.log"
    state = {"step": 0, "seconds": 0.0, "tokens": 0}
    gen = torch.Generator().manual_seed(seed)
    if ckpt.exists():
        saved = torch.load(ckpt, weights_only=False)
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        state = saved["state"]
        gen.set_state(saved["gen"])
    stream = batches(train_ids, batch, seq_len, gen)
    log = log_path.open("a")
    model.train()
    t_last = time.time()
    while state["step"] < steps:
        x, y = next(stream)
        for g in opt.param_groups:
            g["lr"] = lr_at(state["step"], steps, lr)
        with autocast():
            logits = model(x).logits.float()
        if teacher_model is None:
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        else:   # per-token KL(target || drafter)
            with torch.no_grad(), autocast():
                t_logp = F.log_softmax(teacher_model(x).logits.float(), -1)
            loss = F.kl_div(F.log_softmax(logits, -1), t_logp, log_target=True, reduction="batchmean") / seq_len
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        now = time.time()
        state["seconds"] += now - t_last
        t_last = now
        state["step"] += 1
        state["tokens"] += x.numel()
        report(log, name, state, steps, f"loss {loss.item():.3f} {state['tokens'] / state['seconds']:.0f} tok/s")
        if state["step"] % ckpt_every == 0 or state["step"] == steps:
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "state": state,
                        "gen": gen.get_state()}, ckpt)
    held = heldout_loss(model, held_ids)
    model.to(torch.bfloat16).save_pretrained(out_dir)
    tok.save_pretrained(out_dir)
    facts = {"name": name, "parameters": sum(p.numel() for p in model.parameters()),
             "tokens_seen": state["tokens"], "train_seconds": round(state["seconds"]),
             "heldout_loss": round(held, 4), "heldout_perplexity": round(math.exp(held), 2),
             "steps": steps, "batch": batch, "seq_len": seq_len, "lr": lr, "autocast": "bfloat16",
             "distilled_from": f"models/{teacher.name}" if teacher else None, "config": sizes}
    (out_dir / "training.json").write_text(json.dumps(facts, indent=2))
    log.write(json.dumps(facts) + "\n")
    return facts
