"""The parallel drafter's "of problem": per-position marginals against the Markov head.

A block drafter predicts every position of its block in one pass, each blind to what the
others sample. With two equally good replies ("of course", "no problem") the product of the
per-position marginals gives the crossbred "of problem" real probability; DSpark's Markov head
conditions each position on the token actually drawn before it. For DSpark, the "product of
marginals" is the product of its backbone's softmaxes with the Markov head left out: what its
positions would say if blind, not the marginals of what DSpark samples.

  phrase_table      P(phrase) as a product of (backbone) marginals vs sequentially (Markov head)
  sample_blocks     how often each phrase appears among sampled blocks
  by_position       conditional acceptance by block position: among rounds that kept positions
                    1..i-1, the share that kept position i (the unconditional share falls for
                    any drafter, since a position can only be kept after every one before it)
  draft_cost        drafting ms per round against block size (autoregressive vs one pass), median
                    and range over alternated runs
  cost_steps        per block size, whether drafting cost more than at the block size before,
                    less, or the same within this machine's noise
  explain_cost      what the drafting-cost measurement says, drafter by drafter, with the reason
  answer            the prediction's option that sampled counts of "of problem" support

What it leaves out: the confidence head and the scheduler (lesson 4).
"""
import collections
import statistics

import torch

from specviz.generator.engine import Generation
from specviz.generator.settings import Settings
from specviz.lessons.protocol import alternate, beats, spread

PHRASES = [" of course", " no problem", " of problem", " no course"]
DIALOGUE_PROMPT = 'Anne asked, "Could you open the window?" "Yes,'


@torch.no_grad()
def prepared(models, prompt: str, drafter: str):
    """A block drafter primed on `prompt` (the target's context features included) and the ids."""
    g = Generation(models, prompt, Settings(drafter=drafter, k=1, max_new_tokens=1))
    if not hasattr(g.drafter, "score"):
        raise ValueError(f"{drafter!r} is not a block drafter")
    return g.drafter, g.committed


def phrase_table(models, prompt: str, drafter: str, phrases: list[str] = PHRASES) -> list[dict]:
    """For each phrase: its tokens, the product of per-position marginals, the sequential probability."""
    d, ids = prepared(models, prompt, drafter)
    rows = []
    for text in phrases:
        toks = models.tokenizer.encode(text)
        s = d.score(ids, toks)
        rows.append({"phrase": text, "tokens": [models.token_text[t] for t in toks],
                     "product_of_marginals": float(torch.tensor(s["marginal"]).prod()),
                     "sequential": float(torch.tensor(s["sequential"]).prod())})
    return rows


@torch.no_grad()
def sample_blocks(models, prompt: str, drafter: str, n: int, k: int, seed: int = 0) -> collections.Counter:
    """Texts of n blocks of k tokens sampled the way the drafter proposes (temperature 1)."""
    d, ids = prepared(models, prompt, drafter)
    gen = torch.Generator().manual_seed(seed)

    def pick(logits):
        q = torch.softmax(logits.float(), -1)
        return int(torch.multinomial(q.cpu(), 1, generator=gen)), q

    counts = collections.Counter()
    for _ in range(n):
        draft = d.propose(ids, k, pick)
        counts[models.tokenizer.decode(draft.tokens)] += 1
    return counts


def conditional_acceptance(accepted: list[int], k: int) -> list[float | None]:
    """Per position i = 1..k: rounds that kept i proposals or more, over rounds that kept i - 1 or more.

    None where no round reached position i (nothing to divide).

    >>> conditional_acceptance([0, 1, 3, 3], k=3)   # 3 of 4 keep position 1, 2 of 3 keep 2, 2 of 2 keep 3
    [0.75, 0.6666666666666666, 1.0]
    >>> conditional_acceptance([0, 0], k=2)
    [0.0, None]
    """
    reached = [sum(a >= i for a in accepted) for i in range(k)]
    kept = [sum(a >= i + 1 for a in accepted) for i in range(k)]
    return [h / n if n else None for h, n in zip(kept, reached)]


def samples_of(models, prompt: str, drafters: list[str], n: int, k: int = 2) -> dict:
    """`sample_blocks` for each drafter: {drafter: Counter of its n sampled blocks}."""
    return {d: sample_blocks(models, prompt, d, n, k=k) for d in drafters}


