"""Why speculative sampling is lossless, on distributions small enough to see whole.

Accepted proposals supply q(x) * min(1, p(x)/q(x)) = min(p(x), q(x)) of each token's mass;
rejections (total mass 1 - sum min(p, q)) are replaced from normalize(max(0, p - q)), which
supplies exactly the missing max(0, p(x) - q(x)). Together they rebuild p.

Target-draw matching is another valid coupling: draw y ~ p, keep the proposal only if y equals
it, emit y either way. Same output distribution p; acceptance sum p*q instead of sum min(p, q).

`next_token_distributions` reads the real p and q after a prompt from the running models;
`coarse` keeps the few tokens worth drawing and lumps the rest into one "other" bar (the rules
hold exactly on that coarser vocabulary too).

What it leaves out: more than one position (a round's later positions follow the same rule,
conditioned on the earlier ones being accepted).
"""
import random
from dataclasses import replace

import torch

from specviz.generator.engine import Generation
from specviz.generator.sampling import SamplingSettings, transform
from specviz.generator.settings import Settings
from specviz.generator.verify import accept_probability
from specviz.lessons.protocol import Spread, within_noise

# Lesson 2's sampling: temperature 1 keeps p and q as the models give them, and top-k 40 drops the long
# tail that wrote made-up words ("be herVEREurton; and to aYour"). scripts/sampling_defaults.py, over every
# preset, plain and speculative, seeds 1 to 3: the share of a continuation's words found in the held-out
# text rose from a median 0.875 (lowest 0.40) to 0.935 (lowest 0.75), while the first preset's acceptance
# Σ min(p, q) stayed 0.71 and its distance between p and q 0.29 (every preset: 0.12 to 0.99), so the
# lesson's rebuild still has a residual to show. Temperature 0.8 or top-p 0.9 read no better and took
# some presets' acceptance to 0.03.
READABLE = SamplingSettings(temperature=1.0, top_k=40)
RULES = ("ratio", "match")
RULE_NAMES = {"ratio": "ratio + residual", "match": "target-draw matching"}


def check_distribution(d: list[float], name: str) -> list[float]:
    """Validate a probability vector typed by a learner; returns it normalised.

    >>> check_distribution([2, 2], "p")
    [0.5, 0.5]
    """
    if not d or any(x < 0 for x in d) or sum(d) <= 0:
        raise ValueError(f"{name} needs non-negative values with a positive sum")
    s = float(sum(d))
    return [x / s for x in d]


def rebuild(p: list[float], q: list[float]) -> dict:
    """The two sources of each token's output mass under the ratio-and-residual rule.

    >>> r = rebuild([0.2, 0.8], [0.4, 0.6])   # the seed's 0.4/0.2 example, first token
    >>> r["accepted"], [round(x, 3) for x in r["residual_part"]], r["accept_rate"]
    ([0.2, 0.6], [0.0, 0.2], 0.8)
    >>> [round(x, 9) for x in r["rebuilt"]]
    [0.2, 0.8]
    """
    accepted = [min(a, b) for a, b in zip(p, q)]
    positive = [max(0.0, a - b) for a, b in zip(p, q)]
    rate = sum(accepted)
    total = sum(positive)
    normalized = [x / total for x in positive] if total > 0 else list(p)
    residual_part = [(1 - rate) * x for x in normalized]
    return {"accepted": accepted, "residual": normalized, "residual_part": residual_part,
            "accept_rate": round(rate, 12), "rebuilt": [a + r for a, r in zip(accepted, residual_part)]}


