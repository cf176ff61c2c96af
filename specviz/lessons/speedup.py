"""What a speedup claim must say, filled in for our own live measurement, beside the seeds'
reported figures with their denominators.

The checklist comes from seed 000 (“Read a speedup together with its denominator”): target,
baseline, sampling rule, hardware, engine, context/output lengths, serving load, timed boundary.
Reported rows repeat only what the seed states; anything it leaves out says so.

What it leaves out: running anyone else's benchmark (the reported rows are quoted, not measured).
"""
import os

import torch
import transformers

from specviz.generator.devices import cpu_name
from specviz.lessons import glossary
from specviz.lessons.cost import regimes
from specviz.lessons.pricing import LARGE_GPU, Comparison

ITEMS = ["target", "baseline", "sampling rule", "hardware", "engine", "context and output lengths", "load",
         "timed boundary", "result"]
NOT_STATED = "not stated in the article"

REPORTED = [
    {"source": "DLoop, Table 2 (loop without loop-aware training)",
     "target": "Gemma4-12B with its multi-token predictor as drafter",
     "baseline": NOT_STATED, "sampling rule": "greedy (the study's general setup)",
     "hardware": "H100, bf16 (the study's general setup)", "engine": NOT_STATED,
     "context and output lengths": NOT_STATED, "load": NOT_STATED,
     "timed boundary": "not stated for the table; the released head-based evaluator times prefill separately and "
                       "restarts its decode timer after the first draft pass",
     "result": "acceptance length 4.86 → 6.06, speedup 3.17× → 2.90× (longer accepted output, slower)"},
    {"source": "DLoop, Table 2 (with loop-aware training)",
     "target": "Gemma4-12B with its multi-token predictor as drafter",
     "baseline": NOT_STATED, "sampling rule": "greedy (the study's general setup)",
     "hardware": "H100, bf16 (the study's general setup)", "engine": NOT_STATED,
     "context and output lengths": NOT_STATED, "load": NOT_STATED, "timed boundary": "as above",
     "result": "acceptance length 7.50, speedup 3.68×"},
    {"source": "DLoop, Table A2 (MATH-500): DLoop added to DFlash",
     "target": "Qwen3-8B", "baseline": "DFlash alone, same engine and load (an incremental change against DFlash)",
     "sampling rule": "greedy (the study's general setup)", "hardware": "H100, bf16 (the study's general setup)",
     "engine": "SGLang; serving flags not enumerated", "context and output lengths": "request lengths not enumerated",
     "load": "concurrency 32 (the article's text names no other load)",
     "timed boundary": "Table A2's reported throughput (tok/s); not stated whether aggregate or per user",
     "result": "load reverses the incremental gain: at concurrency 32 DLoop does not help DFlash, though both "
               "configurations remain above autoregressive decoding's 3763 tok/s (the article gives no per-load "
               "percentages in its text)"},
    {"source": "DLoop, Table A2 (MATH-500): DLoop added to DSpark",
     "target": "Qwen3-8B", "baseline": "DSpark alone at concurrency 32, same engine (not autoregressive decoding)",
     "sampling rule": "greedy (the study's general setup)", "hardware": "H100, bf16 (the study's general setup)",
     "engine": "SGLang; serving flags not enumerated", "context and output lengths": "request lengths not enumerated",
     "load": "concurrency 32",
     "timed boundary": "Table A2's reported throughput (tok/s); not stated whether aggregate or per user",
     "result": "about +4.5% throughput against DSpark alone (computed from reported throughput)"},
]


def hardware(device: torch.device) -> str:
    if device.type == "cuda":
        return f"GPU {torch.cuda.get_device_name(device)}"
    return (f"CPU {cpu_name()}, {os.cpu_count()} cores, torch using {torch.get_num_threads()} threads "
            f"(the count measured fastest on the free cores)")


