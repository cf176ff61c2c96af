"""Lesson 9, inside a round: what a block drafter reads from the target, what the verifier must
be given, what "lossless" does and does not promise, and how a system's speed is measured.

  SECTIONS              the lesson's headings and the glossary terms each one uses
  drafter_view          one live round of a block drafter: target layers, positions, the
                        [anchor, mask, ...] input, the first draft layer's attention, proposals
  block_attention_note  what that attention shows: which slots read the block, which the context
  emitted_distribution  what ratio-and-residual verification emits when the proposal was drawn
                        from one q but the verifier was handed another (exact)
  wrong_q               that distance on the real models, for the true q and two wrong ones
  wrong_q_note          what those distances show, as a sentence
  bf16_twin, precision_search
                        the target in bfloat16 beside float32: where greedy outputs part
  SCHEDULE_EXAMPLE, schedule_example
                        a later token of a strong request against an early token of a doubtful
                        one, and what uncalibrated confidences do (this app's worked example)
  per_token, elapsed    total time over total tokens; the critical path of overlapping phases
  trace_timing          time per token, time to first token and request time of a live trace
  dloop_round, gate_reason, training_cost
                        DLoop's stages and anchors on a live round, why the gate decided as it
                        did; this app's training records

Claims come from the two source documents, cited by title on the page; numbers are either
the sources', this app's measurement, or this app's worked example, and each says which.

What it leaves out: drawing (specviz.viz.inside) and the scheduler itself (admission).
"""
import json
import math
from dataclasses import replace
from pathlib import Path

import torch

from specviz.generator.drafters.block_model import rope
from specviz.generator.engine import Generation, encode_prompt, generate
from specviz.generator.models import load_model
from specviz.generator.sampling import SamplingSettings, transform
from specviz.generator.settings import Settings, from_dflash_block_size
from specviz.generator.verify import residual
from specviz.lessons.admission import algorithm1, survival
from specviz.lessons.markup import md_token
from specviz.lessons.parallel import prepared

SECTIONS = [
    ("1 · How a block drafter reads the target: anchor, mask slots, context features",
     ["block drafter", "anchor", "mask slot", "context features"]),
    ("2 · Which proposal distribution q is the verifier handed?", ["verifier", "proposal distribution q"]),
    ("3 · Three claims, and numerics that can flip a greedy token (float32 against bfloat16)",
     ["greedy", "float32", "bfloat16"]),
    ("4 · Confidence scheduling under load: calibration, prefix survival, SPS",
     ["calibration", "prefix survival", "SPS"]),
    ("5 · Measuring a system: critical path, tokens per second, time to first token",
     ["critical path", "tokens per second", "time to first token"]),
    ("6 · DLoop in detail: loop-aware training, the next anchor, and D-Loop",
     ["DLoop", "loop-aware training", "anchor", "D-Loop"]),
]


# --- 1. what the drafter sees -----------------------------------------------------------------