def decay_of(models, prompts: list[str], drafters: list[str], k: int, progress=None) -> dict:
    """`by_position` for each drafter in turn: {"rates": {drafter: pooled}, "per_prompt": {drafter: ...}}.
    `progress(done, total, drafter)` counts prompts over all the drafters."""
    rates, per_prompt = {}, {}
    for i, d in enumerate(drafters):
        told = None if progress is None else (
            lambda done, total, i=i, d=d: progress(i * total + done, len(drafters) * total, d))
        measured = by_position(models, prompts, d, k=k, progress=told)
        rates[d], per_prompt[d] = measured["pooled"], measured["per_prompt"]
    return {"rates": rates, "per_prompt": per_prompt}


def by_position(models, prompts: list[str], drafter: str, k: int, max_new_tokens: int = 32,
                progress=None) -> dict:
    """Conditional acceptance by position (see `conditional_acceptance`) over the full-width
    greedy rounds of decoding each prompt: {"pooled": over every prompt's rounds, "per_prompt": one
    list per prompt, whose spread `decay_note` reads}. A round whose stop rule dropped its last match
    counts the proposals it kept. `progress(done, total)` is told before each prompt is decoded."""
    each = []
    for i, prompt in enumerate(prompts):
        if progress:
            progress(i, len(prompts))
        t = Generation(models, prompt, Settings.greedy(drafter, max_new_tokens, k=k)).run()
        each.append([r.accepted for r in t.rounds if len(r.proposed) == k])
    accepted = [a for rounds in each for a in rounds]
    if not accepted:
        raise ValueError("no round drafted a full block; use more tokens or a smaller k")
    return {"pooled": conditional_acceptance(accepted, k),
            "per_prompt": [conditional_acceptance(rounds, k) for rounds in each]}


def decay_note(per_prompt: list[list[float | None]], name: str) -> str:
    """Whether this run shows suffix decay for one drafter: its conditional acceptance at position 1 against
    the furthest position that at least two prompts' rounds reached, each as the median and range over the prompts.
    It fell (or rose) only where the two ranges do not overlap; greedy decoding is deterministic, so the
    spread is between prompts, not between runs.

    >>> print(decay_note([[0.9, 0.8, 0.5], [0.8, 0.7, 0.4], [1.0, 0.6, 0.3]], "DFlash"))
    DFlash: conditional acceptance fell from position 1 to position 3, beyond the spread between the prompts (0.90, 0.80–1.00 over 3 prompts → 0.40, 0.30–0.50): suffix decay in this run.
    >>> print(decay_note([[0.9, 0.8], [0.6, 0.9], [0.7, None]], "DFlash"))
    DFlash: conditional acceptance at position 1 (0.70, 0.60–0.90 over 3 prompts) and position 2 (0.85, 0.80–0.90 over 2 prompts) is within the spread between the prompts: this run shows no decay beyond it.
    """
    def at(i):
        got = [p[i] for p in per_prompt if p[i] is not None]
        return spread(got) if got else None

    def said(s):
        return f"{s.median:.2f}, {s.low:.2f}–{s.high:.2f} over {s.n} prompts"

    reached = [i for i in range(1, len(per_prompt[0]) if per_prompt else 0) if (s := at(i)) is not None and s.n >= 2]
    first = at(0) if per_prompt else None
    if first is None or first.n < 2 or not reached:
        return (f"{name}: too few prompts reached two positions of the block to give a spread, so this run cannot "
                "say whether acceptance falls along it.")
    last = reached[-1]
    end = at(last)
    order = beats(end, first)
    if order.startswith("within"):
        return (f"{name}: conditional acceptance at position 1 ({said(first)}) and position {last + 1} ({said(end)}) "
                "is within the spread between the prompts: this run shows no decay beyond it.")
    moved, verdict = ("fell", "suffix decay in this run") if order == "below" else ("rose", "no suffix decay here")
    shown = said(end).split(" over ")[0] if end.n == first.n else said(end)
    return (f"{name}: conditional acceptance {moved} from position 1 to position {last + 1}, beyond the spread between "
            f"the prompts ({said(first)} → {shown}): {verdict}.")


