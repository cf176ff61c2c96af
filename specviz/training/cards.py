"""Write a model card (README.md) beside each shipped model.

Facts come from the training run (training.json) and from measurements made here when the
card is written: held-out perplexity and its curve over the run, the median time of one decode
step, greedy sample generations, and whether the greedy continuations of the held-out workload
prompts loop or parse (specviz.training.readable). Nothing is typed in by hand.

What it leaves out: benchmark numbers of speculative decoding (see `python -m specviz bench`).
"""
import json
import platform
import statistics
import time
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from specviz.generator.drafters.autoregressive import TransformersDecoder
from specviz.generator.models import ready
from specviz.lessons.workloads import WORKLOADS
from specviz.training.calibrate import TEMPERATURES
from specviz.training.lm import heldout_perplexity
from specviz.training.readable import most_repeated, parses

SAMPLE_PROMPTS = ["The best way to learn is to", "It was a fine morning, and Elizabeth",
                  'Anne asked, "Could you open the window?" "Yes,', "def read_lines(path):\n    "]


def data_note(corpus: dict) -> str:
    """The cards' paragraph on training text and licences, from the corpus stage's facts."""
    return f"""Training text, two workloads:

- prose: Jane Austen's six novels (public domain) as shipped in Debian's `r-cran-janeaustenr`
  package (package code MIT-licensed, Julia Silge), plus 6,000 short dialogue exchanges written
  for this project from templates in `specviz/training/corpus.py` (ours, same licence as this
  repository), in which requests are answered "Yes, of course." or "Yes, no problem." with
  equal odds. 2% of documents are held out; the rest is written {corpus['prose_repeats']} times into the mix.
- code: the Python standard library as shipped in Debian's `{corpus['code_package']}`,
  licence {corpus['code_license']}. {corpus['code_files']} files train; {len(corpus['heldout_code_files'])} whole files are held out
  ({', '.join(f'`{f}`' for f in corpus['heldout_code_files'])}).""" + (f"""
  The core modules Debian ships apart, `{corpus['core_package']}` ({corpus['core_files']} files, same
  licence), only train.""" if "core_package" in corpus else "") + f"""

Prose is {corpus['prose_share_of_characters']:.0%} of the training characters."""


@torch.no_grad()
def decode_step_ms(decoder, vocab_size: int, context: int = 128, repeats: int = 30) -> float:
    """Median milliseconds of one cached single-token forward at a given context length.

    `decoder` is the way the engine runs the model (feed / crop / length): transformers'
    forward for the target, the written-out forward for a Llama drafter.
    """
    decoder.feed(torch.randint(0, vocab_size, (context,)).tolist())
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        decoder.feed([int(torch.randint(0, vocab_size, ()))])
        times.append((time.perf_counter() - t) * 1e3)
        decoder.crop(context)
    return statistics.median(times)


@torch.no_grad()
def continuations(model, tok, prompts: list[str], n_new: int = 64) -> list[str]:
    """Greedy continuations of `prompts` (the text after each prompt), after an end-of-text token
    as the engine starts a document."""
    out = []
    for prompt in prompts:
        ids = torch.tensor([[tok.eos_token_id] + tok.encode(prompt)])
        y = model.generate(ids, do_sample=False, max_new_tokens=n_new, eos_token_id=tok.eos_token_id,
                           pad_token_id=tok.eos_token_id)
        out.append(tok.decode(y[0, ids.size(1):]))
    return out


def readable_facts(model, tok) -> dict:
    """The held-out workload prompts' greedy 64-token continuations: each one's most repeated
    word 4-gram count, and whether each code one parses to its last complete line."""
    prose = continuations(model, tok, WORKLOADS["prose"])
    code = continuations(model, tok, WORKLOADS["code"])
    return {"prose_most_repeated_4gram": [most_repeated(t)[0] for t in prose],
            "code_parses": [parses(p, t) for p, t in zip(WORKLOADS["code"], code)],
            "code_most_repeated_4gram": [most_repeated(t)[0] for t in code]}


def curve_rows(curve: list[dict], last: int = 6) -> str:
    """The card's table of the run's last held-out perplexities.

    >>> print(curve_rows([{"step": 500, "tokens": 2048000, "prose": 40.1, "code": 80.2}]))
    | step | tokens | prose | code |
    |---|---|---|---|
    | 500 | 2,048,000 | 40.1 | 80.2 |
    """
    rows = [f"| {p['step']} | {p['tokens']:,} | {p['prose']} | {p['code']} |" for p in curve[-last:]]
    return "\n".join(["| step | tokens | prose | code |", "|---|---|---|---|"] + rows)