@torch.no_grad()
def drafter_view(models, prompt: str, drafter: str = "dspark", k: int = 4, shown_context: int = 6) -> dict:
    """One live greedy round of a block drafter, with what it read before proposing.

    Returns the target layers whose hidden states become context features, the positions the
    target has processed (context) and the block's positions, the block input [anchor, mask...],
    the first draft layer's attention (mean over heads) from each block slot to the last
    `shown_context` context positions and to the block, the proposals and how many survived.
    """
    g = Generation(models, prompt, Settings.greedy(drafter, k + 1, k=k))
    d = g.drafter
    if not hasattr(d, "ctx_kv"):
        raise ValueError(f"{drafter!r} is not a block drafter")
    m, texts = d.model, models.token_text
    n_ctx, anchor = d.n_ctx, g.committed[-1]
    slot = getattr(d, "slot", 0)   # 1 for a drafter in DFlash's read-out, whose anchor slot predicts nothing
    slots = k + slot
    pos = torch.arange(n_ctx, n_ctx + slots, device=m.device)
    block = torch.tensor([anchor] + [d.mask_id] * (slots - 1), device=m.device)
    # the first draft layer's attention, written out as DraftLayer.forward computes it (no mask)
    layer, rot = m.layers[0], m.rotary(pos)
    a = layer.norm1(m.embed(block))
    q = rope(layer.q(a).view(-1, layer.heads, layer.dh).transpose(0, 1), *rot)
    kb, _ = layer.kv(a, rot)
    keys = torch.cat([d.ctx_kv[0][0], kb], 1)
    att = torch.softmax((q @ keys.transpose(-1, -2)).float() / math.sqrt(layer.dh), -1).mean(0)
    shown = min(shown_context, n_ctx)
    ctx_ids = g.committed[n_ctx - shown:n_ctx]
    rnd = g.step()
    cfg = models.target.config
    return {
        "target_layers": list(d.target_layers), "target_depth": cfg.num_hidden_layers,
        "target_width": cfg.hidden_size, "drafter_width": m.config.hidden_size,
        "feature_in": len(d.target_layers) * cfg.hidden_size,
        "context_positions": n_ctx, "anchor": texts[anchor], "anchor_position": n_ctx,
        "block_inputs": [texts[anchor]] + ["[mask]"] * (slots - 1), "block_positions": pos.tolist(),
        "k": k, "read_from_slot": slot, "dflash_block_size": k + 1, "dflash_back": from_dflash_block_size(k + 1),
        "columns": [texts[i] for i in ctx_ids] + [f"slot {i}" for i in range(slots)],
        "attention": torch.cat([att[:, n_ctx - shown:n_ctx], att[:, n_ctx:]], 1).tolist(),
        "earlier_context_share": att[:, :n_ctx - shown].sum(-1).tolist(),
        "block_share": att[:, n_ctx:].sum(-1).tolist(),
        "proposals": rnd.proposed_tokens, "accepted": rnd.accepted,
    }


MOSTLY, ALMOST_NONE = 0.5, 0.05   # a slot "reads the block" past half its attention; below 0.05 it barely looks


def _slots(indices: list[int]) -> str:
    """'slot 0', 'slots 1 and 2', 'slots 1, 2 and 3', with slot 0 named as the anchor's.

    >>> _slots([0]), _slots([1, 2]), _slots([0, 2, 3])
    ("the anchor's slot 0", 'slots 1 and 2', "slots 0 (the anchor's), 2 and 3")
    """
    if indices == [0]:
        return "the anchor's slot 0"
    names = [f"{i} (the anchor's)" if i == 0 else str(i) for i in indices]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return ("slot " if len(names) == 1 else "slots ") + listed


def block_attention_note(shares: list[float]) -> str:
    """What a measured share of attention on the block, per slot, shows. The mask lets every slot
    see every slot; whether the trained weights use that is the measurement's to say.

    >>> block_attention_note([0.33, 0.0, 0.0, 0.0])  # doctest: +NORMALIZE_WHITESPACE
    "Measured: the anchor's slot 0 puts 0.33 of its attention on the block, slots 1, 2 and 3 almost none (below
    0.005). Every slot may see every slot, but in this round every slot reads mostly the target's context
    features."
    >>> block_attention_note([0.7, 0.6])  # doctest: +NORMALIZE_WHITESPACE
    "Measured: the anchor's slot 0 puts 0.70 of its attention on the block, slot 1 0.60. In this round every
    slot reads mostly the block itself."
    """
    low = [i for i, x in enumerate(shares) if x < ALMOST_NONE]
    phrases = [f"{_slots([i])} {shares[i]:.2f}" for i in range(len(shares)) if i not in low]
    if phrases:   # the first phrase carries the verb for the rest
        who, value = phrases[0].rsplit(" ", 1)
        phrases[0] = f"{who} puts {value} of its attention on the block"
    if low:
        most = max(shares[i] for i in low)
        bound = f"at most {most:.2f}" if most >= 0.005 else "below 0.005"   # not "at most 0.00"
        phrases.append(f"{_slots(low)} almost none ({bound})" if phrases else
                       f"{_slots(low)} put{'s' if len(low) == 1 else ''} almost none of "
                       f"{'its' if len(low) == 1 else 'their'} attention on the block ({bound})")
    block = [i for i, x in enumerate(shares) if x >= MOSTLY]
    context = [i for i, x in enumerate(shares) if x < MOSTLY]
    if not block:
        tail = "Every slot may see every slot, but in this round every slot reads mostly the target's context features."
    elif not context:
        tail = "In this round every slot reads mostly the block itself."
    else:
        tail = (f"In this round {_slots(block)} read{'s' if len(block) == 1 else ''} mostly the block, "
                f"{_slots(context)} mostly the target's context features.")
    return f"Measured: {', '.join(phrases)}. {tail}"