def acceptance_rate(p: list[float], q: list[float], rule: str) -> float:
    """Probability that one proposal is kept: sum min(p, q) (ratio) or sum p*q (match).

    >>> acceptance_rate([0.7, 0.3], [0.5, 0.5], "ratio"), acceptance_rate([0.7, 0.3], [0.5, 0.5], "match")
    (0.8, 0.5)
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}")
    terms = [min(a, b) for a, b in zip(p, q)] if rule == "ratio" else [a * b for a, b in zip(p, q)]
    return round(sum(terms), 12)


def _draw(d: list[float], rng: random.Random) -> int:
    u, acc = rng.random(), 0.0
    for i, x in enumerate(d):
        acc += x
        if u < acc:
            return i
    return max(i for i, x in enumerate(d) if x > 0)


def simulate(p: list[float], q: list[float], n: int, rule: str, seed: int = 0) -> dict:
    """n single-position rounds: draft x ~ q, verify with `rule`; the emitted token of each.

    Returns {"outputs": [...], "accepted": [...]} (token indices and whether x was kept).

    >>> s = simulate([0.2, 0.8], [0.4, 0.6], 20000, "ratio", seed=3)
    >>> round(s["outputs"].count(0) / 20000, 1)
    0.2
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}")
    rng = random.Random(seed)
    resid = rebuild(p, q)["residual"]
    outputs, accepted = [], []
    for _ in range(n):
        x = _draw(q, rng)
        if rule == "ratio":
            ok = rng.random() < accept_probability(p[x], q[x])
            y = x if ok else _draw(resid, rng)
        else:
            y = _draw(p, rng)
            ok = y == x
        outputs.append(y)
        accepted.append(ok)
    return {"outputs": outputs, "accepted": accepted}


def histogram(outputs: list[int], size: int) -> list[float]:
    """Empirical frequency of each token index.

    >>> histogram([0, 1, 1, 1], 3)
    [0.25, 0.75, 0.0]
    """
    counts = [0] * size
    for o in outputs:
        counts[o] += 1
    return [c / len(outputs) for c in counts] if outputs else counts


def rule_rows(p: list[float], q: list[float], runs: dict[str, dict]) -> list[dict]:
    """Lesson 2's table: per rule, the share of proposals kept (measured and exact) and how far the
    emitted tokens' histogram is from p (total variation, ½ Σ |freq − p|).

    >>> runs = {"ratio": {"outputs": [0, 0, 1, 1], "accepted": [True, False, True, True]},
    ...         "match": {"outputs": [0, 1, 1, 1], "accepted": [True, False, False, True]}}
    >>> [(r["proposal kept (measured)"], r["distance from p (total variation)"]) for r in rule_rows([0.5, 0.5], [0.5, 0.5], runs)]
    [(0.75, 0.0), (0.5, 0.25)]
    """
    rows = []
    for rule in RULES:
        outputs, accepted = runs[rule]["outputs"], runs[rule]["accepted"]
        freqs = histogram(outputs, len(p))
        rows.append({"rule": RULE_NAMES[rule], "proposal kept (measured)": round(sum(accepted) / len(accepted), 3),
                     "proposal kept (exact)": acceptance_rate(p, q, rule),
                     "distance from p (total variation)": round(0.5 * sum(abs(a - b) for a, b in zip(freqs, p)), 4)})
    return rows


def distances_by_rounds(p: list[float], outputs: list[int]) -> list[tuple[int, float]]:
    """How far the histogram of the first n emitted tokens is from p (total variation), for n = 10, 100,
    1000, … and the whole run: [(n, distance)], read off one run as it accumulates.

    >>> distances_by_rounds([0.5, 0.5], [0] * 10 + [0, 1] * 45)
    [(10, 0.5), (100, 0.05)]
    """
    counts = [10 ** e for e in range(1, 8) if 10 ** e < len(outputs)] + [len(outputs)]
    return [(n, round(0.5 * sum(abs(a - b) for a, b in zip(histogram(outputs[:n], len(p)), p)), 4)) for n in counts]


