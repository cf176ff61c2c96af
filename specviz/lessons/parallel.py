"""The parallel drafter's "of problem": per-position marginals against the Markov head.

A block drafter predicts every position of its block in one pass, each blind to what the
others sample. With two equally good replies ("of course", "no problem") the product of the
per-position marginals gives the crossbred "of problem" real probability; DSpark's Markov head
conditions each position on the token actually drawn before it.

  phrase_table      P(phrase) as a product of marginals vs sequentially (Markov head)
  sample_blocks     how often each phrase appears among sampled blocks
  by_position       how often the proposal at block position i is accepted (suffix decay)
  draft_cost        median drafting ms per round against block size (autoregressive vs one pass)

What it leaves out: the confidence head and the scheduler (lesson 4).
"""
import collections
import statistics

import torch

from specviz.generator.engine import Generation, Settings
from specviz.lessons.cost import warm_up

PHRASES = [" of course", " no problem", " of problem", " no course"]
DIALOGUE_PROMPT = 'Anne asked, "Could you open the window?" "Yes,'


@torch.no_grad()
def prepared(models, prompt: str, drafter: str):
    """A block drafter primed on `prompt` (the target's context features included) and the ids."""
    g = Generation(models, prompt, Settings(drafter=drafter, block_size=1, max_new_tokens=1))
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


def by_position(models, prompts: list[str], drafter: str, k: int, max_new_tokens: int = 32) -> list[float]:
    """Fraction of full-width rounds whose proposal at position i (1..k) was accepted."""
    hits, rounds = [0] * k, 0
    for prompt in prompts:
        t = Generation(models, prompt, Settings.greedy(drafter, max_new_tokens, block_size=k)).run()
        for r in t.rounds:
            if len(r.proposed) == k:
                rounds += 1
                for i in range(r.accepted):
                    hits[i] += 1
    if not rounds:
        raise ValueError("no round drafted a full block; use more tokens or a smaller k")
    return [h / rounds for h in hits]


def draft_cost(models, prompt: str, drafters: list[str], ks: list[int], max_new_tokens: int = 24,
               repeats: int = 2) -> list[dict]:
    """Median drafting ms per round for each drafter and block size.

    A warm-up run per drafter, then `repeats` passes over every (drafter, k), interleaved, so a
    busy moment of a shared machine (a browser drawing the last chart) falls on all of them
    alike; the median is over every round of every pass.
    """
    for d in drafters:
        warm_up(models, prompt, Settings.greedy(d, max_new_tokens, block_size=ks[0]))
    times = {(d, k): [] for d in drafters for k in ks}
    for _ in range(repeats):
        for d, k in times:
            trace = Generation(models, prompt, Settings.greedy(d, max_new_tokens, block_size=k)).run()
            times[d, k] += [r.draft_ms for r in trace.rounds]
    return [{"drafter": d, "k": k, "draft_ms": statistics.median(t)} for (d, k), t in times.items()]