# --- 2. the verifier needs the true q ---------------------------------------------------------

def emitted_distribution(p: torch.Tensor, q_drawn: torch.Tensor, q_used: torch.Tensor) -> torch.Tensor:
    """What ratio-and-residual verification emits when x ~ q_drawn but the verifier uses q_used.

    Accepted: q_drawn(x) · min(1, p(x)/q_used(x)); the rejected mass is redrawn from
    normalize(max(0, p − q_used)). With q_used = q_drawn this rebuilds p exactly.

    >>> p, q = torch.tensor([0.7, 0.3]), torch.tensor([0.5, 0.5])
    >>> [round(v, 6) for v in emitted_distribution(p, q, q).tolist()]
    [0.7, 0.3]
    >>> [round(v, 6) for v in emitted_distribution(p, q, torch.tensor([0.25, 0.75])).tolist()]
    [0.8, 0.2]
    """
    p, q_drawn, q_used = p.double(), q_drawn.double(), q_used.double()
    ratio = torch.where(q_used > 0, (p / q_used.clamp_min(1e-300)).clamp(max=1.0), torch.ones_like(p))
    accepted = q_drawn * ratio
    return accepted + (1.0 - accepted.sum()).clamp_min(0.0) * residual(p, q_used)


def total_variation(a: torch.Tensor, b: torch.Tensor) -> float:
    """½ Σ |a − b|.

    >>> total_variation(torch.tensor([0.8, 0.2], dtype=torch.float64), torch.tensor([0.7, 0.3], dtype=torch.float64))
    0.1
    """
    return round(0.5 * float((a.double() - b.double()).abs().sum()), 12)


@torch.no_grad()
def wrong_q(models, prompt: str, sampling: SamplingSettings, drafter: str = "dspark", top: int = 6) -> dict:
    """At the second position of a block drafted after `prompt` (first proposal: the drafter's
    likeliest token), the target's p and three candidate q's handed to the verifier:

      true       the corrected distribution (Markov head) after temperature and top-k: what was drawn from
      raw        the same logits before temperature and top-k
      marginal   the backbone alone (no Markov head), after the same transform

    For each: the exact emitted distribution and its total-variation distance from p.
    """
    d, ids = prepared(models, prompt, drafter)
    # a two-slot block throughout: inside a bidirectional block, slot 1's prediction depends on
    # how many mask slots follow it
    first = int(d.score(ids, [0, 0])["sequential_dists"][0].argmax())
    s = d.score(ids, [first, 0])
    corrected, backbone = s["sequential_dists"][1].double(), s["marginal_dists"][1].double()
    logits = models.target(torch.tensor([ids + [first]], device=models.device)).logits[0, -1]
    def dist(x):   # in float64, renormalised: float32 rounding would otherwise show as a distance
        x = x.double().cpu()
        return x / x.sum()
    p = dist(transform(logits, sampling))
    true_q = dist(transform(corrected.log(), sampling))
    cases = {"true": true_q, "raw": dist(corrected), "marginal": dist(transform(backbone.log(), sampling))}
    out = {"first": models.token_text[first], "p": p, "cases": {}}
    order = torch.topk(p, top).indices.tolist()
    out["labels"] = [models.token_text[i] for i in order]
    for name, q_used in cases.items():
        e = emitted_distribution(p, true_q, q_used)
        out["cases"][name] = {"distance": total_variation(e, p), "emitted_top": [float(e[i]) for i in order],
                              "same_as_true": bool(torch.equal(q_used, true_q))}
    out["p_top"] = [float(p[i]) for i in order]
    return out


EXACT = 1e-9   # a total-variation distance this small is float64 rounding, not a distance
WRONG_Q = {"raw": "the q taken before temperature and top-k", "marginal": "the backbone's marginal (no Markov head)"}