def distance_sentence(by_rule: dict[str, list[tuple[int, float]]]) -> str:
    """What the measured distances from p did as rounds accumulated, rule by rule (distances_by_rounds):
    shrank (the last below the first) or not, with the numbers; a run of one count says nothing yet.

    >>> distance_sentence({"ratio": [(10, 0.3), (1000, 0.02)], "match": [(10, 0.2), (1000, 0.03)]})
    'The distance from p shrank as rounds accumulated, for both rules: ratio 0.300 after 10 rounds → 0.020 after 1,000; match 0.200 → 0.030.'
    >>> distance_sentence({"ratio": [(10, 0.1), (100, 0.12)], "match": [(10, 0.2), (100, 0.05)]})
    'The distance from p did not shrink here for ratio (0.100 after 10 rounds, 0.120 after 100): over so few rounds a histogram is mostly its own noise. It shrank for match (0.200 → 0.050). More rounds bring every rule closer on average, not at every count.'
    >>> distance_sentence({"ratio": [(10, 0.0), (100, 0.0)], "match": [(10, 0.2), (100, 0.05)]})
    'The distance from p was 0 at every count, from 10 to 100 rounds, for ratio: the histogram matched p exactly each time. The distance from p shrank as rounds accumulated for match: 0.200 after 10 rounds → 0.050 after 100.'
    >>> print(distance_sentence({"ratio": [(10, 0.3)]}))
    After only 10 rounds the distance from p (ratio 0.300) is mostly the histogram's own noise: draw more rounds to see whether it shrinks.
    """
    first = next(iter(by_rule.values()))
    if len(first) < 2:
        found = "; ".join(f"{rule} {d[0][1]:.3f}" for rule, d in by_rule.items())
        return (f"After only {first[0][0]:,} rounds the distance from p ({found}) is mostly the histogram's own "
                "noise: draw more rounds to see whether it shrinks.")
    (n0, _), (n1, _) = first[0], first[-1]
    # a histogram that matched p at every count cannot shrink: "did not shrink" would read as a failure
    exact = [rule for rule, d in by_rule.items() if all(x == 0 for _, x in d)]
    said = (f"The distance from p was 0 at every count, from {n0:,} to {n1:,} rounds, for " + " and ".join(exact)
            + ": the histogram matched p exactly each time.") if exact else ""
    by_rule = {rule: d for rule, d in by_rule.items() if rule not in exact}
    if not by_rule:
        return said
    return (said + " " if said else "") + _direction(by_rule, n0, n1)


def _direction(by_rule: dict[str, list[tuple[int, float]]], n0: int, n1: int) -> str:
    """distance_sentence for rules whose distance was not 0 throughout: shrank, or did not."""
    shrank = {rule: d[-1][1] < d[0][1] for rule, d in by_rule.items()}
    pairs = {rule: (d[0][1], d[-1][1]) for rule, d in by_rule.items()}
    if all(shrank.values()) and len(by_rule) == 1:   # the one rule left beside a rule that stayed at 0
        (r, (a, b)), = pairs.items()
        return f"The distance from p shrank as rounds accumulated for {r}: {a:.3f} after {n0:,} rounds → {b:.3f} after {n1:,}."
    if all(shrank.values()):
        rules = list(by_rule)
        parts = [f"{rules[0]} {pairs[rules[0]][0]:.3f} after {n0:,} rounds → {pairs[rules[0]][1]:.3f} after {n1:,}"]
        parts += [f"{r} {pairs[r][0]:.3f} → {pairs[r][1]:.3f}" for r in rules[1:]]
        both = "both rules" if len(rules) == 2 else "every rule"
        return f"The distance from p shrank as rounds accumulated, for {both}: {'; '.join(parts)}."
    stuck = [r for r in by_rule if not shrank[r]]
    moved = [r for r in by_rule if shrank[r]]
    out = "The distance from p did not shrink here for " + " or ".join(
        f"{r} ({pairs[r][0]:.3f} after {n0:,} rounds, {pairs[r][1]:.3f} after {n1:,})" for r in stuck)
    out += ": over so few rounds a histogram is mostly its own noise." if n1 < 10_000 else \
        ": the histogram's noise at these counts is as large as the distance left."
    if moved:
        out += " It shrank for " + ", ".join(f"{r} ({pairs[r][0]:.3f} → {pairs[r][1]:.3f})" for r in moved) + "."
    return out + " More rounds bring every rule closer on average, not at every count."


def kept_band(accepted: list[bool], exact: float) -> Spread:
    """The measured share of proposals kept, with the band its draws alone make likely: two binomial standard
    errors of the exact rate, sqrt(a(1 - a) / n), either side (about 95%). The exact rate sets the width, so a
    lucky all-kept run of 10 does not claim a band of zero.

    >>> b = kept_band([True] * 7 + [False] * 3, 0.5)
    >>> b.median, round(b.low, 3), round(b.high, 3), b.n
    (0.7, 0.384, 1.016, 10)
    """
    n = len(accepted)
    share, se = sum(accepted) / n, (exact * (1 - exact) / n) ** 0.5
    return Spread(share, share - 2 * se, share + 2 * se, n)


