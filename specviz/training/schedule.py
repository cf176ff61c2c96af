"""What `python -m specviz train` runs: the stages in order and each trained stage's optimizer steps.

Kept apart from specviz.training.recipe, which imports torch, transformers and every trainer: the
command line builds its options from these names on every call, and a `models` or a refused
`generate` should not pay for the trainers' imports.

What it leaves out: how a stage runs (specviz.training.recipe).
"""

STAGES = ["corpus", "tokenizer", "target", "drafter", "target-text", "block", "cards"]
# optimizer steps of each trained stage: what the shipped models were trained with. The target's
# 6400 steps of 16 x 256 tokens are four passes over the 6.56 M-token corpus: past about four
# epochs, repeated data stops paying like new data, and the held-out curve shows where it flattens
STEPS = {"target": 6400, "drafter": 600, "block": 4000, "loop": 300}