def wrong_q_note(first: str, cases: dict) -> str:
    """What wrong_q's distances show, each q by name; a wrong q that happens to land on p here is
    said to, never counted as a distance.

    >>> print(wrong_q_note(" the", {"true": {"distance": 0.0}, "raw": {"distance": 0.1234},
    ...                              "marginal": {"distance": 0.0}}))  # doctest: +NORMALIZE_WHITESPACE
    Measured after the first proposal '␣the': with the true q the emitted distribution is p exactly (distance
    0.000000). Handed the q taken before temperature and top-k, it lies 0.1234 from p; handed the backbone's
    marginal (no Markov head), it is p here too (distance 0.000000): at this history that q happens to give
    the same verdicts, which is luck, not a guarantee.
    """
    def said(name):
        d = cases[name]["distance"]
        if d > EXACT:
            return f"handed {WRONG_Q[name]}, it lies {d:.4f} from p"
        return (f"handed {WRONG_Q[name]}, it is p here too (distance {d:.6f}): at this history that q happens to "
                "give the same verdicts, which is luck, not a guarantee")
    true = cases["true"]["distance"]
    head = (f"with the true q the emitted distribution is p exactly (distance {true:.6f})" if true <= EXACT else
            f"with the true q the emitted distribution lies {true:.6f} from p, which is more than rounding")
    rest = "; ".join(said(n) for n in WRONG_Q if n in cases)
    return f"Measured after the first proposal {md_token(first)}: {head}. {rest[0].upper() + rest[1:]}."


def wrong_q_answer(distance: float | None) -> str:
    """The prediction's answer ("handed the backbone's q without the Markov head, does the output still follow p
    exactly?") from the computed distance of that case (wrong_q's "marginal"): no where it moved away from p by
    more than float64 rounding (EXACT), yes at this history otherwise; the source's rule where nothing was computed.

    >>> wrong_q_answer(0.0312), wrong_q_answer(3e-13)
    ('**Answer, measured here: no.**', '**Answer, measured here: yes, at this history.**')
    >>> wrong_q_answer(None)
    '**Answer, from the source: no.**'
    """
    if distance is None:   # no live case on this machine: the source's claim, labelled as such
        return "**Answer, from the source: no.**"
    return "**Answer, measured here: no.**" if distance > EXACT else "**Answer, measured here: yes, at this history.**"


# --- 3. numerics: float32 against bfloat16 ----------------------------------------------------

def bf16_twin(models):
    """The same target weights loaded in bfloat16, as a model set with no drafters."""
    target = load_model(Path(models.paths["target"]), models.device, torch.bfloat16)
    return replace(models, target=target, dtype=torch.bfloat16, drafter_models={})


def first_difference(a: list, b: list) -> int | None:
    """Index of the first place two sequences differ (a length difference counts), or None.

    >>> first_difference([1, 2, 3], [1, 5, 3]), first_difference([1, 2], [1, 2]), first_difference([1], [1, 2])
    (1, None, 1)
    """
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


@torch.no_grad()
def precision_search(models, twin, prompts: list[str], n: int, drafter: str | None = "dspark", k: int = 4) -> list[dict]:
    """Greedy decoding of each prompt by the float32 target, the bfloat16 twin and (if `drafter`)
    speculative decoding in float32. Where float32 and bfloat16 part, the float32 logit gap
    between the two tokens chosen there (a small gap is what rounding can flip)."""
    rows = []
    for prompt in prompts:
        a = generate(models, prompt, Settings.greedy(None, n)).new_ids
        b = generate(twin, prompt, Settings.greedy(None, n)).new_ids
        spec = generate(models, prompt, Settings.greedy(drafter, n, k=k)).new_ids if drafter else None
        at = first_difference(a, b)
        row = {"prompt": prompt, "float32": models.tokenizer.decode(a), "bfloat16": models.tokenizer.decode(b),
               "first_difference": at, "speculative_equals_plain": None if spec is None else spec == a, "gap": None}
        if at is not None and at < len(a) and at < len(b):
            ids, _ = encode_prompt(models, prompt, Settings.greedy(None, n))
            logits = models.target(torch.tensor([ids + a[:at]], device=models.device)).logits[0, -1].float()
            row.update(gap=float(logits[a[at]] - logits[b[at]]), float32_token=models.token_text[a[at]],
                       bfloat16_token=models.token_text[b[at]])
        rows.append(row)
    return rows