def acceptance_sentence(p: list[float], q: list[float], runs: dict[str, dict]) -> str:
    """How often each rule kept the drafter's token, exactly and in the measured runs ({rule: simulate(...)}):
    different in expectation and measurably so; different in expectation but inside the draws' noise; or the
    same in expectation (Σ min(p, q) = Σ p·q, as when p or q puts all its mass on one token).

    >>> runs = {"ratio": {"accepted": [True] * 80 + [False] * 20}, "match": {"accepted": [True] * 50 + [False] * 50}}
    >>> print(acceptance_sentence([0.7, 0.3], [0.5, 0.5], runs))  # doctest: +NORMALIZE_WHITESPACE
    They differ in how often the drafter's token is kept, and did here: the ratio rule kept 0.800 of 100
    proposals (Σ min(p, q) = 0.800), matching 0.500 (Σ p·q = 0.500). Same distribution, different acceptance.
    >>> one_hot = {"ratio": {"accepted": [True, False]}, "match": {"accepted": [False, True]}}
    >>> print(acceptance_sentence([1.0, 0.0], [0.5, 0.5], one_hot))  # doctest: +NORMALIZE_WHITESPACE
    Here the two rules keep the drafter's token equally often (Σ min(p, q) = Σ p·q = 0.500, since p puts all its
    mass on one token), and measured 0.500 and 0.500 of 2 proposals: same distribution, same acceptance.
    """
    exact = {rule: acceptance_rate(p, q, rule) for rule in RULES}
    band = {rule: kept_band(runs[rule]["accepted"], exact[rule]) for rule in RULES}
    ratio, match, n = band["ratio"].median, band["match"].median, band["ratio"].n
    if abs(exact["ratio"] - exact["match"]) < 1e-9:   # equal in expectation: any measured gap is the draws'
        sharp = "p" if max(p) > 1 - 1e-9 else "q" if max(q) > 1 - 1e-9 else "p and q"
        why = f", since {sharp} puts all its mass on one token" if sharp != "p and q" else ""
        return (f"Here the two rules keep the drafter's token equally often (Σ min(p, q) = Σ p·q = "
                f"{exact['ratio']:.3f}{why}), and measured {ratio:.3f} and {match:.3f} of {n:,} proposals: same "
                "distribution, same acceptance.")
    measured = (f"the ratio rule kept {ratio:.3f} of {n:,} proposals (Σ min(p, q) = {exact['ratio']:.3f}), "
                f"matching {match:.3f} (Σ p·q = {exact['match']:.3f})")
    if within_noise(band["ratio"], band["match"]):   # a gap this small in so few draws is no finding
        return (f"They differ in how often the drafter's token is kept, but not measurably here: {measured}, a "
                f"difference within the noise of {n:,} draws. Draw more rounds to see it.")
    return (f"They differ in how often the drafter's token is kept, and did here: {measured}. Same distribution, "
            "different acceptance.")


def lossless_answer(p: list[float], q: list[float], runs: dict[str, dict]) -> str:
    """Lesson 2's answer below the draws: p, exactly (rebuild), then what these runs did: the distance from p
    as rounds accumulated (distance_sentence) and how often each rule kept the proposal (acceptance_sentence).

    >>> outputs = [0] * 10 + [0, 1] * 45       # all one token for 10 rounds, then even
    >>> runs = {"ratio": {"outputs": outputs, "accepted": [True] * 100},
    ...         "match": {"outputs": outputs, "accepted": [True, False] * 50}}
    >>> print(lossless_answer([0.5, 0.5], [0.5, 0.5], runs))  # doctest: +ELLIPSIS
    **Answer: p.** Both rules emit the target's distribution exactly. The distance from p shrank ... different acceptance.
    """
    distances = {RULE_NAMES[rule]: distances_by_rounds(p, runs[rule]["outputs"]) for rule in RULES}
    return ("**Answer: p.** Both rules emit the target's distribution exactly. " + distance_sentence(distances) + " "
            + acceptance_sentence(p, q, runs))


