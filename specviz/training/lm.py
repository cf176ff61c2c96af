"""Train a small Llama-architecture causal LM (the target or the autoregressive drafter).

One loop for both: random windows of the tokenised corpus, AdamW with warmup and cosine decay,
a checkpoint every `ckpt_every` steps that a rerun resumes from, a log file, a progress line, and
held-out perplexity every `curve_every` steps (the loss curve a model card shows, so a reader
sees where more steps stopped paying).

A run longer than one working session carries over in `carry_dir`: beside each checkpoint it
writes the weights in bf16 and the run's state (step, tokens, curve, sampler), small enough to
commit, where the full checkpoint with AdamW's moments is not. A run that finds no checkpoint
but a carry resumes from it with fresh moments and a short learning-rate ramp, so the zeroed
moments do not turn the first steps into full-size sign steps. A drafter can be distilled from a frozen target: its loss is then only the KL divergence
from the target's next-token distribution, not the corpus cross-entropy, because a drafter is
worth what it agrees with the target, not what it knows about the text (a cross-entropy term
let a long-trained drafter learn the corpus past an under-trained target).

Forward passes run under bfloat16 autocast (weights, gradients and the optimizer stay fp32) on a
GPU and on a CPU with bf16 matrix units (AVX512-BF16, AMX), where a target step takes less than
half the fp32 time (docs/benchmarks.md, "Training"); a CPU without them trains in fp32, since
emulated bf16 is slower than fp32 by tens of times. Held-out loss is measured in fp32.

What it leaves out: the numbers (sizes, steps, rates: specviz.training.recipe), multi-GPU,
gradient accumulation.
"""
import base64
import hashlib
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from specviz.training.recipe import LLAMA, LM_ADAMW

EOT = "<|endoftext|>"


def encode_corpus(tok: PreTrainedTokenizerFast, txt: Path) -> np.ndarray:
    """Token ids of a corpus file, documents joined by the end-of-text id, cached as .npy beside
    it under a hash of the tokenizer: rebuilt when the text is newer, and never handed to another
    tokenizer (not even an older one, as a comparison of two model sets reads one text in each)."""
    vocab = hashlib.sha1(tok.backend_tokenizer.to_str().encode()).hexdigest()[:12]
    cache = txt.with_name(f"{txt.stem}.{vocab}.ids.npy")
    if cache.exists() and cache.stat().st_mtime > txt.stat().st_mtime:
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
    return LlamaConfig(vocab_size=len(tok), tie_word_embeddings=True, bos_token_id=eot, eos_token_id=eot,
                       pad_token_id=eot, **LLAMA, **sizes)