def precision_note(rows: list[dict], new_tokens: int) -> str:
    """What `precision_search` found, counted from its rows: on how many prompts greedy float32 and bfloat16
    parted, and, where none did, that the source's claim stands without a live case here.

    >>> print(precision_note([{"first_difference": None}, {"first_difference": 3}], 12))
    **Measured here, now:** greedy float32 and bfloat16 outputs differ on **1 of 2** prompts (12 new tokens each).
    >>> print(precision_note([{"first_difference": None}], 12))  # doctest: +NORMALIZE_WHITESPACE
    **Measured here, now:** greedy float32 and bfloat16 outputs differ on **0 of 1** prompts (12 new tokens each).
    No prompt here shows a flipped greedy token; the claim stands as the source states it, without a live case on
    these models.
    """
    parted = sum(r["first_difference"] is not None for r in rows)
    said = (f"**Measured here, now:** greedy float32 and bfloat16 outputs differ on **{parted} of {len(rows)}** "
            f"prompts ({new_tokens} new tokens each).")
    if parted:
        return said
    return said + (" No prompt here shows a flipped greedy token; the claim stands as the source states it, without "
                   "a live case on these models.")


def speculative_note(same: list[bool], source: str) -> str:
    """How many prompts' speculative greedy output (float32) equalled plain float32 greedy decoding, counted from
    precision_search's "speculative_equals_plain", and what that does and does not show. Equal everywhere is a
    measurement, never a guarantee; a difference is what the source says computation graphs can do.

    >>> print(speculative_note([True, True], "*Checks*"))  # doctest: +ELLIPSIS
    Speculative greedy decoding in float32 equals plain float32 greedy decoding on **2 of 2** prompts. That is ...
    >>> print(speculative_note([True, False, False], "*Checks*"))  # doctest: +ELLIPSIS
    Speculative greedy decoding in float32 equals plain float32 greedy decoding on **1 of 3** prompts and parts ...
    """
    n, equal = len(same), sum(same)
    graphs = (f"the check is one forward over k + 1 tokens, a different computation graph from a one-token step, and "
              f"{source} notes that different computation graphs can change floating-point results")
    if equal == n:
        return (f"Speculative greedy decoding in float32 equals plain float32 greedy decoding on **{n} of {n}** "
                f"prompts. That is this app's measurement on these prompts, not a guarantee: {graphs}.")
    if equal == 0:
        return (f"Speculative greedy decoding in float32 parts from plain float32 greedy decoding on **every one of "
                f"the {n}** prompts (equal on 0 of {n}): {graphs}, and one changed greedy token sends the rest of "
                "the text along another path.")
    return (f"Speculative greedy decoding in float32 equals plain float32 greedy decoding on **{equal} of {n}** "
            f"prompts and parts from it on {n - equal}: {graphs}, and one changed greedy token sends the rest of "
            "the text along another path.")


def precision_table(rows: list[dict]) -> list[dict]:
    r"""The table under the precision notes, one row a prompt, in the notes' own terms: the new token where
    float32 and bfloat16 part counted from 1 as `parted_note` says it ("none" where they never part), and
    the prompt as itself (a table cell renders markdown, so `def __init__` would turn bold).

    >>> rows = precision_table([{"prompt": "def __init__(self):", "first_difference": 9, "speculative_equals_plain": True},
    ...                         {"prompt": "Hi", "first_difference": None, "speculative_equals_plain": None}])
    >>> print(*rows[0].values(), "|", *rows[1].values())
    'def \_\_init\_\_\(self\)\:' 10 yes | 'Hi' none -
    """
    said = {True: "yes", False: "no", None: "-"}
    return [{"prompt": md_token(r["prompt"], spaces=False),
             "float32 and bfloat16 part at new token": "none" if r["first_difference"] is None
             else str(r["first_difference"] + 1),
             "speculative = plain": said[r["speculative_equals_plain"]]} for r in rows]