def same_seed_caption(plain_text: str, speculative_text: str) -> str:
    """What lesson 2's three continuations show about one random seed: whether plain and speculative sampling
    with it gave the same text, compared character for character, and that either outcome is allowed.

    >>> same_seed_caption(" and then", " and then")
    'Measured here, now: with the same random seed, plain and speculative sampling gave the same text. Either outcome is allowed.'
    >>> same_seed_caption(" and then", " and so")
    'Measured here, now: with the same random seed, plain and speculative sampling gave different texts. Either outcome is allowed.'
    """
    same = "the same text" if plain_text == speculative_text else "different texts"
    return (f"Measured here, now: with the same random seed, plain and speculative sampling gave {same}. Either outcome "
            "is allowed.")


@torch.no_grad()
def readable(temperature: float) -> SamplingSettings:
    """Lesson 2's sampling (READABLE) at the page's temperature.

    >>> readable(0.5)
    SamplingSettings(temperature=0.5, top_k=40, top_p=1.0)
    """
    return replace(READABLE, temperature=temperature)


def next_token_distributions(models, prompt: str, drafter: str, sampling: SamplingSettings):
    """The target's p and the drafter's q for the token after `prompt` (full vocabulary).

    The drafter is driven through its own interface (prefill, then one proposal whose
    distribution the pick callback captures), so every drafter works the same way. q is None
    when the drafter proposes nothing here (prompt lookup without an earlier match).
    """
    g = Generation(models, prompt, Settings(drafter=drafter, k=1, max_new_tokens=1))
    p = transform(g.peek(), sampling)

    def pick(logits):   # only q matters here, not which token the drafter would take
        q = transform(logits, sampling)
        return int(q.argmax()), q

    draft = g.drafter.propose(g.committed, 1, pick)
    return p.cpu(), (draft.q[0].cpu() if draft.q else None)


def coarse(p: torch.Tensor, q: torch.Tensor, token_text: list[str], n: int = 6, other: bool = True) -> dict:
    """The union of the n likeliest tokens under p and under q: the rest is lumped into one
    "(other)" bucket, or (other=False) left out and both distributions renormalised over the
    tokens kept (p and q conditioned on the next token being one of them).

    Returns {"labels", "ids", "p", "q"} as plain lists ordered by p (other last).
    """
    top = list(dict.fromkeys(torch.topk(p, n).indices.tolist() + torch.topk(q, n).indices.tolist()))
    top.sort(key=lambda i: -float(p[i]))
    ps, qs = [float(p[i]) for i in top], [float(q[i]) for i in top]
    if not other:
        if sum(ps) <= 0 or sum(qs) <= 0:
            raise ValueError("one model gives these tokens no probability at all")
        return {"labels": [token_text[i] for i in top], "ids": top,
                "p": [x / sum(ps) for x in ps], "q": [x / sum(qs) for x in qs]}
    return {"labels": [token_text[i] for i in top] + ["(other)"], "ids": top + [None],
            "p": ps + [max(0.0, 1 - sum(ps))], "q": qs + [max(0.0, 1 - sum(qs))]}


def sentences(models, prompt: str, drafter: str, temperature, seed: int, k: int = 4,
              max_new_tokens: int = 20) -> list[tuple[str, str]]:
    """Three sampled continuations of `prompt`, each (label, text): plain sampling with `seed`, then
    speculative sampling with `drafter` at the same seed and at the next one. Speculative sampling
    consumes its random numbers differently, so the same seed need not give the same text: what is
    kept is the distribution, not the draw.
    """
    plans = [("plain sampling", None, seed), ("speculative sampling", drafter, seed),
             ("speculative sampling", drafter, seed + 1)]
    out = []
    for name, d, sd in plans:
        g = Generation(models, prompt, Settings(drafter=d, verifier="sampling", k=k, max_new_tokens=max_new_tokens,
                                                sampling=temperature, seed=sd))
        g.run()
        out.append((f"{name}, random seed {sd}", g.text()))
    return out