def cpu_has_bf16() -> bool:
    """Whether this CPU has bf16 matrix instructions (AVX512-BF16 or AMX); Linux's cpuinfo flags."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def autocast():
    """bfloat16 autocast for a training forward pass on a GPU or a CPU with bf16 units; fp32
    elsewhere: on an AVX2-only CPU a bf16 target step took 95 s where fp32 takes about one."""
    if torch.cuda.is_available():
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=cpu_has_bf16())


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


def heldout_perplexity(model, tok: PreTrainedTokenizerFast, txt: Path) -> float:
    """exp(heldout_loss) over a held-out corpus file, rounded as the model cards print it."""
    return round(math.exp(heldout_loss(model, encode_corpus(tok, txt))), 2)


def lr_at(step: int, steps: int, lr: float, warmup: int = 100, resumed_at: int | None = None) -> float:
    """Linear warmup then cosine decay to a tenth of `lr`; after a resume with fresh AdamW
    moments (`resumed_at`), the schedule's rate ramps in again over `warmup` steps.

    >>> lr_at(0, 1000, 1.0), lr_at(100, 1000, 1.0), round(lr_at(1000, 1000, 1.0), 6)
    (0.01, 1.0, 0.1)
    >>> lr_at(550, 1000, 1.0, resumed_at=500) == lr_at(550, 1000, 1.0) * 51 / 100
    True
    """
    if step < warmup:
        return lr * (step + 1) / warmup
    t = (step - warmup) / max(1, steps - warmup)
    rate = lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))
    if resumed_at is not None and step - resumed_at < warmup:
        rate *= (step - resumed_at + 1) / warmup
    return rate


def save_carry(model, state: dict, gen: torch.Generator, carry_dir: Path) -> None:
    """The run as it carries to another session: bf16 weights and the state, no optimizer."""
    carry_dir.mkdir(parents=True, exist_ok=True)
    bf16 = {k: v.detach().to(torch.bfloat16).contiguous() for k, v in model.state_dict().items()}
    save_file({k: v for k, v in bf16.items() if k != "lm_head.weight"}, carry_dir / "model.safetensors")
    saved = dict(state, gen=base64.b64encode(gen.get_state().numpy().tobytes()).decode())
    (carry_dir / "state.json").write_text(json.dumps(saved, indent=1))


def load_carry(model, gen: torch.Generator, carry_dir: Path) -> dict:
    """Weights and state from `save_carry`; returns the state, marked with where it resumed."""
    model.load_state_dict(load_file(carry_dir / "model.safetensors"), strict=False)   # lm_head is tied
    state = json.loads((carry_dir / "state.json").read_text())
    gen.set_state(torch.frombuffer(bytearray(base64.b64decode(state.pop("gen"))), dtype=torch.uint8))
    return dict(state, resumed_at=state["step"])


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


def train_lm(name: str, sizes: dict, tok_dir: Path, corpus_dir: Path, out_dir: Path, work_dir: Path, *,
             steps: int, batch: int, seq_len: int, lr: float, warmup: int, teacher: Path | None = None,
             ckpt_every: int = 100, curve_every: int = 0, carry_dir: Path | None = None, seed: int = 0) -> dict:
    """Train (or resume) model `name` and save it with save_pretrained into `out_dir`.

    The run's numbers have no defaults: the shipped ones are the recipe's (TARGET_RUN, DRAFTER_RUN
    in specviz.training.recipe), and so are what both runs share (LLAMA, LM_ADAMW).

    Returns the training facts a model card needs (tokens seen, seconds, held-out loss, and the
    curve of held-out perplexity by workload when `curve_every` is set).
    """
    torch.manual_seed(seed)
    tok = PreTrainedTokenizerFast.from_pretrained(tok_dir)
    train_ids = encode_corpus(tok, corpus_dir / "train.txt")
    held_ids = encode_corpus(tok, corpus_dir / "heldout.txt")
    curve_ids = {"prose": held_ids, "code": encode_corpus(tok, corpus_dir / "heldout_code.txt")}
    model = LlamaForCausalLM(make_config(tok, sizes))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, **LM_ADAMW)
    teacher_model = None
    if teacher is not None:
        teacher_model = LlamaForCausalLM.from_pretrained(teacher, dtype=torch.float32).eval()
    work_dir.mkdir(parents=True, exist_ok=True)
    ckpt, log_path = work_dir / f"{name}.pt", work_dir / f"{name}.log"
    state = {"step": 0, "seconds": 0.0, "tokens": 0, "curve": []}
    gen = torch.Generator().manual_seed(seed)
    if ckpt.exists():
        saved = torch.load(ckpt, weights_only=False)
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        state = saved["state"]
        gen.set_state(saved["gen"])
    elif carry_dir is not None and (carry_dir / "state.json").exists():
        state = load_carry(model, gen, carry_dir)
    stream = batches(train_ids, batch, seq_len, gen)
    log = log_path.open("a")
    model.train()
    t_last = time.time()
    while state["step"] < steps:
        x, y = next(stream)
        for g in opt.param_groups:
            g["lr"] = lr_at(state["step"], steps, lr, warmup, state.get("resumed_at"))
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
        if curve_every and (state["step"] % curve_every == 0 or state["step"] == steps):
            point = {w: round(math.exp(heldout_loss(model, ids)), 2) for w, ids in curve_ids.items()}
            state["curve"].append(dict(step=state["step"], tokens=state["tokens"], **point))
            log.write(json.dumps({"curve": state["curve"][-1]}) + "\n")
            t_last = time.time()     # the evaluation is not training time
        if state["step"] % ckpt_every == 0 or state["step"] == steps:
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "state": state,
                        "gen": gen.get_state()}, ckpt)
            if carry_dir is not None:
                save_carry(model, state, gen, carry_dir)
    held = heldout_loss(model, held_ids)
    model.to(torch.bfloat16).save_pretrained(out_dir)
    tok.save_pretrained(out_dir)
    facts = {"name": name, "parameters": sum(p.numel() for p in model.parameters()),
             "tokens_seen": state["tokens"], "train_seconds": round(state["seconds"]),
             "heldout_loss": round(held, 4), "heldout_perplexity": round(math.exp(held), 2),
             "steps": steps, "batch": batch, "seq_len": seq_len, "lr": lr, "autocast": "bfloat16",
             "distilled_from": f"models/{teacher.name}" if teacher else None, "config": sizes,
             "heldout_curve": state.get("curve", [])}
    (out_dir / "training.json").write_text(json.dumps(facts, indent=2))
    log.write(json.dumps(facts) + "\n")
    return facts