def parted_note(row: dict) -> str:
    """Where one prompt's float32 and bfloat16 outputs parted, the two tokens chosen there (shown literally:
    token text is the models' and the prompt's, never markup) and their float32 logit gap as measured, with no
    word judging its size.

    >>> print(parted_note({"prompt": "He said", "first_difference": 2, "float32_token": " the",
    ...                    "bfloat16_token": " a*", "gap": 0.0421}))
    'He said' parts at new token **3**: float32 takes '␣the', bfloat16 '␣a\\*'. The float32 logits of the two tokens chosen there differ by **0.042**.
    """
    gap = (f" The float32 logits of the two tokens chosen there differ by **{row['gap']:.3f}**."
           if row.get("gap") is not None else "")
    return (f"{md_token(row['prompt'], spaces=False)} parts at new token **{row['first_difference'] + 1}**: float32 "
            f"takes {md_token(row.get('float32_token', ''))}, bfloat16 {md_token(row.get('bfloat16_token', ''))}.{gap}")


# --- 4. confidence scheduling (this app's worked example) --------------------------------------

SCHEDULE_EXAMPLE = {"strong": [0.95, 0.95, 0.9], "doubtful": [0.4, 0.5],
                    "overconfident": [0.95, 0.95],   # what an uncalibrated head might say for the doubtful one
                    "sps": (10.0, 9.5, 9.0, 8.6, 8.2, 7.0, 6.0)}


def real_theta(lengths: list[int], true_confidences: list[list[float]], sps) -> float:
    """Θ an allocation really earns: τ from the true survival of what was admitted, times SPS(B).

    >>> round(real_theta([1, 0], [[0.5], [0.9]], (4.0, 3.0, 2.0)), 3)   # τ = 2 + 0.5, B = 3
    5.0
    """
    tau = len(lengths) + sum(sum(survival(c)[:n]) for n, c in zip(lengths, true_confidences))
    return tau * sps[len(lengths) + sum(lengths) - 1]


def schedule_example(ex: dict = SCHEDULE_EXAMPLE) -> dict:
    """The stopping scheduler on two requests, with calibrated and with overconfident scores.

    >>> r = schedule_example()
    >>> r["calibrated"]["lengths"], r["overconfident"]["lengths"]
    ([3, 0], [2, 2])
    >>> round(r["calibrated"]["real_theta"], 2), round(r["overconfident"]["believed_theta"], 2), round(r["overconfident"]["real_theta"], 2)
    (38.25, 39.94, 31.17)
    """
    true = [ex["strong"], ex["doubtful"]]
    out = {"survival": {"strong": survival(ex["strong"]), "doubtful": survival(ex["doubtful"])}}
    for name, told in (("calibrated", true), ("overconfident", [ex["strong"], ex["overconfident"]])):
        r = algorithm1(told, ex["sps"])
        out[name] = {"lengths": r["lengths"], "believed_theta": r["best_theta"],
                     "real_theta": real_theta(r["lengths"], true, ex["sps"]),
                     "order": [(s.request, s.position, s.a, s.kept) for s in r["steps"]]}
    return out


# --- 5. measuring a system --------------------------------------------------------------------

def per_token(rounds: list[tuple[float, int]]) -> dict:
    """ms per committed token over (ms, tokens) rounds: total over total, against the mean of ratios.

    >>> per_token([(14.0, 4), (14.0, 1)])   # the source's 14 ms round, committing 4 and then 1
    {'total_over_total': 5.6, 'mean_of_rounds': 8.75}
    """
    total = sum(ms for ms, _ in rounds) / sum(n for _, n in rounds)
    mean = sum(ms / n for ms, n in rounds) / len(rounds)
    return {"total_over_total": round(total, 6), "mean_of_rounds": round(mean, 6)}


def elapsed(intervals: list[tuple[float, float]]) -> dict:
    """Phases as (start, end) ms: their summed durations against the elapsed time they cover.

    >>> elapsed([(0, 3), (2, 12), (12, 13)])   # drafting overlaps verification by 1 ms
    {'sum_of_phases': 14, 'critical_path': 13}
    """
    covered, end = 0, None
    for s, e in sorted(intervals):
        start = s if end is None else max(s, end)
        covered += max(0, e - start)
        end = e if end is None else max(end, e)
    return {"sum_of_phases": sum(e - s for s, e in intervals), "critical_path": covered}


def trace_timing(trace) -> dict:
    """A live trace's clocks: ms per token both ways, time to first token, whole request.

    Time to first token here is the target's prefill plus the first round; the request time
    adds every round. Neither counts queueing or model loading (one request at a time).
    """
    rounds = [(r.total_ms, len(r.emitted)) for r in trace.rounds]
    decode = sum(ms for ms, _ in rounds)
    return {**per_token(rounds), "rounds": len(rounds), "tokens": sum(n for _, n in rounds),
            "prefill_ms": trace.prefill_ms, "first_token_ms": trace.prefill_ms + rounds[0][0],
            "request_ms": trace.prefill_ms + decode}


