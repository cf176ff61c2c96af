"""Which lever pays for the block drafters: a second draft layer, or a different share of code in
the text they learn from. A measurement, not a recipe stage.

Run from the repository root, after `python -m specviz train target-text` (it reads the shipped
DSpark drafter, the target and the target text in data/): `python -m scripts.block_levers --steps 600`.

Drafters start from the shipped DSpark drafter (`models/drafter-dspark`) and train `--steps`
more steps:

- "one layer": as shipped, on the recipe's target text (its prompts come from the training mix,
  about half code);
- "two layers": the shipped drafter with a second draft layer on top, whose output projections
  (attention and MLP) start at zero, so it starts as exactly the shipped drafter and can only
  learn to use the new layer; trained on the same batches as "one layer", which separates what
  the layer brings from what more steps bring;
- "prose x3": one layer, on the same target text with the rows that continue a prose prompt
  written three times (`prose_rows` tells them apart), so the drafter sees mostly prose;
- "fresh text": one layer, on as many rows as one recipe file (2,048) that the target writes
  anew from other corpus windows (half sampled, half greedy, as the recipe's), which the shipped
  drafter has never seen where it has seen the recipe's rows about eight times.

`--variants` picks some of them (comma-separated names); the fresh text is written once into
runs/block_levers/ (about 10 minutes on 2 cores) and read back on later runs.

Then it measures each as the cards do (`specviz.training.cards.acceptance`: greedy, 12
held-out prompts a workload, 48 new tokens) at k = 2, 4, 8, beside the shipped drafter, and its
drafting milliseconds a round at k = 8 as lesson 3 times them (`specviz.lessons.parallel.draft_cost`
on the first preset), since a layer's acceptance is worth what its time costs. All keep the shipped
drafter's confidence temperatures. It prints one JSON object; the trained weights stay in runs/block_levers/.

What it leaves out: drafters trained from scratch (the block run's hours on 2 cores, for each
variant), DFlash and the loop-aware drafter (the same change would be made to them alike).
"""
import argparse
import json
import re

import numpy as np
import torch

from specviz.generator.drafters.block_model import BlockDrafterConfig, BlockDrafterModel
from specviz.generator.models import MODELS_DIR, load_embedded, load_model
from specviz.lessons.parallel import draft_cost
from specviz.lessons.presets import PRESETS
from specviz.training.block import fit, load_rows
from specviz.training.cards import acceptance, heldout_prompts
from specviz.training.lm import encode_corpus
from specviz.training.recipe import DATA, HELDOUT, MODELS, RUNS, TARGET_TEXT
from specviz.training.target_text import write_target_text

PROMPT_LEN = 32     # the corpus window each target-text row starts with (specviz.training.target_text)
OUT = RUNS / "block_levers"
VARIANTS = {"one layer": ("recipe", 1), "two layers": ("recipe", 2), "prose x3": ("prose x3", 1),
            "fresh text": ("fresh", 1)}     # name -> (the text it trains on, draft layers)
# the fresh text's files -> (temperature, seed): seeds far from the recipe's 0..31 and 5000..5031
FRESH = {"fresh_sampled.npy": (0.8, 10000), "fresh_greedy.npy": (0.0, 15000)}
PYTHON = re.compile(r"=|#|\n {4}|\bdef |\bimport |\bself\.")


def prose_rows(text: torch.Tensor, tok) -> torch.Tensor:
    """Which rows continue a prose prompt: no `=`, `#`, indented line, def, import or self. in the
    row's first PROMPT_LEN ids (the novels have none of these, nearly every Python window of 32
    tokens has one; a parenthesis would not do, Austen opens them too).

    >>> from transformers import PreTrainedTokenizerFast
    >>> tok = PreTrainedTokenizerFast.from_pretrained("models/target")
    >>> rows = [tok.encode("It is a truth universally acknowledged, that a single man")[:8],
    ...         tok.encode("def mean(values):\\n    return sum(values)")[:8]]
    >>> prose_rows(torch.tensor(rows), tok).tolist()
    [True, False]
    """
    return torch.tensor([not PYTHON.search(tok.decode(r[:PROMPT_LEN])) for r in text.tolist()])


