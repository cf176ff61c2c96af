"""The benchmark: plain decoding vs every drafter, interleaved in one process, medians.

For each repeat and each prompt, every method runs once, one after another, so slow and fast
moments of a shared machine fall on all methods alike. Per run:
  ms_per_token      = decode time (sum of round times; prefill excluded) / committed tokens
  acceptance_length = committed tokens / target verifications (rounds)
  stages            = drafting stages per round (above 1 only where DLoop's gate drafted again)
  verify_ms_per_token = verification time alone / committed tokens
Each figure is the median over runs; speedup = baseline ms/token / method ms/token, and
verify_only_speedup = baseline ms/token / verify_ms_per_token: the speedup the same rounds would
give if drafting and bookkeeping cost nothing, a ceiling that no cheaper drafter of the same
acceptance can pass (only more tokens a round, or a cheaper check, can).
A drafter is run at each block size asked for (DLoop also at each loop threshold) and
reported at its best variant. The spread follows specviz.lessons.protocol: each counted repeat
gives one speedup (the baseline's median ms/token over the prompts against the variant's), and
"speedup_spread" is their median and range. Before the runs the thread count is fitted to the
cores free now (specviz.generator.threads), as the app does.

The prompts are one workload's (`specviz.lessons.workloads`): held-out prose or held-out code,
reported separately, since how much a drafter guesses right depends on the text; `python -m specviz
bench` runs both.

What it leaves out: batch serving (many requests), prefill speed, time to first token.
"""
import statistics

from specviz.generator.engine import Generation
from specviz.generator.settings import Settings
from specviz.generator.threads import fit_threads
from specviz.lessons.speedup import hardware
from specviz.lessons.cost import speedup, trace_costs
from specviz.lessons.protocol import ratio_spread
from specviz.lessons.workloads import WORKLOADS


def run_once(models, prompt: str, settings: Settings) -> dict:
    trace = Generation(models, prompt, settings).run()
    c = trace_costs(trace)
    return {"ms_per_token": c["ms_per_token"], "acceptance_length": c["acceptance_length"],
            "overhead_fraction": c["overhead_ms"] / c["decode_ms"], "draft_ms": c["draft_ms"] / c["rounds"],
            "verify_ms": c["mean_verify_ms"], "verify_ms_per_token": c["verify_ms_per_token"],
            "stages": c["stages_per_round"], "new_ids": trace.new_ids}


def variants(looping: bool, ks: list[int], thresholds: list[float]) -> dict:
    """Label -> engine options for one drafter: every block size, and for DLoop every threshold.

    >>> list(variants(True, [4], [-1.0, -2.0]))
    ['k=4 g=-1.0', 'k=4 g=-2.0']
    >>> list(variants(False, [2, 4], [-1.0]))
    ['k=2', 'k=4']
    """
    if not looping:
        return {f"k={k}": dict(k=k) for k in ks}
    return {f"k={k} g={g}": dict(k=k, loop_threshold=g, max_stages=3)
            for k in ks for g in thresholds}


def bench(models, drafters: list[str], ks: list[int], max_new_tokens: int = 64,
          repeats: int = 2, prompts: list[str] = WORKLOADS["prose"], progress=None,
          loop_ks: list[int] = (2, 3, 4), thresholds: list[float] = (-1.0, -2.0, -4.0)) -> dict:
    """Greedy benchmark; returns {"baseline": {...}, "methods": {name: {...}}, "settings": ...}.

    DLoop runs at fewer block sizes than the others (each is tried at every threshold, for two
    drafters); 3 is among them because it is where one-stage DSpark does best on these models,
    so the loop is compared with DSpark at DSpark's own block size.
    """
    configs = {"baseline": Settings.greedy(None, max_new_tokens)}
    for d in drafters:
        looping = d in models.looping
        for label, opts in variants(looping, loop_ks if looping else ks, thresholds).items():
            configs[f"{d}@{label}"] = Settings.greedy(d, max_new_tokens, **opts)
    threads = fit_threads(models)
    runs = {name: [] for name in configs}
    mismatches = []
    for rep in range(repeats + 1):          # repeat 0 warms up and is not counted
        for prompt in prompts:
            base_ids = None
            for name, s in configs.items():
                r = run_once(models, prompt, s)
                base_ids = r["new_ids"] if name == "baseline" else base_ids
                if r["new_ids"] != base_ids:
                    mismatches.append((name, prompt))
                if rep:
                    runs[name].append(r)
            if progress:
                progress(rep, prompt)
    med = {name: {key: statistics.median(r[key] for r in rs)
                  for key in ("ms_per_token", "acceptance_length", "overhead_fraction", "draft_ms", "verify_ms",
                              "verify_ms_per_token", "stages")}
           for name, rs in runs.items()}
    base = med.pop("baseline")
    per_repeat = {name: [statistics.median(r["ms_per_token"] for r in rs[i:i + len(prompts)])
                         for i in range(0, len(rs), len(prompts))] for name, rs in runs.items()}
    methods = {}
    for d in drafters:
        found = {name.split("@", 1)[1]: dict(m, speedup=speedup(base["ms_per_token"], m["ms_per_token"]),
                                             verify_only_speedup=speedup(base["ms_per_token"], m["verify_ms_per_token"]),
                                             speedup_spread=ratio_spread(per_repeat["baseline"], per_repeat[name]).as_dict())
                 for name, m in med.items() if name.split("@", 1)[0] == d}
        best = max(found, key=lambda v: found[v]["speedup"])
        opts = {k: v for k, v in vars(configs[f"{d}@{best}"]).items() if k in ("k", "loop_threshold")}
        if d not in models.looping:
            opts.pop("loop_threshold")
        methods[d] = dict(found[best], **opts, best=best, variants=found)
    return {"baseline": base, "methods": methods, "greedy_mismatches": mismatches,
            "settings": {"max_new_tokens": max_new_tokens, "repeats": repeats, "prompts": len(prompts),
                         "device": str(models.device), "dtype": str(models.dtype).replace("torch.", ""),
                         "hardware": hardware(models.device), "threads": threads["threads"]}}


def bench_json(res: dict) -> dict:
    """The bench's JSON: one workload's report as it is, several under "workloads" by name.

    >>> bench_json({"code": {"baseline": 1}})
    {'baseline': 1}
    >>> bench_json({"prose": {"baseline": 1}, "code": {"baseline": 2}})
    {'workloads': {'prose': {'baseline': 1}, 'code': {'baseline': 2}}}
    """
    return next(iter(res.values())) if len(res) == 1 else {"workloads": res}
