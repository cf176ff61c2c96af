"""What `python -m specviz train` runs: the stages in order and each trained stage's optimizer steps.

Kept apart from specviz.training.recipe, which imports torch, transformers and every trainer: the
command line builds its options from these names on every call, and a `models` or a refused
`generate` should not pay for the trainers' imports.

What it leaves out: how a stage runs (specviz.training.recipe).
"""

STAGES = ["corpus", "tokenizer", "target", "drafter", "target-text", "block", "cards"]
# optimizer steps of each trained stage: what the shipped models were trained with. The target's
# 4000 steps of 16 x 256 tokens are about three passes over the corpus (two copies of the prose
# beside one of the code). A longer run with three prose copies overfit the prose: its held-out
# prose perplexity bottomed at 31.1 near the sixth pass over the novels and rose to 38.2 by the
# ninth, while code still fell (docs/benchmarks.md, "The target's held-out curve"); continued from
# these 4000 to 6000 steps, it ended worse on both (prose 29.13 -> 31.52, code 20.91 -> 21.28;
# "The target's held-out curve past its 4000 steps")
# The autoregressive drafter's 3000 steps: distilled longer, its held-out perplexity went on
# falling (prose 41.2 at step 600 to 31.6, code 79.4 to 43.9) and its acceptance at k = 4 rose
# from 2.07 to 2.33 on prose and 1.79 to 2.30 on code (docs/engine.md)
# The block drafters' 4000 steps on the long text, then MIX steps on the drafting mix
# (specviz.training.block), then the loop-aware steps
STEPS = {"target": 4000, "drafter": 3000, "block": 4000, "mix": 700, "loop": 120}