def grown(drafter: BlockDrafterModel) -> BlockDrafterModel:
    """`drafter` with one more draft layer on top that starts as the identity (zero output projections)."""
    config = BlockDrafterConfig(**{**drafter.config.to_dict(), "num_layers": drafter.config.num_layers + 1})
    two = BlockDrafterModel(config)
    missing, unexpected = two.load_state_dict(drafter.state_dict(), strict=False)
    assert not unexpected and all(k.startswith(f"layers.{drafter.config.num_layers}.") for k in missing), missing
    new = two.layers[-1]
    torch.nn.init.zeros_(new.o.weight)
    torch.nn.init.zeros_(new.down.weight)
    return two


def fresh_text(tok) -> torch.Tensor:
    """2,048 rows the target writes from corpus windows the recipe's target text did not use."""
    corpus = encode_corpus(tok, DATA / "train.txt")
    for name, (temperature, seed) in FRESH.items():
        write_target_text(MODELS / "target", corpus, OUT / name, sequences=1024, temperature=temperature, seed=seed)
    return torch.from_numpy(np.concatenate([np.load(OUT / f) for f in FRESH]).astype(np.int64))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated, from: " + ", ".join(VARIANTS))
    args = ap.parse_args()
    chosen = args.variants.split(",")
    unknown = [v for v in chosen if v not in VARIANTS]
    if unknown:
        ap.error(f"unknown variants {unknown}; choose from {list(VARIANTS)}")
    models = load_embedded()
    target, shipped = models.target, models.drafter_models["dspark"]
    OUT.mkdir(parents=True, exist_ok=True)
    text = load_rows(tuple(DATA / f for f in TARGET_TEXT))
    prose = prose_rows(text, models.tokenizer)
    mixes = {"recipe": lambda: text, "prose x3": lambda: torch.cat([text[prose]] * 3 + [text[~prose]]),
             "fresh": lambda: fresh_text(models.tokenizer)}

    def start(layers: int) -> BlockDrafterModel:
        one = BlockDrafterModel.from_pretrained(MODELS_DIR / "drafter-dspark", dtype=torch.float32)
        return (grown(one) if layers == 2 else one).attach_target(target)

    runs = {}
    for label in chosen:
        mix, layers = VARIANTS[label]
        runs.setdefault(mix, {})[label] = start(layers)
    minutes = 0.0
    for mix, trained in runs.items():       # the drafters of one mix train on the same batches
        text = mixes[mix]()
        rows = lambda gen, text=text: text[torch.randint(0, len(text), (8,), generator=gen)]   # noqa: E731
        state = fit(trained, target, shipped.config.target_layers, rows, args.steps, args.lr,
                    OUT / f"{mix}.pt", OUT / "fit.log", anchors=32, K=8, loop_stages=1, gamma=4.0,
                    ckpt_every=50, seed=11)
        minutes += state["seconds"] / 60
        for label, m in trained.items():    # stored and loaded back as the shipped drafters are (bf16 on disk)
            m.to(torch.bfloat16).save_pretrained(OUT / label)
    prompts = {w: heldout_prompts(txt, models.tokenizer) for w, txt in HELDOUT.items()}
    result = {"steps": args.steps, "lr": args.lr, "train_minutes": round(minutes, 1),
              "prose_rows": f"{int(prose.sum())} of {len(text)}", "drafters": {}}
    for label in ("shipped", *chosen):
        m = shipped if label == "shipped" else load_model(OUT / label, models.device, models.dtype, target)
        models.drafter_models["dspark"] = m
        result["drafters"][label] = {
            "layers": m.config.num_layers,
            "acceptance": {w: {k: acceptance(models, "dspark", p, k)["length"] for k in (2, 4, 8)} for w, p in prompts.items()},
            "draft_ms_k8": draft_cost(models, PRESETS[0], ["dspark"], [8])[0]["draft_ms"]}
        print(json.dumps({label: result["drafters"][label]}), flush=True)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
