"""The reproducible recipe behind models/: corpus -> tokenizer -> target -> AR drafter ->
target text -> block drafters -> cards.

`python -m specviz train all` runs every stage; each stage can be run alone and skips work
that is already done (the corpus and tokenizer files exist; the target text resumes from its
partial file; a model resumes from its checkpoint in `runs/`). Steps are fixed, not minutes,
so a rerun trains the same schedule. The target's and the block drafters' runs are longer than
a working session: they also carry over in `checkpoints/` (`target/`, `block/`, `block-loop/`: bf16
weights and state, committed), which a fresh machine resumes from (specviz.training.lm).

The tokenizer is trained once: while `models/target/` ships one, the tokenizer stage copies it,
so a retrained model set keeps the token ids the lessons and their saved traces were made with.

What it leaves out: hyperparameter search.
"""
import json
import multiprocessing
import os
from pathlib import Path

import torch

from transformers import PreTrainedTokenizerFast

from specviz.generator.drafters.autoregressive import decoder_for
from specviz.generator.models import load_embedded
from specviz.training.block import train_block_drafters
from specviz.training.calibrate import fit_temperatures, outcomes
from specviz.training.cards import block_card, heldout_prompts, write_card
from specviz.training.corpus import build_corpus
from specviz.training.lm import DRAFTER_CONFIG, TARGET_CONFIG, encode_corpus, train_lm
from specviz.training.schedule import STAGES, STEPS
from specviz.training.target_text import write_target_text
from specviz.training.tokenizer import train_tokenizer

ROOT = Path(__file__).resolve().parents[2]
DATA, RUNS, MODELS = ROOT / "data", ROOT / "runs", ROOT / "models"
CARRY = ROOT / "checkpoints"
# each workload's held-out text, which no training stage reads: the cards measure on it
HELDOUT = {"prose": DATA / "heldout.txt", "code": DATA / "heldout_code.txt"}
# the block drafters' training text, file -> (temperature, seed, tokens a row): half sampled, half
# greedy, as the engine serves both; each file's seeds pick other corpus windows. The long rows are
# the first phase's; the short ones (a 32-token window and 96 of the target's, before its greedy
# text loops) are the drafting mix's, beside corpus windows (specviz.training.block)
TARGET_TEXT = {"target_text.npy": (0.8, 0, 256), "target_text_greedy.npy": (0.0, 5000, 256)}
MIX_TEXT = {"target_text_short.npy": (0.8, 20000, 128), "target_text_short_greedy.npy": (0.0, 25000, 128)}


WRITERS = 2   # processes writing target text side by side


def write_text_file(name: str) -> dict:
    """One file of TARGET_TEXT or MIX_TEXT, in a process of its own with its share of the cores: the two
    files side by side took 9.5 min on 2 cores, where one two-thread process after the other
    keeps both cores only half busy (batch-64 decoding steps are too small for two threads)."""
    torch.set_num_threads(max(1, (os.cpu_count() or 2) // WRITERS))
    tok = PreTrainedTokenizerFast.from_pretrained(DATA / "tokenizer")
    temperature, seed, seq_len = {**TARGET_TEXT, **MIX_TEXT}[name]
    return write_target_text(MODELS / "target", encode_corpus(tok, DATA / "train.txt"), DATA / name,
                             temperature=temperature, seed=seed, seq_len=seq_len)


def run_stage(stage: str, steps: dict = STEPS) -> dict:
    """Run one stage of the recipe and return what it reports; `steps` as in STEPS."""
    if stage == "corpus":
        facts = build_corpus(DATA)
        (DATA / "corpus.json").write_text(json.dumps(facts, indent=2))
        return facts
    if stage == "tokenizer":
        shipped = MODELS / "target"
        if (shipped / "tokenizer.json").exists():
            tok = PreTrainedTokenizerFast.from_pretrained(shipped)
            tok.save_pretrained(DATA / "tokenizer")
            return {"vocab_size": len(tok), "from": "models/target"}
        tok = train_tokenizer(DATA / "train.txt", DATA / "tokenizer", vocab_size=6144)
        return {"vocab_size": len(tok)}
    if stage == "target":
        return train_lm("target", TARGET_CONFIG, DATA / "tokenizer", DATA, MODELS / "target", RUNS,
                        steps=steps["target"], lr=1.5e-3, warmup=200, curve_every=500, carry_dir=CARRY / "target")
    if stage == "drafter":
        return train_lm("drafter-ar", DRAFTER_CONFIG, DATA / "tokenizer", DATA, MODELS / "drafter-ar",
                        RUNS, steps=steps["drafter"], lr=2e-3, teacher=MODELS / "target", curve_every=300)
    if stage == "target-text":
        tok = PreTrainedTokenizerFast.from_pretrained(DATA / "tokenizer")
        encode_corpus(tok, DATA / "train.txt")     # the id cache, written once before the processes read it
        names = [*TARGET_TEXT, *MIX_TEXT]
        with multiprocessing.get_context("spawn").Pool(WRITERS) as pool:
            return dict(zip(names, pool.map(write_text_file, names)))
    if stage == "block":
        tok = PreTrainedTokenizerFast.from_pretrained(DATA / "tokenizer")
        return train_block_drafters(MODELS / "target", DATA / "tokenizer", [DATA / f for f in TARGET_TEXT],
                                    [DATA / f for f in MIX_TEXT], encode_corpus(tok, DATA / "train.txt"), MODELS, RUNS,
                                    steps=steps["block"], mix_steps=steps["mix"], loop_steps=steps["loop"],
                                    carry_dir=CARRY)
    if stage == "cards":
        corpus = json.loads((DATA / "corpus.json").read_text())
        facts = {"target": write_card(MODELS / "target", HELDOUT, corpus, "the target"),
                 "ar": write_card(MODELS / "drafter-ar", HELDOUT, corpus, "the autoregressive drafter", decoder_for)}
        models = load_embedded(models_dir=MODELS)
        facts["dflash"] = block_card(models, "dflash", HELDOUT, corpus)
        # calibration prompts of both workloads, after the ones the cards measure on
        calibration = [p for txt in HELDOUT.values() for p in heldout_prompts(txt, models.tokenizer, n=12, offset=12)]
        for name in ("dspark", "dloop"):
            model = models.drafter_models[name]
            model.config.confidence_temperature = None
            before = block_card(models, name, HELDOUT, corpus)["survival_ece"]
            model.config.confidence_temperature = fit_temperatures(outcomes(models, name, calibration))
            model.config.save_pretrained(models.paths["drafters"][name])
            facts[name] = block_card(models, name, HELDOUT, corpus, ece_uncalibrated=before)
        return facts
    raise ValueError(f"unknown stage {stage!r}; choose from {STAGES} or 'all'")
