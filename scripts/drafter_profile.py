"""Where a drafter keeps its proposals: acceptance by block position and by depth into the
continuation, on the cards' held-out prompts. A measurement, not a recipe stage.

Run from the repository root after `python -m specviz train corpus` (the prompts come from data/):

    python -m scripts.drafter_profile                              # the shipped models/
    python -m scripts.drafter_profile --checkpoint runs/block-mix.pt   # a block run in progress

With `--checkpoint`, the DFlash and DSpark drafters (and the loop drafter, where the file holds
one) take that training checkpoint's weights, so a run can be read before it ends. It prints one
JSON object: for each drafter and workload, `specviz.training.cards.acceptance` at k = 4 (greedy,
12 prompts, 48 new tokens): the length, the conditional acceptance of positions 1..4, and the
tokens a pass by where the round starts, and the first proposal's acceptance after a correction
and after a full block (`specviz.training.cards.first_kept_after`).

What it leaves out: other block sizes and speed (the bench).
"""
import argparse
import json
from pathlib import Path

import torch
from safetensors.torch import load_file

from specviz.generator.models import load_embedded
from specviz.training.cards import acceptance, heldout_prompts
from specviz.training.recipe import HELDOUT

# a training run's model names -> the engine's drafter names
RUN_NAMES = {"dflash": "dflash", "dspark": "dspark", "dspark-loop": "dloop"}


def load_run(models, path: Path) -> None:
    """Give the embedded block drafters a training run's weights: a checkpoint (runs/*.pt, fp32 with
    the optimizer) or a carry (a checkpoints/ folder, bf16, its keys prefixed by the run's model names)."""
    if path.is_dir():
        by_run = {}
        for key, value in load_file(path / "model.safetensors").items():
            run_name, rest = key.split(".", 1)
            by_run.setdefault(run_name, {})[rest] = value.float()
    else:
        by_run = torch.load(path, weights_only=False)["models"]
    for run_name, weights in by_run.items():
        models.drafter_models[RUN_NAMES[run_name]].load_state_dict(weights)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", type=Path, default=None, help="a folder laid out as models/ (default: models/)")
    ap.add_argument("--checkpoint", type=Path,
                    help="a block run's checkpoint (runs/*.pt) or carry (checkpoints/NAME) to read the drafters from")
    ap.add_argument("--drafters", default="ar,dflash,dspark")
    args = ap.parse_args()
    models = load_embedded(models_dir=args.models) if args.models else load_embedded()
    if args.checkpoint:
        load_run(models, args.checkpoint)
    prompts = {w: heldout_prompts(txt, models.tokenizer) for w, txt in HELDOUT.items()}
    out = {d: {w: acceptance(models, d, p, 4) for w, p in prompts.items()} for d in args.drafters.split(",")}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
