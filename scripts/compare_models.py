"""Where did a model set's acceptance go? Two model sets (folders laid out as models/) side by side
on the cards' held-out prompts. A measurement, not a recipe stage.

Run from the repository root after `python -m specviz train corpus` (the prompts and held-out text
come from data/), for instance against an older commit's models:

    git archive b3d053e models | tar -x -C /tmp/old
    python -m scripts.compare_models /tmp/old/models models

For each set and workload it prints, as one JSON object:

- the acceptance length at k = 4 of the autoregressive, DFlash and DSpark drafters, greedy, 48
  new tokens, on the cards' 12 prompts (`specviz.training.cards.heldout_prompts`, cut with the
  second set's tokenizer so both sets read the same strings), over all of them and split by
  whether the continuation loops (`specviz.training.readable.loops`): a looping target is easy
  to follow, so a set that loops can owe its acceptance to the loops;
- the characters those rounds commit, a round: acceptance counts tokens, and a finer tokenizer
  commits more tokens for the same text;
- the held-out perplexity of the target and of the autoregressive drafter, each in its own
  set's tokens: how far the target is ahead of what a one-layer model learns from it.

A set that differs in one drafter is a folder of links: `models/` with that one entry replaced.

What it leaves out: the loop-aware drafter, block sizes other than 4, and speed (the bench).
"""
import argparse
import json
from pathlib import Path

from specviz.generator.engine import Generation
from specviz.generator.models import load_embedded
from specviz.generator.settings import Settings
from specviz.training.cards import heldout_prompts
from specviz.training.lm import heldout_perplexity
from specviz.training.readable import loops
from specviz.training.recipe import HELDOUT


def rounds_of(models, drafter: str, prompts: list[str]) -> list[dict]:
    """One row a prompt: tokens and characters committed, rounds, and whether the text loops."""
    rows = []
    for p in prompts:
        trace = Generation(models, p, Settings(drafter=drafter, k=4, max_new_tokens=48)).run()
        text = models.tokenizer.decode(trace.new_ids)
        rows.append({"tokens": len(trace.new_ids), "chars": len(text), "rounds": len(trace.rounds), "loops": loops(text)})
    return rows


def per_round(rows: list[dict], key: str = "tokens") -> float | None:
    """`key` committed a round over `rows` (None when there are none).

    >>> per_round([{"tokens": 6, "rounds": 3}, {"tokens": 2, "rounds": 1}])
    2.0
    """
    rounds = sum(r["rounds"] for r in rows)
    return round(sum(r[key] for r in rows) / rounds, 3) if rounds else None


def measure(models, prompts: dict[str, list[str]]) -> dict:
    out = {}
    for workload, ps in prompts.items():
        row = {"target_perplexity": heldout_perplexity(models.target, models.tokenizer, HELDOUT[workload]),
               "ar_drafter_perplexity": heldout_perplexity(models.drafter_models["ar"], models.tokenizer, HELDOUT[workload])}
        for drafter in ("ar", "dflash", "dspark"):
            rows = rounds_of(models, drafter, ps)
            looping = [r for r in rows if r["loops"]]
            row[drafter] = {"acceptance": per_round(rows), "chars_a_round": per_round(rows, "chars"),
                            "looping_prompts": len(looping), "acceptance_looping": per_round(looping),
                            "acceptance_not_looping": per_round([r for r in rows if not r["loops"]])}
        out[workload] = row
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sets", nargs=2, type=Path, help="two folders laid out as models/")
    folders = ap.parse_args().sets
    sets = [load_embedded(models_dir=folder) for folder in folders]
    prompts = {w: heldout_prompts(txt, sets[1].tokenizer) for w, txt in HELDOUT.items()}
    print(json.dumps({str(folder): measure(m, prompts) for folder, m in zip(folders, sets)}, indent=1))


if __name__ == "__main__":
    main()