# --- 6. DLoop ---------------------------------------------------------------------------------

@torch.no_grad()
def dloop_round(models, prompt: str, k: int = 3, threshold: float = -8.0, stages: int = 3,
                drafter: str = "dloop") -> dict:
    """One live DLoop round: per stage its anchor (stage 1: the newest committed token; later
    stages: the previous stage's last proposal), proposals, Σ log q and the gate's decision."""
    g = Generation(models, prompt, Settings.greedy(drafter, k * stages + 1, k=k,
                                                   loop_threshold=threshold, max_stages=stages))
    newest = models.token_text[g.committed[-1]]
    r = g.step()
    rows = []
    for i, st in enumerate(r.drafter_info["stages"]):
        anchor = newest if i == 0 else r.proposed_tokens[st["start"] - 1]
        rows.append({"stage": i + 1, "anchor": anchor, "proposals": r.proposed_tokens[st["start"]:st["end"]],
                     "logprob_sum": st["logprob_sum"], "continue": st["continue"]})
    return {"stages": rows, "accepted": r.accepted, "proposed": len(r.proposed), "threshold": threshold,
            "max_stages": stages}


def gate_reason(stage: int, logprob_sum: float, threshold: float, max_stages: int) -> str:
    """Why DLoop's gate decided as it did after `stage`: another stage runs only while Σ log q >= g
    and fewer than S stages ran (the drafter's own rule), so a confident last stage still stops.

    >>> gate_reason(1, -2.97, -8.0, 3)
    'draft another stage: Σ log q = −2.97 ≥ g = −8'
    >>> gate_reason(3, -2.97, -8.0, 3)
    'check now: Σ log q = −2.97 ≥ g = −8 would open the gate, but S = 3 stages is the limit'
    >>> gate_reason(2, -9.1, -8.0, 3)
    'check now: Σ log q = −9.10 < g = −8'
    >>> gate_reason(3, -9.1, -8.0, 3)
    'check now: Σ log q = −9.10 < g = −8 (and S = 3 stages is the limit)'
    """
    lp, g = f"{logprob_sum:.2f}".replace("-", "−"), f"{threshold:g}".replace("-", "−")
    limit = stage >= max_stages
    if logprob_sum >= threshold and not limit:
        return f"draft another stage: Σ log q = {lp} ≥ g = {g}"
    if logprob_sum >= threshold:
        return f"check now: Σ log q = {lp} ≥ g = {g} would open the gate, but S = {max_stages} stages is the limit"
    return f"check now: Σ log q = {lp} < g = {g}" + (f" (and S = {max_stages} stages is the limit)" if limit else "")


def training_cost(paths: dict) -> dict | None:
    """Seconds per training step from this app's training records (training.json beside each
    drafter): one-stage DSpark steps against loop-aware steps. None where a record is missing."""
    def record(name):
        folder = paths.get(name)
        f = Path(folder) / "training.json" if folder else None
        return json.loads(f.read_text()) if f and f.is_file() else None
    one, loop = record("dspark"), record("dloop")
    if not one or not loop:
        return None
    return {"one_stage_s": one["train_seconds"] / one["steps"], "loop_s": loop["train_seconds"] / loop["steps"],
            "loop_stages": loop["loop_stages"], "loop_steps": loop["steps"], "one_stage_steps": one["steps"]}


def precision_on_presets(models, prompts: list[str], new_tokens: int) -> list:
    """`precision_search` of the target against its bfloat16 twin on `prompts`, with DSpark (float32)
    beside them where the set has it."""
    drafter = "dspark" if "dspark" in models.drafter_models else None
    return precision_search(models, bf16_twin(models), prompts, new_tokens, drafter)


def timed_trace(models, prompt: str, drafter: str, new_tokens: int, k: int = 4):
    """One greedy generation of `drafter` at k, whose rounds `trace_timing` reads."""
    return generate(models, prompt, Settings.greedy(drafter, new_tokens, k=k))