def write_card(model_dir: Path, heldout: dict[str, Path], corpus: dict, role: str,
               decoder=TransformersDecoder) -> dict:
    """Measure a causal LM on each workload's held-out text ({workload: file}) and write its
    card; `decoder` is how the engine runs it (see decode_step_ms)."""
    facts = json.loads((model_dir / "training.json").read_text())
    model = ready(AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32), torch.device("cpu"))
    tok = AutoTokenizer.from_pretrained(model_dir)
    ppl = {w: heldout_perplexity(model, tok, txt) for w, txt in heldout.items()}
    step = decode_step_ms(decoder(model), model.config.vocab_size)
    facts.update(heldout_perplexity=ppl, decode_step_ms=round(step, 2), readable=readable_facts(model, tok))
    gens = [p + c for p, c in zip(SAMPLE_PROMPTS, continuations(model, tok, SAMPLE_PROMPTS, n_new=40))]
    r = facts["readable"]
    curve = facts.get("heldout_curve") or []
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
| distilled from | {facts['distilled_from'] + ' (loss: KL divergence from its next-token distribution, no corpus cross-entropy)' if facts['distilled_from'] else '-'} |
| held-out perplexity | {', '.join(f'{w}: {v}' for w, v in ppl.items())} |
| one decode step | {facts['decode_step_ms']} ms (median, 128-token context, as the engine runs it on this CPU, measured when this card was written) |

## Data and licence

{data_note(corpus)}
""" + (f"""
## Held-out perplexity over the run's last stretch

{curve_rows(curve)}
""" if curve else "") + f"""
## Readable?

Greedy 64-token continuations of the {len(r['code_parses'])} held-out prompts of each workload (`specviz.lessons.workloads`):
prose that loops (a word 4-gram 3 or more times): {sum(c >= 3 for c in r['prose_most_repeated_4gram'])} of {len(r['prose_most_repeated_4gram'])}
(most repeated 4-gram counts {r['prose_most_repeated_4gram']}); code that parses to its last complete line:
{sum(r['code_parses'])} of {len(r['code_parses'])}; code that loops: {sum(c >= 3 for c in r['code_most_repeated_4gram'])} of {len(r['code_most_repeated_4gram'])}
(most repeated 4-gram counts {r['code_most_repeated_4gram']}).

## Greedy samples

""" + "\n".join(f"{i + 1}. `{g!r}`" for i, g in enumerate(gens)) + "\n"
    (model_dir / "README.md").write_text(card)
    (model_dir / "training.json").write_text(json.dumps(facts, indent=2))
    return facts


def expected_calibration_error(pairs: list[tuple[float, bool]], bins: int = 10) -> float:
    """ECE of predicted survival probabilities against what happened (equal-width bins).

    >>> expected_calibration_error([(0.9, True), (0.9, False)])
    0.4
    """
    total, err = len(pairs), 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        inside = [(a, s) for a, s in pairs if lo <= a < hi or (b == bins - 1 and a == 1.0)]
        if inside:
            conf = sum(a for a, _ in inside) / len(inside)
            acc = sum(s for _, s in inside) / len(inside)
            err += len(inside) / total * abs(conf - acc)
    return round(err, 4)


def heldout_prompts(heldout_txt: Path, tok, n: int = 12, length: int = 24, offset: int = 0) -> list[str]:
    """Prompts of `length` tokens cut every 150 tokens from held-out documents longer than
    400 characters (book passages or code files, not dialogue); `offset` skips the first
    ones, so calibration and measurement can differ."""
    docs = [d for d in heldout_txt.read_text(encoding="utf-8").split("<|endoftext|>") if len(d) > 400]
    cuts = [tok.decode(ids[i:i + length]) for ids in map(tok.encode, docs) for i in range(0, len(ids) - length, 150)]
    return cuts[offset:offset + n]


def text_row(texts: list[dict]) -> str:
    """The card's cell for target-text files, from their facts.

    >>> text_row([{"file": "a.npy", "sequences": 2, "seq_len": 8, "prompt_len": 3, "temperature": 0.0}])
    'a.npy (2 sequences of 8 tokens, greedy): corpus windows of 3 tokens continued by the target (`python -m specviz train target-text`)'
    """
    files = ", ".join(f"{t['file']} ({t['sequences']} sequences of {t['seq_len']} tokens, "
                      + ("greedy" if t["temperature"] == 0 else f"temperature {t['temperature']}") + ")" for t in texts)
    return (f"{files}: corpus windows of {texts[0]['prompt_len']} tokens continued by the target "
            "(`python -m specviz train target-text`)")


def phases_rows(facts: dict) -> str:
    """The card's rows for the training phases (specviz.training.block), from training.json."""
    mix, long_shape = facts["mix"], facts["long_shape"]
    said = {"long": (f"{long_shape['batch']} rows of {facts['text']['long'][0]['seq_len']} tokens x "
                     f"{long_shape['anchors_per_sequence']} anchors, uniform over the row; {text_row(facts['text']['long'])}"),
            "mix": (f"{mix['batch']} rows of {mix['length']} tokens x {mix['anchors']} anchors, {mix['on_policy']:.0%} of them "
                    f"right after a first-guess miss; {mix['corpus_share']:.0%} corpus windows of both workloads, the rest "
                    f"the first {mix['length']} tokens of {text_row(facts['text']['mix'])}")}
    rows = []
    for ph in facts["phases"]:
        what = "loop-aware steps on the drafting mix, from the DSpark drafter" if ph.get("loop_aware") else (
            "long target text" if ph["text"] == "long" else "the drafting mix")
        rows.append(f"| training: {what} | {ph['steps']} steps, peak lr {ph['lr']}, {ph['seconds'] / 60:.0f} min on 2 CPU "
                    f"cores; {said[ph['text']]} |")
    return "\n".join(rows)


