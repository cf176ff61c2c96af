"""A live sweep of DLoop's threshold g: acceptance and cost per token for each setting.

Every configuration decodes the same prompt greedily through the same engine; plain decoding
runs first as the baseline. A short warm-up generation per drafter is not counted.

What it leaves out: repeats and medians (the benchmark does that); one run per setting keeps a
classroom sweep to seconds, so read small differences as noise.
"""
from specviz.cost import speedup, trace_costs
from specviz.engine import Generation, Settings
from specviz.sampling import SamplingSettings


def threshold_sweep(models, prompt: str, drafters: list[str], thresholds: list[float], k: int = 4,
                    max_stages: int = 3, max_new_tokens: int = 32) -> dict:
    """{"baseline": costs, "rows": [{drafter, threshold, acceptance_length, ms_per_token, speedup,
    stages_per_round}, ...]} for every drafter x threshold."""
    greedy = dict(verifier="greedy", max_new_tokens=max_new_tokens, sampling=SamplingSettings(temperature=0))
    for d in drafters:
        Generation(models, prompt, Settings(drafter=d, block_size=k, **dict(greedy, max_new_tokens=4))).run()
    base = trace_costs(Generation(models, prompt, Settings(drafter=None, **greedy)).run())
    rows = []
    for d in drafters:
        for g in thresholds:
            t = Generation(models, prompt, Settings(drafter=d, block_size=k, loop_threshold=g, max_stages=max_stages,
                                                    **greedy)).run()
            c = trace_costs(t)
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
