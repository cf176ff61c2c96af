"""The recipe (specviz.training.recipe) is what the shipped models were trained with: each number it
states that a model's training.json, config.json or carried state also records is the same there.

Planted bugs these catch: a recipe value edited without retraining (the README and the cards would
then describe models the recipe does not make), and a trainer that stops passing a recipe number on.
"""
import ast
import json

import pytest

from specviz.generator.drafters.names import DRAFTERS
from specviz.training import recipe
from specviz.training.recipe import (BLOCK_DRAFTER, BLOCK_RUN, CARRY, DRAFTER_CONFIG, DRAFTER_RUN, LLAMA, LOOP, MIX,
                                     MIX_TEXT, MODELS, STEPS, TARGET_CONFIG, TARGET_RUN, TARGET_TEXT, TEXT_ROWS,
                                     VARIANTS, VOCAB_SIZE)


def card(folder: str) -> dict:
    return json.loads((MODELS / folder / "training.json").read_text())


def config(folder: str) -> dict:
    return json.loads((MODELS / folder / "config.json").read_text())


@pytest.mark.parametrize("folder, sizes, run, stage", [("target", TARGET_CONFIG, TARGET_RUN, "target"),
                                                       ("drafter-ar", DRAFTER_CONFIG, DRAFTER_RUN, "drafter")])
def test_the_llama_models_were_trained_with_the_recipes_sizes_steps_and_rates(folder, sizes, run, stage):
    facts = card(folder)
    assert facts["config"] == sizes
    assert (facts["steps"], facts["batch"], facts["seq_len"], facts["lr"]) == (
        STEPS[stage], run["batch"], run["seq_len"], run["lr"])
    assert [p["step"] for p in facts["heldout_curve"]][0] == run["curve_every"]
    shipped = config(folder)
    shipped.update(shipped.pop("rope_parameters"))    # transformers 5 writes rope_theta inside it
    assert {k: shipped[k] for k in (*sizes, *LLAMA)} == {**sizes, **LLAMA}
    assert shipped["vocab_size"] == VOCAB_SIZE


def test_the_carried_runs_stopped_at_the_recipes_steps():
    """checkpoints/ holds each long run's state as a fresh machine resumes it."""
    steps = {run: json.loads((CARRY / run / "state.json").read_text())["step"]
             for run in ("target", "block", "block-mix", "loop")}
    assert steps == {"target": STEPS["target"], "block": STEPS["block"], "block-mix": STEPS["mix"],
                     "loop": STEPS["loop"]}


@pytest.mark.parametrize("folder", ["drafter-dflash", "drafter-dspark", "drafter-dspark-loop"])
def test_the_block_drafters_were_trained_with_the_recipes_block_mix_and_text(folder):
    facts, shipped = card(folder), config(folder)
    loop_aware = shipped["loop_aware"]
    assert (facts["block_size_k"], facts["gamma"]) == (BLOCK_RUN["K"], BLOCK_RUN["gamma"])
    assert facts["loop_stages"] == (BLOCK_RUN["loop_stages"] if loop_aware else 1)
    assert facts["long_shape"] == {"batch": BLOCK_RUN["batch"], "anchors_per_sequence": BLOCK_RUN["anchors"]}
    assert facts["mix"] == MIX == BLOCK_RUN["mix"]
    phases = [(p["text"], p["steps"], p["lr"]) for p in facts["phases"]]
    assert phases == [("long", STEPS["block"], BLOCK_RUN["lr"]), ("mix", STEPS["mix"], MIX["lr"])] + (
        [("mix", STEPS["loop"], BLOCK_RUN["loop_lr"])] if loop_aware else [])
    for phase, files in (("long", TARGET_TEXT), ("mix", MIX_TEXT)):
        written = [(t["file"], t["temperature"], t["seq_len"], t["sequences"], t["prompt_len"]) for t in facts["text"][phase]]
        assert written == [(f, temperature, seq_len, TEXT_ROWS["sequences"], TEXT_ROWS["prompt_len"])
                           for f, (temperature, seed, seq_len) in files.items()]
    variant = LOOP if loop_aware else VARIANTS[folder.removeprefix("drafter-")]
    assert {k: shipped[k] for k in (*BLOCK_DRAFTER, *variant)} == {**BLOCK_DRAFTER, **variant}
    assert shipped["vocab_size"] == VOCAB_SIZE


def test_the_registry_trains_the_folders_the_recipe_has_models_for():
    """Every registered drafter with weights is trained by a recipe stage, and its folder ships."""
    for d in DRAFTERS:
        assert (d.folder is None) == (d.trained_by is None), d
        assert d.trained_by is None or (d.trained_by in recipe.STAGES and (MODELS / d.folder / "config.json").is_file()), d


def test_the_recipe_is_plain_values_the_command_line_reads_without_torch():
    """`python -m specviz train --help` builds its options from STAGES and STEPS on every call."""
    tree = ast.parse(open(recipe.__file__).read())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imported == {"pathlib"}