def steps_compared(c: Comparison) -> str:
    """The hardware row's comparison: what one of the measured rounds costs in one-token steps here,
    against the same rounds priced on the other profile (lesson 7 sets them side by side).

    >>> from specviz.lessons.pricing import Profile, compare
    >>> print(steps_compared(compare([(5, 1, 3)], [Profile("here", 10.0, 1.5, 4.0, 1.0)], LARGE_GPU)))
    ... # doctest: +NORMALIZE_WHITESPACE
    A round of these rounds costs 2.10 one-token steps here (measured) against 1.40 priced, a hypothetical large
    target on a GPU, for the same 3.00 tokens a round. That profile's 10 ms step is from the worked example of
    “How speculative decoding checks ahead”; its 0.5 ms a further position and 2 ms a stage are this app's
    assumptions (lesson 7 sets the two side by side).
    """
    return (f"A round of these rounds costs {c.here_median.round_steps:.2f} one-token steps here (measured) against "
            f"{c.there.round_steps:.2f} {c.there.label}, for the same {c.there.tokens_per_round:.2f} tokens a round. "
            f"That profile's {LARGE_GPU.step_ms:g} ms step is from the worked example of “{glossary.CHECKS_AHEAD}”; "
            f"its {LARGE_GPU.position_ms:g} ms a further position and {LARGE_GPU.stage_ms:g} ms a stage are this "
            "app's assumptions (lesson 7 sets the two side by side).")


def ours(models, measurement: dict, label=str) -> dict:
    """The checklist for a `specviz.lessons.cost.measure` result on `models`, as {item: text};
    `label` names the drafter as the page does (its name, "dspark", is not for a learner).

    `measurement` holds "prompt", "settings" (engine Settings), "plain" and "speculative"
    ({"trace", "costs", "runs_ms", ...}), "speedup" and "speedup_spread".
    """
    cfg = models.target.config
    params = sum(p.numel() for p in models.target.parameters()) / 1e6
    s = measurement["settings"]
    plain, spec = measurement["plain"], measurement["speculative"]
    same = plain["trace"].new_ids == spec["trace"].new_ids
    temp = s.sampling.temperature
    rule = ("greedy (temperature 0)" if s.verifier == "greedy" else f"{s.verifier}, temperature {temp:g}")
    return {
        "target": f"embedded Llama, {params:.1f} M parameters ({cfg.num_hidden_layers} layers × {cfg.hidden_size}, "
                  f"vocabulary {cfg.vocab_size}); drafter “{label(s.drafter)}”, k = {s.k} proposals per round",
        "baseline": "plain decoding of the same target through the same engine code path (no drafter, one token "
                    "per target forward)",
        "sampling rule": rule + (f"; output identical to the baseline: {'yes' if same else 'NO'}"
                                 if s.verifier == "greedy" else ""),
        "hardware": hardware(models.device) + f", {str(models.dtype).replace('torch.', '')}. " + steps_compared(
            regimes(measurement, LARGE_GPU)),
        "engine": f"specviz (eager PyTorch {torch.__version__}, transformers {transformers.__version__}), batch 1, "
                  f"KV cache cropped after every round"
                  + ("; each linear layer in the weight layout this CPU multiplied fastest when the models loaded"
                     if models.device.type == "cpu" else ""),
        "context and output lengths": f"prompt {len(spec['trace'].prompt_ids)} tokens (with the start marker), "
                                      f"{spec['costs']['tokens']} new tokens; context window {models.max_context}",
        "load": "one request at a time: engine calls from every browser session share one lock",
        "timed boundary": f"decode only: each round from the start of drafting to the end of commit, summed; prefill "
                          f"({spec['costs']['prefill_ms']:.1f} ms) and model loading excluded; "
                          f"a short warm-up generation ran first and is not counted; then each side ran "
                          f"{len(plain['runs_ms'])} times, alternating; medians, with the range over the runs",
        "result": f"{plain['costs']['ms_per_token']:.2f} → {spec['costs']['ms_per_token']:.2f} ms/token, speedup "
                  f"{measurement['speedup_spread'].label(unit='×')}, acceptance length "
                  f"{spec['costs']['acceptance_length']:.2f} tokens per target forward",
    }
