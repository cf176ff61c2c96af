"""Train the block drafters against the frozen shipped target: DFlash, DSpark, DSpark+loop.

One loop trains DFlash and DSpark on the same batches, so the target's forward (its hidden
states and next-token distributions) is paid once per batch. DLoop's drafter then starts from
the trained DSpark drafter and continues with loop-aware steps alone.

Per sequence, M anchors at random positions a. Block m is [x_a, mask, ..., mask] at
positions a..a+K-1; position i is trained to predict the token at a+i+1, against the target's
own distribution there. A boolean attention mask lets block m see the target features of
positions < a_m and its own block, nothing of other blocks.

  DFlash       soft cross-entropy to the target, weighted by exp(-(i)/gamma) over position i
  DSpark       logits + Markov bias from the true previous token; 0.1 CE + 0.9 TV, plus BCE of
               the confidence head towards 1 - TV (TV = 1/2 |p_draft - p_target|_1, detached)
  loop-aware   the DSpark loss, unrolled over S stages: stage s's anchor is the true token at
               a + (s-1)K, and its extra context is stage s-1's final hidden states
               (the provisional features DLoop uses); stages 1 and S are supervised

Two phases on different text, then the loop-aware steps:

  long text     the target's own 256-token continuations (`specviz.training.target_text`), anchors
                uniform over the row: the tokens a block hides are the ones verification checks,
                but half the anchors sit 96+ tokens deep, where the target's greedy text loops
  drafting mix  where the drafters draft: half corpus windows of both workloads (one target
                forward gives the features and the target's distribution at every position, so
                the whole corpus is distilled with no generation), half short target
                continuations (a 32-token window and 96 tokens of the target, before it loops);
                rows of 128 tokens, and three anchors in four placed right after a token the
                drafter's own first guess missed (on-policy: a round starts at a correction in
                86-95% of rounds, where the first position was 0.46 against 0.69 after a hit);
                and the first proposal trained at every position of the row, not at the anchors
                alone: teacher-forced on held-out text the long-text DSpark drafter's first guess
                agreed with the target's 0.48 of the time (prose) where the autoregressive
                drafter, which learns from every position, agreed 0.67
  loop-aware    DLoop's drafter from the DSpark drafter of the mix, on the mix

Forward passes run under bfloat16 autocast, as the target's training does
(`specviz.training.lm.autocast`); weights and optimizer state stay fp32.

What it leaves out: the numbers (block size, rates, batches, the drafters' shapes:
specviz.training.recipe), multi-GPU.
"""
import functools
import json
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast

from specviz.generator.drafters.block_model import BlockDrafterConfig, BlockDrafterModel, position_weights
from specviz.training.lm import autocast, load_carry, lr_at, report, save_carry
from specviz.training.recipe import BLOCK_ADAMW, BLOCK_DRAFTER, BLOCK_WARMUP, LOOP, VARIANTS


def block_mask(anchors: torch.Tensor, L: int, K: int, prov: int) -> torch.Tensor:
    """Which keys each block query may attend: [M*K, L + M*prov + M*K] booleans.

    Keys are [target context (L) ; provisional (prov per block) ; blocks (K per block)].

    >>> block_mask(torch.tensor([2]), L=4, K=2, prov=0).int().tolist()
    [[1, 1, 0, 0, 1, 1], [1, 1, 0, 0, 1, 1]]
    """
    M = len(anchors)
    owner = torch.arange(M).repeat_interleave(K)                       # block of each query
    ctx = torch.arange(L)[None, :] < anchors[owner][:, None]
    prov_ok = torch.arange(M).repeat_interleave(prov)[None, :] == owner[:, None]
    own = torch.arange(M).repeat_interleave(K)[None, :] == owner[:, None]
    return torch.cat([ctx, prov_ok, own], 1)