def saturation_note(temperatures: list[float] | None) -> str:
    """Say what a temperature at the top of the calibration grid means, where one is."""
    top = round(TEMPERATURES[-1], 2)
    if not temperatures or top not in temperatures:
        return ""
    return (f"\n\nA temperature of {top} is the top of the calibration grid: at those positions the confidence\n"
            "logit carries little information about survival, so the best fit flattens c_k towards 0.5.")


DEPTHS = (16, 32, 48)   # the cards' buckets of depth into the continuation: new tokens 0-15, 16-31, 32-47


def first_kept_after(generations: list[list[tuple[int, int]]], k: int) -> dict:
    """Of the rounds that drafted all k proposals, the share whose first proposal was kept, by how the
    round before it in the same generation ended: "correction" (it kept fewer proposals than it
    drafted) or "full block" (it kept them all); None where no round started so. `generations` holds
    each generation's rounds as (accepted, drafted) pairs. A drafter's rounds nearly all start at a
    correction, where the target has just overruled it.

    >>> first_kept_after([[(4, 4), (1, 4), (0, 4), (2, 4)]], 4)
    {'correction': 0.5, 'full block': 1.0}
    """
    kept = {"correction": [], "full block": []}
    for rounds in generations:
        for (before, drafted_before), (accepted, drafted) in zip(rounds, rounds[1:]):
            if drafted == k:
                kept["full block" if before == drafted_before else "correction"].append(accepted > 0)
    return {how: round(sum(v) / len(v), 3) if v else None for how, v in kept.items()}


def acceptance(models, name: str, prompts: list[str], k: int, new_tokens: int = 48,
               survival: list | None = None) -> dict:
    """Drafter `name` at block size `k`, greedy, over `prompts`: {"length": committed tokens per
    target pass, "by_position": conditional acceptance of proposals 1..k
    (`specviz.lessons.parallel.conditional_acceptance`, full-width rounds), "by_depth": tokens per
    pass of the rounds that start within each bucket of DEPTHS new tokens, "first_kept_after": the first
    proposal's acceptance after a correction and after a full block (`first_kept_after`)}, rounded to 3 places.
    Each proposal's predicted survival and whether it survived are appended to `survival` as
    (a_k, accepted) pairs when given.

    A round that accepts nothing still commits the target's own token, so a length is at least 1
    and at most k + 1 (all k proposals and the bonus token).
    """
    from specviz.generator.engine import Generation
    from specviz.generator.settings import Settings
    from specviz.lessons.parallel import conditional_acceptance
    rounds, depth, generations = [], {d: [0, 0] for d in DEPTHS}, []     # bucket -> [tokens, rounds]
    for p in prompts:
        trace = Generation(models, p, Settings(drafter=name, k=k, max_new_tokens=new_tokens)).run()
        rounds += trace.rounds
        generations.append([(r.accepted, len(r.proposed)) for r in trace.rounds])
        for r in trace.rounds:
            start = r.committed_before - len(trace.prompt_ids)
            bucket = next((d for d in DEPTHS if start < d), DEPTHS[-1])
            depth[bucket][0] += r.committed_after - r.committed_before
            depth[bucket][1] += 1
        if survival is not None:
            survival += [(a, r.accepted > i) for r in trace.rounds
                         for i, a in enumerate(r.drafter_info.get("survival", [])[:len(r.proposed)])]
    tokens = sum(r.committed_after - r.committed_before for r in rounds)
    return {"length": round(tokens / len(rounds), 3),
            "by_position": [None if c is None else round(c, 3) for c in
                            conditional_acceptance([r.accepted for r in rounds if len(r.proposed) == k], k)],
            "by_depth": {f"{d - 16}-{d - 1}": round(t / n, 3) if n else None for d, (t, n) in depth.items()},
            "first_kept_after": first_kept_after(generations, k)}


