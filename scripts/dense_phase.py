"""The block drafters' dense phase, a run beside the recipe: DFlash's and DSpark's first proposal
distilled at every position of corpus windows, from the long phase's carry.

    python -m scripts.dense_phase                 # resumes from checkpoints/block-dense (done at 3000)
    python -m scripts.anchor_acceptance --checkpoint checkpoints/block-dense --drafters ar,dflash,dspark

Why: the shipped drafters' first guess agrees with the target's less often than the autoregressive
drafter's, even on their own training text (teacher-forced 0.47 against 0.66), and every round's
acceptance starts from it. The autoregressive drafter learned from 12.3 M densely distilled corpus
tokens (3000 steps of 16 x 256); the block drafters' first position saw about 1.4 M dense
positions and 1 M anchors (docs/engine.md, "What sets the speedup: acceptance"). This phase gives
them the autoregressive drafter's diet: the same rows (16 corpus windows of 256 tokens a step, both
workloads), the same steps, every position a one-slot block (`specviz.training.block.drafter_loss`
with no anchors). One target forward a step serves both drafters: about 2 s a step on 2 cores.

The run checkpoints to runs/ every 50 steps and carries to checkpoints/block-dense, so a later
session resumes it on the same schedule; the committed carry holds the whole run, and what it
buys is in docs/engine.md ("A dense phase for the first proposal"). Its later proposals are not trained here: the drafting
mix (`python -m specviz train block`'s second phase) follows it.

What it leaves out: the mix and loop phases after it, the cards (specviz.training.stages).
"""
import torch
from transformers import PreTrainedTokenizerFast

from specviz.generator.drafters.block_model import BlockDrafterConfig, BlockDrafterModel
from specviz.training.block import drafter_shape, fit, frozen_target, mixed_rows, text_rows
from specviz.training.lm import encode_corpus
from specviz.training.recipe import BLOCK_RUN, CARRY, DATA, DRAFTER_RUN, MIX, MODELS, RUNS, STEPS, TARGET_TEXT, VARIANTS

# the autoregressive drafter's rows and steps; the mix's peak rate, as this phase too continues
# trained drafters with fresh moments
DENSE = dict(steps=STEPS["drafter"], batch=DRAFTER_RUN["batch"], length=DRAFTER_RUN["seq_len"], lr=MIX["lr"], seed=3)


def main() -> None:
    torch.manual_seed(0)
    target = frozen_target(MODELS / "target")
    cfg = drafter_shape(target, DATA / "tokenizer")
    models = {name: BlockDrafterModel(BlockDrafterConfig(**cfg, **extra)).attach_target(target)
              for name, extra in VARIANTS.items()}
    RUNS.mkdir(exist_ok=True)
    shape = dict(K=BLOCK_RUN["K"], loop_stages=BLOCK_RUN["loop_stages"], gamma=BLOCK_RUN["gamma"], ckpt_every=50)
    # the long phase is done: this reads its carry and trains nothing
    fit(models, target, cfg["target_layers"], text_rows(tuple(DATA / f for f in TARGET_TEXT), BLOCK_RUN["batch"]),
        STEPS["block"], BLOCK_RUN["lr"], RUNS / "block.pt", RUNS / "block.log", anchors=BLOCK_RUN["anchors"],
        seed=0, carry_dir=CARRY / "block", **shape)
    tok_ids = encode_corpus(PreTrainedTokenizerFast.from_pretrained(DATA / "tokenizer"), DATA / "train.txt")
    rows = mixed_rows(tok_ids, (), DENSE["batch"], DENSE["length"], corpus_share=1.0)
    print(fit(models, target, cfg["target_layers"], rows, DENSE["steps"], DENSE["lr"], RUNS / "block-dense.pt",
              RUNS / "block-dense.log", anchors=0, seed=DENSE["seed"], carry_dir=CARRY / "block-dense", dense=True,
              **shape))


if __name__ == "__main__":
    main()