def distill(logits: torch.Tensor, p_t: torch.Tensor, markov: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per position: (the drafter's loss against the target's distribution p_t, its soft cross-entropy,
    its total variation 1/2 |p_draft - p_t|_1): cross-entropy for DFlash, 0.1 CE + 0.9 TV for DSpark."""
    logp_d = F.log_softmax(logits, -1)
    ce = -(p_t * logp_d).sum(-1)
    tv = 0.5 * (logp_d.exp() - p_t).abs().sum(-1)
    return (0.1 * ce + 0.9 * tv if markov else ce), ce, tv


def drafter_loss(model, feats, tokens, t_logp, anchors, K: int, stages: int, gamma: float, dense: bool = False) -> dict:
    """Loss of one drafter on one sequence (see module docstring). With `dense`, every position of the row is
    also an anchor of a one-slot block: the first proposal, the one every round's acceptance starts from, is
    then trained at all L positions a step instead of at the M anchors alone; with no anchors it is the whole
    loss, cross-entropy for both drafters (the dense phase of scripts/dense_phase.py)."""
    L = tokens.size(0)
    M = len(anchors)
    kv = model.context_kv(model.context_features(feats), torch.arange(L))
    w = position_weights(K, gamma).repeat(M)
    prov_kv, prov_h, out = None, None, {}
    markov = bool(model.config.markov_rank)
    total = 0.0
    if dense:
        at = torch.arange(1, L - 1)
        logits = model.lm_head(model.forward_block(tokens[at], at, kv, block_mask(at, L, 1, 0))).float()
        if markov:
            logits = logits + model.markov_bias(tokens[at]).float()
        # with no anchors (the dense phase) DSpark's first proposal is distilled by cross-entropy, as DFlash's
        # and the autoregressive drafter's are: under 0.1 CE + 0.9 TV its first guess on code moved
        # 0.40 -> 0.45 in 1000 such steps where DFlash's, on the same batches, moved 0.26 -> 0.59
        loss, ce, _ = distill(logits, t_logp[at].exp(), markov and M > 0)
        total = loss.mean()
        out["first"] = float(ce.detach().mean())
    for s in range(stages if M else 0):
        start = anchors + s * K
        pos = (start[:, None] + torch.arange(K)[None]).reshape(-1)           # [M*K]
        block = torch.full((M, K), model.config.mask_token_id)
        block[:, 0] = tokens[start]
        prov = s * K
        mask = block_mask(anchors, L, K, prov)
        if prov:   # keys/values of every earlier stage's hidden states, grouped per block
            prov_pos = (anchors[:, None] + torch.arange(prov)[None]).reshape(-1)
            prov_kv = model.context_kv(prov_h.reshape(M * prov, -1), prov_pos)
            layer_kv = [(torch.cat([k, pk], 1), torch.cat([v, pv], 1)) for (k, v), (pk, pv) in zip(kv, prov_kv)]
        else:
            layer_kv = kv
        h = model.forward_block(block.reshape(-1), pos, layer_kv, mask)       # [M*K, h]
        prov_h = h.reshape(M, K, -1) if prov_h is None else torch.cat([prov_h, h.reshape(M, K, -1)], 1)
        if s not in (0, stages - 1):
            continue
        logits = model.lm_head(h).float()     # the loss in fp32 under autocast
        p_t = t_logp[pos].exp()
        if markov:
            prev = tokens[pos]                                               # true token before each target
            logits = logits + model.markov_bias(prev).float()
        per, ce, tv = distill(logits, p_t, markov)
        if markov:
            conf = model.confidence_logit(h, prev).float()
            per = per + F.binary_cross_entropy_with_logits(conf, (1 - tv).detach(), reduction="none")
            out[f"tv{s}"] = float(tv.detach().mean())
        loss = (w * per).sum() / w.sum()
        out[f"ce{s}"] = float(ce.detach().mean())
        total = total + loss
    out["loss"] = total
    return out


@torch.no_grad()
def first_guess_misses(model, kv, tokens: torch.Tensor) -> torch.Tensor:
    """[L] booleans: whether the drafter's first proposal from anchor j (a block of one slot, the
    context before j) is not tokens[j + 1]; False at the last position, which has no next token."""
    L = tokens.size(0)
    at = torch.arange(L)
    h = model.forward_block(tokens, at, kv, block_mask(at, L, 1, 0))
    logits = model.lm_head(h).float()
    if model.config.markov_rank:
        logits = logits + model.markov_bias(tokens).float()     # the anchor is the first slot's previous token
    miss = torch.zeros(L, dtype=torch.bool)
    miss[:-1] = logits[:-1].argmax(-1) != tokens[1:]
    return miss


def draw_anchors(n: int, hi: int, after_miss: torch.Tensor | None, on_policy: float, gen: torch.Generator) -> torch.Tensor:
    """n anchors in [1, hi): uniform, or with `on_policy` > 0 that share of them drawn among the
    positions right after a miss (`after_miss`, [L] booleans), where the engine's rounds start.

    >>> g = torch.Generator().manual_seed(0)
    >>> after = torch.zeros(10, dtype=torch.bool); after[7] = True
    >>> draw_anchors(4, 9, after, 1.0, g).tolist()
    [7, 7, 7, 7]
    """
    anchors = torch.randint(1, hi, (n,), generator=gen)
    if not on_policy:
        return anchors
    cands = torch.nonzero(after_miss[1:hi]).flatten() + 1
    if not len(cands):
        return anchors
    picked = cands[torch.randint(0, len(cands), (n,), generator=gen)]
    return torch.where(torch.rand(n, generator=gen) < on_policy, picked, anchors)


def fit(models: dict, target, layers: list, rows, steps: int, lr: float, ckpt: Path, log_path: Path,
        anchors: int, K: int, loop_stages: int, gamma: float, ckpt_every: int, seed: int,
        carry_dir: Path | None = None, on_policy: float = 0.0, dense: bool = False) -> dict:
    """Train `models` (name -> drafter) together on the same batches for `steps` optimizer steps,
    resuming from `ckpt`, else from the carry in `carry_dir` (as the target's run does,
    `specviz.training.lm`); returns the run's state {"step", "seconds", "tokens"}.

    `rows(gen)` gives a batch of token rows [B, L]; `on_policy` is the share of anchors placed
    right after each drafter's own first-guess misses (`draw_anchors`); `dense` trains the first
    proposal at every position too (`drafter_loss`).
    """
    opts = {name: torch.optim.AdamW(m.parameters(), lr=lr, **BLOCK_ADAMW) for name, m in models.items()}
    state = {"step": 0, "seconds": 0.0, "tokens": 0}
    gen = torch.Generator().manual_seed(seed)
    if ckpt.exists():
        saved = torch.load(ckpt, weights_only=False)
        for name in models:
            models[name].load_state_dict(saved["models"][name])
            opts[name].load_state_dict(saved["opts"][name])
        state, _ = saved["state"], gen.set_state(saved["gen"])
    elif carry_dir is not None and (carry_dir / "state.json").exists():
        state = load_carry(torch.nn.ModuleDict(models), gen, carry_dir)
    log = log_path.open("a")
    t_last = time.time()
    while state["step"] < steps:
        x = rows(gen)
        hi = x.size(1) - loop_stages * K - 1
        with torch.no_grad(), autocast():
            out = target(x, output_hidden_states=True)
            feats = torch.cat([out.hidden_states[i + 1] for i in layers], -1).float()
            t_logp = F.log_softmax(out.logits.float(), -1)
        stats = {}
        for name, m in models.items():
            for g in opts[name].param_groups:
                g["lr"] = lr_at(state["step"], steps, lr, warmup=BLOCK_WARMUP, resumed_at=state.get("resumed_at"))
            stages = loop_stages if m.config.loop_aware else 1
            total, parts = 0.0, []
            for b in range(len(x)):
                after_miss = None
                if on_policy:
                    with autocast():
                        kv = m.context_kv(m.context_features(feats[b]), torch.arange(x.size(1)))
                        after_miss = torch.roll(first_guess_misses(m, kv, x[b]), 1)
                a = draw_anchors(anchors, hi, after_miss, on_policy, gen)
                with autocast():
                    r = drafter_loss(m, feats[b], x[b], t_logp[b], a, K, stages, gamma, dense)
                total = total + r.pop("loss") / len(x)
                parts.append(r)
            opts[name].zero_grad(set_to_none=True)
            total.backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            opts[name].step()
            stats[name] = {k: round(float(np.mean([p[k] for p in parts])), 3) for k in parts[0]}
        now = time.time()
        state["seconds"] += now - t_last
        t_last = now
        state["step"] += 1
        state["tokens"] += x.numel()
        report(log, ckpt.stem, state, steps, json.dumps(stats))
        if state["step"] % ckpt_every == 0 or state["step"] == steps:
            torch.save({"models": {k: m.state_dict() for k, m in models.items()},
                        "opts": {k: o.state_dict() for k, o in opts.items()}, "state": state,
                        "gen": gen.get_state()}, ckpt)
            if carry_dir is not None:
                save_carry(torch.nn.ModuleDict(models), state, gen, carry_dir)
    return state


@functools.cache
def load_rows(paths: tuple[Path, ...]) -> torch.Tensor:
    """The files' token rows together, [sequences, seq_len]; read once, and only by a phase that trains."""
    return torch.from_numpy(np.concatenate([np.load(p) for p in paths]).astype(np.int64))