def block_card(models, name: str, heldout: dict[str, Path], corpus: dict, ks=(2, 4, 8),
               new_tokens: int = 48, ece_uncalibrated: float | None = None) -> dict:
    """Measure a block drafter on each workload's held-out prompts ({workload: file}) and write
    its card: acceptance length by workload and block size (greedy) and, with a confidence
    head, the calibration of prefix survival over both workloads."""
    prompts = {w: heldout_prompts(txt, models.tokenizer) for w, txt in heldout.items()}
    pairs = []
    measured = {w: {k: acceptance(models, name, prompts[w], k, new_tokens, pairs) for k in ks} for w in prompts}
    lengths = {w: {k: m["length"] for k, m in by_k.items()} for w, by_k in measured.items()}
    model = models.drafter_models[name]
    path = Path(models.paths["drafters"][name])
    facts = json.loads((path / "training.json").read_text())
    facts.update(heldout_acceptance_length=lengths,
                 heldout_acceptance_by_position={w: m[4]["by_position"] for w, m in measured.items() if 4 in m},
                 heldout_acceptance_by_depth={w: m[4]["by_depth"] for w, m in measured.items() if 4 in m},
                 survival_ece=expected_calibration_error(pairs) if pairs else None,
                 survival_ece_uncalibrated=ece_uncalibrated,
                 confidence_temperature=model.config.confidence_temperature)
    (path / "training.json").write_text(json.dumps(facts, indent=2))
    c = model.config
    heads = "Markov head (rank %d) and confidence head" % c.markov_rank if c.markov_rank else "none (plain DFlash)"
    (path / "README.md").write_text(f"""# specviz {facts['name']}: block drafter

A `BlockDrafterModel` (`specviz/generator/drafters/block_model.py`) trained against the frozen target in
`models/target` by `python -m specviz train block`. It has no embeddings or LM head of its own:
it borrows the target's. Context features: target layers {c.target_layers}, concatenated,
projected and normalised.

| fact | value |
|---|---|
| parameters (own) | {facts['parameters']:,} |
| draft layers x width | {c.num_layers} x {c.hidden_size} |
| DSpark heads | {heads} |
| loop-aware training | {'yes: %d stages unrolled, first and last supervised' % facts['loop_stages'] if c.loop_aware else 'no'} |
| block k, gamma | {facts['block_size_k']}, {facts['gamma']} (loss weight exp(-(i-1)/gamma) at block position i) |
{phases_rows(facts)}
| held-out acceptance length (greedy, committed tokens per target pass) | {'; '.join(w + ': ' + ', '.join(f'k={k}: {v}' for k, v in a.items()) for w, a in lengths.items())} |
| held-out acceptance by position at k = 4 (conditional: kept / reached) | {'; '.join(f'{w}: ' + ' / '.join('-' if v is None else f'{v:.2f}' for v in m[4]['by_position']) for w, m in measured.items() if 4 in m)} |
| held-out tokens per pass at k = 4, by where the round starts (new tokens) | {'; '.join(f'{w}: ' + ', '.join(f'{d}: {v}' for d, v in m[4]['by_depth'].items()) for w, m in measured.items() if 4 in m)} |
| survival calibration (ECE of a_k vs measured survival) | {facts['survival_ece'] if facts['survival_ece'] is not None else '- (no confidence head)'}{f" (before temperature scaling: {ece_uncalibrated}; temperatures per position {model.config.confidence_temperature})" if ece_uncalibrated is not None else ''} |

Acceptance measured on {' and '.join(f'{len(p)} held-out {w} prompts' for w, p in prompts.items())} of 24 tokens, {new_tokens} new tokens each,
{'run as DLoop (S = 3, g = -2)' if name.startswith('dloop') else 'one stage per round'}.{saturation_note(model.config.confidence_temperature)}

## Data and licence

{data_note(corpus)}
""")
    return facts