def draft_cost(models, prompt: str, drafters: list[str], ks: list[int], max_new_tokens: int = 16,
               repeats: int = 3, progress=None, label=str) -> list[dict]:
    """Drafting ms per round for each drafter and block size: {"drafter", "k", "draft_ms", "spread"}.

    Measured under the protocol of specviz.lessons.protocol: every (drafter, k) decodes `prompt`
    once per repeat, alternated, after an uncounted warm-up of each, so a busy moment of a shared
    machine (a browser drawing the last chart) falls on all of them alike. A run's value is its
    median round's drafting time; "spread" is the median and range over the runs, and "draft_ms"
    its median. `progress(done, total, name)` is told before each run, named "<label(drafter)>, k = <k>"
    (a page passes its plain label for each drafter).
    """
    def timed(d: str, k: int) -> float:
        trace = Generation(models, prompt, Settings.greedy(d, max_new_tokens, k=k)).run()
        return statistics.median(r.draft_ms for r in trace.rounds)

    sides = {(d, k): (lambda d=d, k=k: timed(d, k)) for d in drafters for k in ks}
    runs = alternate(sides, repeats,
                     progress and (lambda done, total, key: progress(done, total, f"{label(key[0])}, k = {key[1]}")))
    spreads = {key: spread(times) for key, times in runs.items()}
    return [{"drafter": d, "k": k, "draft_ms": s.median, "spread": s} for (d, k), s in spreads.items()]


def cost_steps(rows: list[dict]) -> list[str]:
    """Per row of `draft_cost`, how its drafting time compares with the same drafter's at the block
    size before: "more", "less", "within this machine's noise" (their ranges overlap), or "–" for
    a drafter's first block size. A measured "less" is a busy moment the runs did not average out:
    a bigger block is never less work.

    >>> runs = {1: [2.0, 2.2], 2: [1.9, 2.1], 4: [7.0, 8.0]}
    >>> rows = [{"drafter": "ar", "k": k, "spread": spread(ms)} for k, ms in runs.items()]
    >>> cost_steps(rows)
    ['–', "within this machine's noise", 'more']
    """
    out = []
    for before, row in zip([None] + rows, rows):
        if before is None or before["drafter"] != row["drafter"]:
            out.append("–")
            continue
        compared = beats(row["spread"], before["spread"])
        out.append({"above": "more", "below": "less"}.get(compared, compared))
    return out


