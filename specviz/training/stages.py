"""Run one stage of the recipe (specviz.training.recipe): the trainers, called with its numbers.

Apart from the recipe because it imports torch, transformers and every trainer, where the recipe
is plain values the command line reads on every call. The drafters the AR drafter's stage trains
and the cards measure come from the drafter registry (specviz.generator.drafters.names): each
trained folder gets one card, and a drafter with a confidence head gets its temperatures fitted.

What it leaves out: the numbers (the recipe) and the training loops (lm.py, block.py, target_text.py).
"""
import json
import multiprocessing
import os

import torch
from transformers import PreTrainedTokenizerFast

from specviz.generator.drafters.autoregressive import decoder_for
from specviz.generator.drafters.block_model import BlockDrafterModel
from specviz.generator.drafters.names import DRAFTERS
from specviz.generator.models import load_embedded
from specviz.training.block import train_block_drafters
from specviz.training.calibrate import fit_temperatures, outcomes
from specviz.training.cards import block_card, heldout_prompts, write_card
from specviz.training.corpus import build_corpus
from specviz.training.lm import encode_corpus, train_lm
from specviz.training.recipe import (BLOCK_RUN, CARRY, DATA, DRAFTER_CONFIG, DRAFTER_RUN, HELDOUT, MIX_TEXT, MODELS,
                                     RUNS, STAGES, STEPS, TARGET_CONFIG, TARGET_RUN, TARGET_TEXT, TEXT_ROWS, VOCAB_SIZE)
from specviz.training.target_text import write_target_text
from specviz.training.tokenizer import train_tokenizer

WRITERS = 2   # processes writing target text side by side


def trained_by(stage: str) -> dict[str, str]:
    """{drafter name: folder} of the registry's drafters that `stage` trains, one name a folder
    (dloop-plain shares DSpark's weights, so its folder's card is DSpark's).

    >>> trained_by("drafter"), list(trained_by("block"))
    ({'ar': 'drafter-ar'}, ['dflash', 'dspark', 'dloop'])
    """
    folders = {}
    for d in DRAFTERS:
        if d.trained_by == stage and d.folder not in folders.values():
            folders[d.name] = d.folder
    return folders


def write_text_file(name: str) -> dict:
    """One file of TARGET_TEXT or MIX_TEXT, in a process of its own with its share of the cores: the two
    files side by side took 9.5 min on 2 cores, where one two-thread process after the other
    keeps both cores only half busy (batch-64 decoding steps are too small for two threads)."""
    torch.set_num_threads(max(1, (os.cpu_count() or 2) // WRITERS))
    tok = PreTrainedTokenizerFast.from_pretrained(DATA / "tokenizer")
    temperature, seed, seq_len = {**TARGET_TEXT, **MIX_TEXT}[name]
    return write_target_text(MODELS / "target", encode_corpus(tok, DATA / "train.txt"), DATA / name,
                             temperature=temperature, seed=seed, seq_len=seq_len, **TEXT_ROWS)


def cards() -> dict:
    """Measure every trained model on the held-out text and write its card; the drafters with a
    confidence head (DSpark's and DLoop's) get their temperatures fitted first."""
    corpus = json.loads((DATA / "corpus.json").read_text())
    facts = {"target": write_card(MODELS / "target", HELDOUT, corpus, "the target")}
    models = load_embedded(models_dir=MODELS)
    # calibration prompts of both workloads, after the ones the cards measure on
    calibration = [p for txt in HELDOUT.values() for p in heldout_prompts(txt, models.tokenizer, n=12, offset=12)]
    for name, folder in {**trained_by("drafter"), **trained_by("block")}.items():
        model = models.drafter_models[name]
        if not isinstance(model, BlockDrafterModel):
            facts[name] = write_card(MODELS / folder, HELDOUT, corpus, "the autoregressive drafter", decoder_for)
        elif not model.config.confidence_head:
            facts[name] = block_card(models, name, HELDOUT, corpus)
        else:
            model.config.confidence_temperature = None
            before = block_card(models, name, HELDOUT, corpus)["survival_ece"]
            model.config.confidence_temperature = fit_temperatures(outcomes(models, name, calibration))
            model.config.save_pretrained(models.paths["drafters"][name])
            facts[name] = block_card(models, name, HELDOUT, corpus, ece_uncalibrated=before)
    return facts


def run_stage(stage: str, steps: dict = STEPS) -> dict:
    """Run one stage of the recipe and return what it reports; `steps` as in the recipe's STEPS."""
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
        tok = train_tokenizer(DATA / "train.txt", DATA / "tokenizer", vocab_size=VOCAB_SIZE)
        return {"vocab_size": len(tok)}
    if stage == "target":
        return train_lm("target", TARGET_CONFIG, DATA / "tokenizer", DATA, MODELS / "target", RUNS,
                        steps=steps["target"], **TARGET_RUN, carry_dir=CARRY / "target")
    if stage == "drafter":
        [folder] = trained_by("drafter").values()
        return train_lm(folder, DRAFTER_CONFIG, DATA / "tokenizer", DATA, MODELS / folder, RUNS,
                        steps=steps["drafter"], **DRAFTER_RUN, teacher=MODELS / "target")
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
                                    **BLOCK_RUN, carry_dir=CARRY)
    if stage == "cards":
        return cards()
    raise ValueError(f"unknown stage {stage!r}; choose from {STAGES} or 'all'")
