"""Lesson 6's live measurements of DLoop: a sweep of the threshold g, and whether a second
drafting stage earns its cost.

Every configuration decodes the same prompt greedily through the same engine; plain decoding
runs first as the baseline. A short warm-up generation comes first and is not counted.

A second stage pays when the tokens it adds, priced at what a token costs with one stage a
round, are worth more than the stage costs. With one stage a round costing C and committing A
tokens, a gate that opens in a share f of rounds, each adding e tokens for an extra c ms, gives
(C + f·c) / (A + f·e) ms per token, which is below C / A exactly when e · C/A > c; f only
scales the gain.

What it leaves out: medians over many prompts (the benchmark does that); the sweep runs each
setting twice on one prompt and keeps its faster run, which keeps a classroom sweep to seconds,
so read small differences as noise.
"""
import math
import statistics

from specviz.generator.engine import Generation, Settings
from specviz.lessons.cost import break_even_tokens, fastest_runs, speedup, trace_costs, warm_up


def threshold_sweep(models, prompt: str, drafters: list[str], thresholds: list[float], k: int = 4,
                    max_stages: int = 3, max_new_tokens: int = 32, repeats: int = 2) -> dict:
    """{"baseline": costs, "rows": [{drafter, threshold, acceptance_length, ms_per_token, speedup,
    stages_per_round}, ...]} for every drafter x threshold, each its fastest of `repeats` runs."""
    settings = {(None, None): Settings.greedy(None, max_new_tokens)}
    settings |= {(d, g): Settings.greedy(d, max_new_tokens, block_size=k, loop_threshold=g, max_stages=max_stages)
                 for d in drafters for g in thresholds}
    runs = fastest_runs(models, prompt, settings, repeats)
    base = runs.pop((None, None))["costs"]
    rows = []
    for (d, g), run in runs.items():
        c = run["costs"]
        rows.append({"drafter": d, "threshold": g, "acceptance_length": c["acceptance_length"],
                     "ms_per_token": c["ms_per_token"], "speedup": speedup(base["ms_per_token"], c["ms_per_token"]),
                     "stages_per_round": c["stages_per_round"]})
    return {"baseline": base, "rows": rows}


def bonus_bound(stages: int, k: int) -> dict:
    """Most tokens one check of S stages of k proposals can commit, against S separate checks.

    >>> bonus_bound(3, 4)
    {'one_check': 13, 'separate_checks': 15, 'target_passes_saved': 2}
    """
    if stages < 1 or k < 1:
        raise ValueError("need at least one stage of at least one proposal")
    return {"one_check": stages * k + 1, "separate_checks": stages * (k + 1), "target_passes_saved": stages - 1}


def gate_table(rounds: list[tuple[float, int]], k: int, thresholds: list[float], token_ms: float,
               stage_ms: float) -> list[dict]:
    """Per threshold g, what a second stage of k proposals adds in the rounds whose gate opens.

    `rounds` holds, for rounds that drafted two whole stages, the first stage's sum of log q and
    how many of the 2k proposals the target accepted: the first stage survived whole when that
    is >= k, and the second stage added what is beyond k. `worth_ms` prices the added tokens at
    `token_ms` each; the stage pays where that beats `stage_ms`, the stage's cost.

    >>> gate_table([(-0.5, 4), (-0.8, 2), (-3.0, 1)], k=2, thresholds=[-1.0], token_ms=10.0, stage_ms=6.0)
    [{'threshold': -1.0, 'opens': 0.6666666666666666, 'first_stage_whole': 1.0, 'tokens_added': 1.0, \
'worth_ms': 10.0, 'pays': True}]
    """
    need = break_even_tokens(stage_ms, token_ms)
    rows = []
    for g in thresholds:
        open_ = [accepted for score, accepted in rounds if score >= g]
        row = {"threshold": g, "opens": len(open_) / len(rounds) if rounds else 0.0, "first_stage_whole": None,
               "tokens_added": None, "worth_ms": None, "pays": None}
        if open_:
            added = sum(max(0, a - k) for a in open_) / len(open_)
            row.update(first_stage_whole=sum(a >= k for a in open_) / len(open_), tokens_added=added,
                       worth_ms=added * token_ms, pays=added > need)
        rows.append(row)
    return rows


def stage_earnings(models, prompt: str, drafter: str, k: int, thresholds: list[float],
                   max_new_tokens: int = 64, repeats: int = 2) -> dict:
    """Price a second drafting stage on `prompt`: {"token_ms", "stage_ms", "tokens_needed", "rounds", "rows"}.

    The prompt is decoded with one stage a round and with two stages every round (the gate
    always open), alternately `repeats` times each. A one-stage round costs C ms (the median
    round) and commits A tokens, so token_ms = C / A; stage_ms is how much longer the median
    two-stage round took (drafting k more proposals and checking them). Medians, and the
    alternation, keep a busy moment of a shared machine from landing on one side only. Rounds
    cut short by the token budget are left out of `rows` (gate_table). tokens_needed is what a
    second stage must add, per round it runs, to repay stage_ms.
    """
    settings = {stages: Settings.greedy(drafter, max_new_tokens, block_size=k, max_stages=stages, loop_threshold=-math.inf)
                for stages in (1, 2)}
    for s in settings.values():
        warm_up(models, prompt, s)
    traces = {1: [], 2: []}
    for _ in range(repeats):
        for stages, s in settings.items():
            traces[stages].append(Generation(models, prompt, s).run())
    round_ms = {stages: statistics.median(r.total_ms for t in ts for r in t.rounds) for stages, ts in traces.items()}
    token_ms = round_ms[1] / trace_costs(traces[1][0])["acceptance_length"]
    stage_ms = round_ms[2] - round_ms[1]
    whole = [(r.drafter_info["stages"][0]["logprob_sum"], r.accepted) for r in traces[2][0].rounds
             if len(r.proposed) == 2 * k]
    return {"token_ms": token_ms, "stage_ms": stage_ms, "tokens_needed": break_even_tokens(stage_ms, token_ms),
            "rounds": len(whole), "rows": gate_table(whole, k, thresholds, token_ms, stage_ms)}