def text_rows(paths: tuple[Path, ...], batch: int):
    """A batch sampler (as `fit` takes) of `batch` random rows of the files."""
    def rows(gen: torch.Generator) -> torch.Tensor:
        text = load_rows(paths)
        return text[torch.randint(0, len(text), (batch,), generator=gen)]
    return rows


def mixed_rows(corpus: np.ndarray, paths: tuple[Path, ...], batch: int, length: int, corpus_share: float = 0.5):
    """A batch sampler of `batch` rows of `length` tokens: `corpus_share` of them corpus windows,
    the rest the first `length` tokens of random rows of the files (short target continuations).

    >>> rows = mixed_rows(np.arange(1000), (), 4, 8, corpus_share=1.0)
    >>> rows(torch.Generator().manual_seed(0)).shape
    torch.Size([4, 8])
    """
    ids = torch.from_numpy(corpus.astype(np.int64))
    n_corpus = round(batch * corpus_share)

    def rows(gen: torch.Generator) -> torch.Tensor:
        starts = torch.randint(0, len(ids) - length, (n_corpus,), generator=gen).tolist()
        windows = [ids[s:s + length] for s in starts]
        if batch > n_corpus:
            text = load_rows(paths)[:, :length]
            windows += list(text[torch.randint(0, len(text), (batch - n_corpus,), generator=gen)])
        return torch.stack(windows)
    return rows


