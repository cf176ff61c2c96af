"""What a check of several tokens costs against a one-token step, for targets of three sizes on this
CPU. A measurement, not a recipe stage: would a larger target make the check cheaper in steps?

Run from the repository root: `python -m scripts.check_cost_by_size`. For each size it builds a
random-weight Llama (`LlamaForCausalLM`, the embedded target's vocabulary and shape family: the
weights do not matter to the time), fills a cache of 128 tokens, then times a forward of 1 token and
a forward of 5 tokens (k = 4 proposals and the token before them) on top of it, cropping the cache
back after each call. The two widths alternate within each repeat so a busy moment falls on both,
and each keeps the fastest of 12 calls after a warm-up, as lesson 7's width probe does. It prints one
JSON line a size: parameters, the one-token step in ms, the 5-token check in ms and in steps.

What it leaves out: trained weights, GPUs, batches of several sequences.
"""
import json
import time

import torch
from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM

from specviz.training.recipe import TARGET_CONFIG

VOCAB, CONTEXT, WIDTH, REPEATS = 6144, 128, 5, 12
SIZES = {   # layers, width, MLP width: the embedded target, then about 3x and 7x its parameters
    "embedded target's shape": TARGET_CONFIG,
    "3x": dict(hidden_size=640, intermediate_size=1728, num_hidden_layers=12, num_attention_heads=10, num_key_value_heads=2),
    "7x": dict(hidden_size=896, intermediate_size=2432, num_hidden_layers=16, num_attention_heads=14, num_key_value_heads=2),
}


@torch.no_grad()
def step_and_check(model) -> tuple[float, float]:
    """Fastest ms of a 1-token forward and of a WIDTH-token forward on a CONTEXT-token cache."""
    cache = DynamicCache()
    model(torch.randint(0, VOCAB, (1, CONTEXT)), cache=cache, use_cache=True)
    times = {1: [], WIDTH: []}
    for rep in range(REPEATS + 1):
        for w in times:
            x = torch.randint(0, VOCAB, (1, w))
            t = time.perf_counter()
            model(x, cache=cache, use_cache=True)
            if rep:
                times[w].append((time.perf_counter() - t) * 1e3)
            cache.crop(-w)
    return min(times[1]), min(times[WIDTH])


def main():
    torch.manual_seed(0)
    for name, sizes in SIZES.items():
        model = LlamaForCausalLM(LlamaConfig(vocab_size=VOCAB, max_position_embeddings=512, tie_word_embeddings=True,
                                             **sizes)).eval()
        step, check = step_and_check(model)
        print(json.dumps({"size": name, "parameters_M": round(sum(p.numel() for p in model.parameters()) / 1e6, 1),
                          "step_ms": round(step, 2), f"check_{WIDTH}_ms": round(check, 2),
                          "check_in_steps": round(check / step, 2), "threads": torch.get_num_threads()}), flush=True)


if __name__ == "__main__":
    main()
