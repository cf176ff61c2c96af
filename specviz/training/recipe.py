"""The reproducible recipe behind models/: corpus -> tokenizer -> target -> drafter.

`python -m specviz train all` runs every stage; each stage can be run alone and skips work
that is already done (the corpus and tokenizer files exist; a model resumes from its
checkpoint in `runs/`). Steps are fixed, not minutes, so a rerun trains the same schedule.

What it leaves out: the block drafters (their own recipe), hyperparameter search.
"""
import json
from pathlib import Path

from specviz.training.corpus import build_corpus
from specviz.training.lm import DRAFTER_CONFIG, TARGET_CONFIG, train_lm
from specviz.training.tokenizer import train_tokenizer

ROOT = Path(__file__).resolve().parents[2]
DATA, RUNS, MODELS = ROOT / "data", ROOT / "runs", ROOT / "models"
STAGES = ["corpus", "tokenizer", "target", "drafter"]


def run_stage(stage: str, target_steps: int = 700, drafter_steps: int = 300) -> dict:
    """Run one stage of the recipe and return what it reports."""
    if stage == "corpus":
        facts = build_corpus(DATA)
        (DATA / "corpus.json").write_text(json.dumps(facts, indent=2))
        return facts
    if stage == "tokenizer":
        tok = train_tokenizer(DATA / "train.txt", DATA / "tokenizer")
        return {"vocab_size": len(tok)}
    if stage == "target":
        return train_lm("target", TARGET_CONFIG, DATA / "tokenizer", DATA, MODELS / "target", RUNS,
                        steps=target_steps, lr=1.5e-3)
    if stage == "drafter":
        return train_lm("drafter-ar", DRAFTER_CONFIG, DATA / "tokenizer", DATA, MODELS / "drafter-ar",
                        RUNS, steps=drafter_steps, lr=2e-3, teacher=MODELS / "target")
    raise ValueError(f"unknown stage {stage!r}; choose from {STAGES} or 'all'")