def frozen_target(target_dir: Path):
    """The target the drafters are trained against: fp32, in eval mode, no gradients."""
    target = AutoModelForCausalLM.from_pretrained(target_dir, dtype=torch.float32).eval()
    for p in target.parameters():
        p.requires_grad_(False)
    return target


def drafter_shape(target, tok_dir: Path) -> dict:
    """The block drafters' shared config: the target's sizes, its mask token and the recipe's BLOCK_DRAFTER."""
    tc, tok = target.config, PreTrainedTokenizerFast.from_pretrained(tok_dir)
    return dict(hidden_size=tc.hidden_size, num_heads=tc.num_attention_heads, intermediate_size=tc.intermediate_size,
                vocab_size=tc.vocab_size, mask_token_id=tok.convert_tokens_to_ids("<|mask|>"), **BLOCK_DRAFTER)


def train_block_drafters(target_dir: Path, tok_dir: Path, text_paths: list[Path], mix_paths: list[Path],
                         corpus_ids: np.ndarray, models_dir: Path, work_dir: Path, *, steps: int, mix_steps: int,
                         loop_steps: int, batch: int, anchors: int, K: int, loop_stages: int, gamma: float, lr: float,
                         loop_lr: float, mix: dict, ckpt_every: int = 50, seed: int = 0,
                         carry_dir: Path | None = None) -> dict:
    """DFlash and DSpark for `steps` on the long text (`text_paths`), then `mix_steps` on the
    drafting mix (`corpus_ids` windows and the short continuations in `mix_paths`, shaped by
    `mix`); then DLoop's drafter: the DSpark drafter's weights and `loop_steps` loop-aware steps
    on the mix.

    The run's numbers have no defaults: the shipped ones are the recipe's (STEPS and BLOCK_RUN in
    specviz.training.recipe), and so are the drafters' shapes (BLOCK_DRAFTER, VARIANTS, LOOP). With
    `carry_dir`, each run also carries over there (`block/`, `block-mix/`, `loop/`) for a fresh
    machine; a phase that is done reads no text.
    """
    torch.manual_seed(seed)
    target = frozen_target(target_dir)
    cfg = drafter_shape(target, tok_dir)
    models = {name: BlockDrafterModel(BlockDrafterConfig(**cfg, **extra)).attach_target(target)
              for name, extra in VARIANTS.items()}
    work_dir.mkdir(parents=True, exist_ok=True)
    shape = dict(K=K, loop_stages=loop_stages, gamma=gamma, ckpt_every=ckpt_every)
    mixed = mixed_rows(corpus_ids, tuple(mix_paths), mix["batch"], mix["length"], mix["corpus_share"])
    carry = (lambda name: carry_dir / name) if carry_dir is not None else (lambda name: None)
    state = fit(models, target, cfg["target_layers"], text_rows(tuple(text_paths), batch), steps, lr,
                work_dir / "block.pt", work_dir / "block.log", anchors=anchors, seed=seed, carry_dir=carry("block"), **shape)
    long_phase = dict(text="long", steps=steps, lr=lr, seconds=state["seconds"], tokens=state["tokens"])
    state = fit(models, target, cfg["target_layers"], mixed, mix_steps, mix["lr"], work_dir / "block-mix.pt",
                work_dir / "block-mix.log", anchors=mix["anchors"], seed=seed + 2, carry_dir=carry("block-mix"),
                on_policy=mix["on_policy"], dense=True, **shape)
    mix_phase = dict(text="mix", steps=mix_steps, lr=mix["lr"], seconds=state["seconds"], tokens=state["tokens"])
    loop = BlockDrafterModel(BlockDrafterConfig(**cfg, **LOOP)).attach_target(target)
    loop.load_state_dict(models["dspark"].state_dict())
    state = fit({"dspark-loop": loop}, target, cfg["target_layers"], mixed, loop_steps, loop_lr,
                work_dir / "loop.pt", work_dir / "loop.log", anchors=mix["anchors"], seed=seed + 1,
                carry_dir=carry("loop"), on_policy=mix["on_policy"], dense=True, **shape)
    models["dspark-loop"] = loop
    loop_phase = dict(text="mix", steps=loop_steps, lr=loop_lr, seconds=state["seconds"], tokens=state["tokens"],
                      loop_aware=True)
    texts = {"long": [json.loads(p.with_suffix(".json").read_text()) for p in text_paths],
             "mix": [json.loads(p.with_suffix(".json").read_text()) for p in mix_paths]}
    facts = {}
    for name, m in models.items():
        out_dir = models_dir / f"drafter-{name}"
        m.to(torch.bfloat16).save_pretrained(out_dir)
        m.to(torch.float32)
        phases = [long_phase, mix_phase] + ([loop_phase] if name == "dspark-loop" else [])
        f = {"name": f"drafter-{name}", "parameters": sum(p.numel() for p in m.parameters()),
             "steps": sum(ph["steps"] for ph in phases), "block_size_k": K,
             "loop_stages": loop_stages if m.config.loop_aware else 1, "gamma": gamma,
             "phases": phases, "text": texts, "mix": mix, "long_shape": dict(batch=batch, anchors_per_sequence=anchors),
             "train_seconds": round(sum(ph["seconds"] for ph in phases)),
             "target_tokens_seen": sum(ph["tokens"] for ph in phases)}
        (out_dir / "training.json").write_text(json.dumps(f, indent=2))
        facts[name] = f
    return facts