def explain_cost(rows: list[dict], one_pass: list[str], label=str, device: str = "cpu") -> str:
    """What a `draft_cost` measurement says: for each drafter, whether its drafting time at the
    largest block size is above its time at the smallest beyond the runs' spread, and why.
    `one_pass` names the drafters that draft a block in one forward; `device` is the models'
    device type ("cpu", "cuda").

    Why: an autoregressive drafter runs one forward per proposal, so its cost grows with k on any
    hardware. A one-pass drafter runs one forward whatever k, but that forward computes every
    position of the block: a GPU computes a small block's positions at once, so there its cost
    would barely depend on k, while a CPU's few cores work through them, so here it can grow.

    >>> rows = [{"drafter": d, "k": k, "spread": spread(ms)} for d, k, ms in
    ...         [("ar", 1, [1.0, 1.2]), ("ar", 8, [9.9, 13.9]), ("dflash", 1, [1.5, 1.7]), ("dflash", 8, [3.0, 8.8])]]
    >>> print(explain_cost(rows, ["dflash"]))  # doctest: +NORMALIZE_WHITESPACE
    Drafting cost grew with k beyond this machine's noise for ar (1.10 ms at k = 1, 11.90 ms at k = 8) and for
    dflash (1.60 ms at k = 1, 5.90 ms at k = 8). The autoregressive drafter runs one forward per proposal, so its
    cost grows with k on any hardware. A one-pass drafter runs one forward whatever k, but that forward computes
    every position of the block, and on this machine's CPU the positions are worked through by a few cores:
    its cost grew with the block here. On a GPU, which computes a small block's positions at once, it would
    barely depend on k.
    >>> rows[3]["spread"] = spread([1.4, 2.0])
    >>> explain_cost(rows, ["dflash"]).split(". ")[1]
    "Within this machine's noise from k = 1 to k = 8: dflash (1.60 ms, 1.70 ms)"
    """
    by_drafter = {}
    for row in rows:
        by_drafter.setdefault(row["drafter"], []).append(row)
    verdicts = {"above": [], "below": [], "within": []}
    for d, rs in by_drafter.items():
        first, last = min(rs, key=lambda r: r["k"]), max(rs, key=lambda r: r["k"])
        said = beats(last["spread"], first["spread"])
        verdicts["within" if said.startswith("within") else said].append(
            (d, f"{first['spread'].median:.2f} ms", f"{last['spread'].median:.2f} ms", first["k"], last["k"]))

    def listed(items, with_k):
        parts = [f"{label(d)} ({a} at k = {k0}, {b} at k = {k1})" if with_k else f"{label(d)} ({a}, {b})"
                 for d, a, b, k0, k1 in items]
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and for " + parts[-1]

    said = []
    if verdicts["above"]:
        said.append(f"Drafting cost grew with k beyond this machine's noise for {listed(verdicts['above'], True)}.")
    for verdict, text in (("within", "Within this machine's noise"), ("below", "Less at the larger k, a busy moment "
                                                                                 "the runs did not average out")):
        if verdicts[verdict]:
            k0, k1 = verdicts[verdict][0][3:]
            said.append(f"{text} from k = {k0} to k = {k1}: "
                        f"{listed(verdicts[verdict], False).replace(' and for ', ' and ')}.")
    grew = {d for d, *_ in verdicts["above"]}
    passes = [d for d in by_drafter if d in one_pass]
    grown, flat = [d for d in passes if d in grew], [d for d in passes if d not in grew]
    names = lambda ds: " and ".join(label(d) for d in ds)   # noqa: E731
    if any(d not in one_pass for d in by_drafter):
        said.append("The autoregressive drafter runs one forward per proposal, so its cost grows with k on any "
                    "hardware.")
    if passes:
        said.append("A one-pass drafter runs one forward whatever k, but that forward computes every position of "
                    "the block, and ")
        # which one-pass drafters grew, by name when they did not all do the same
        here = ("" if not flat else f" for {names(grown)}, not beyond the noise for {names(flat)}")
        if device == "cpu":
            said[-1] += ("on this machine's CPU the positions are worked through by a few cores: its cost "
                         + (f"grew with the block here{here}." if grown else "did not grow beyond the noise here."))
            said.append("On a GPU, which computes a small block's positions at once, it would barely depend on k.")
        else:
            said[-1] += ("a GPU computes a small block's positions at once, so its cost barely depends on k"
                         + (f", though here it grew beyond the noise{here}." if grown else "."))
    return " ".join(said)


def answer(counts: dict, drafter: str, n: int, options: list[str], label=str) -> str:
    """The option of lesson 3's prediction ("out of n blocks `drafter` samples, how many start with
    “of problem”?") that sampled `counts` ({drafter: {phrase: count}}) support, with the counts:
    options[0] ("none") when none did, options[2] ("about as many as “of course”") when at least
    half as many as “of course”, else options[1] ("a few").

    >>> counts = {"dflash": {" of course": 60, " of problem": 35, " no course": 50}, "dspark": {" of course": 90}}
    >>> print(answer(counts, "dflash", 200, ["none", "a few", "about as many as “of course”"]))
    ... # doctest: +NORMALIZE_WHITESPACE
    **Answer: about as many as “of course”**: dflash drew “of problem” 35 times in 200 blocks, against 60 “of
    course” (and “no course” 50 times); dspark drew it 0 times. Each position of dflash is right on its own; the
    pair is wrong because position 2 never learns which word position 1 drew.
    """
    c = counts[drafter]
    bad, good = c.get(" of problem", 0), c.get(" of course", 0)
    option = options[0] if bad == 0 else options[2] if 2 * bad >= good else options[1]
    others = "; ".join(f"{label(d)} drew it {counts[d].get(' of problem', 0)} times" for d in counts if d != drafter)
    why = (f" Each position of {label(drafter)} is right on its own; the pair is wrong because position 2 never "
           "learns which word position 1 drew." if bad else
           f" This run drew none from {label(drafter)}: at these probabilities a crossbred pair can still be rare.")
    return (f"**Answer: {option}**: {label(drafter)} drew “of problem” {bad} times in {n} blocks, against {good} "
            f"“of course” (and “no course” {c.get(' no course', 0)} times)" + (f"; {others}." if others else ".") + why)
