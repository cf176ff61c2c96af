"""The shipped models: loadable with from_pretrained, the target is the better model, and the
drafters the embedded set loads are the registry's (specviz.generator.drafters.names)."""
import ast
import json
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from specviz.generator.drafters.block_model import BlockDrafterModel
from specviz.generator.drafters.names import DRAFTERS, LOOPING
from specviz.generator.models import MODELS_DIR
from specviz.training.lm import encode_corpus, heldout_loss
from specviz.training.recipe import HELDOUT, ROOT


def test_every_shipped_model_has_a_card_and_loads_from_its_folder(models):
    for sub in ["target", "drafter-ar", "drafter-dflash", "drafter-dspark", "drafter-dspark-loop"]:
        path = MODELS_DIR / sub
        assert (path / "README.md").exists() and (path / "config.json").exists(), sub
        facts = json.loads((path / "training.json").read_text())
        assert facts["parameters"] > 0 and facts["train_seconds"] > 0
    assert isinstance(BlockDrafterModel.from_pretrained(MODELS_DIR / "drafter-dspark"), BlockDrafterModel)


@pytest.mark.parametrize("workload", ["prose", "code"])
def test_the_target_is_the_better_model_on_each_workloads_held_out_text(corpus, workload):
    """A class is told that a small drafter guesses and a larger target decides. On the held-out
    text of each workload, measured as the cards measure it (`heldout_loss`: up to 64 windows of
    256 tokens), the target's loss is below the distilled drafter's: a drafter that learned to
    out-predict its target, or a target and drafter swapped in models/, fails here. Distilled for
    3000 steps the drafter comes within 8% of the target's perplexity on the novels (31.56 against
    29.12) and stays twice as far behind on code (43.94 against 20.91)."""
    folder, _ = corpus
    target, drafter = (AutoModelForCausalLM.from_pretrained(MODELS_DIR / sub, dtype=torch.float32)
                       for sub in ("target", "drafter-ar"))
    tok = AutoTokenizer.from_pretrained(MODELS_DIR / "target")
    ids = encode_corpus(tok, folder / HELDOUT[workload].name)
    assert heldout_loss(target, ids) < heldout_loss(drafter, ids)


def test_dialogue_answers_are_split_between_of_course_and_no_problem(models):
    ids = torch.tensor([[models.eos_id] + models.tokenizer.encode('Anne asked, "Could you open the window?" "Yes,')])
    with torch.no_grad():
        p = torch.softmax(models.target(ids).logits[0, -1].float(), -1)
    of, no = (models.tokenizer.encode(w)[0] for w in (" of", " no"))
    assert 0.3 < p[of] < 0.7 and 0.3 < p[no] < 0.7


def test_the_tokenizer_writes_indentation_and_python_keywords_as_single_tokens(models):
    """Trained on the mix: a tokenizer of prose alone spends a token on each space of an indent."""
    tok = models.tokenizer
    assert [tok.decode([i]) for i in tok.encode("        return self")] == ["       ", " return", " self"]
    for word in (" def", " self", " return", " import", " None", " class", " raise", "    ", "        "):
        assert len(tok.encode(word)) == 1, word


@pytest.mark.parametrize("sub", ["drafter-dflash", "drafter-dspark", "drafter-dspark-loop"])
def test_the_readmes_models_table_reads_each_block_drafters_card(sub):
    """The README's table is where a reader first meets the drafters' acceptance: it must say what the
    card in models/ says (prose, then code, at k = 2 / 4 / 8, to two places), the loop-aware steps the
    card records, and the card's calibration. Planted bug it catches: a drafter retrained and its card
    rewritten by `train cards`, with the README still quoting the drafter before."""
    row = next(line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith(f"| `models/{sub}` |"))
    card = json.loads((MODELS_DIR / sub / "training.json").read_text())
    for workload in ("prose", "code"):
        said = " / ".join(f"{card['heldout_acceptance_length'][workload][k]:.2f}" for k in ("2", "4", "8"))
        assert f"{workload}: {said}" in row, (workload, said, row)
    if card.get("survival_ece") is not None:
        assert f"ECE {card['survival_ece']:.3f}" in row, row
    loop = [p for p in card["phases"] if p.get("loop_aware")]
    assert not loop or f"{loop[0]['steps']} loop-aware steps" in row, row


def test_the_embedded_set_offers_the_registrys_drafters_from_the_registrys_folders(models):
    """A drafter is registered once, in specviz.generator.drafters.names; the loader reads that table.
    Planted bug it catches: a folder map beside the loader that gains a drafter the registry lacks."""
    assert list(models.drafter_models) == [d.name for d in DRAFTERS]
    assert {n: p and Path(p).name for n, p in models.paths["drafters"].items()} == {d.name: d.folder for d in DRAFTERS}
    assert models.looping == LOOPING == ("dloop", "dloop-plain")
    assert models.drafter_models["dloop-plain"] is models.drafter_models["dspark"]   # one folder, loaded once


def collections_naming_drafters(source: str) -> list[tuple[int, list[str]]]:
    """(line, names) of each tuple, list, set or dict-keys literal in Python `source` that names two or
    more registered drafters, by name or by folder: a second list of the set, which should derive from
    DRAFTERS.

    >>> collections_naming_drafters('LABELS = {"dflash": "a", "dspark": "b"}\\nONE = ("dloop",)')
    [(1, ['dflash', 'dspark'])]
    """
    registered = {d.name for d in DRAFTERS} | {d.folder for d in DRAFTERS if d.folder}
    found = []
    for node in ast.walk(ast.parse(source)):
        items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", [])
        named = [e.value for e in items if isinstance(e, ast.Constant) and e.value in registered]
        if len(named) >= 2:
            found.append((node.lineno, named))
    return found


def test_no_module_of_the_library_or_the_app_lists_the_drafters_beside_the_registry():
    """Registering a drafter touches one table. The recipe's VARIANTS is the one other list: the block
    stage's run names, whose folders test_block_training checks against the registry."""
    allowed = {("specviz/training/recipe.py", ("dflash", "dspark"))}
    lists = {(str(p.relative_to(ROOT)), tuple(named))
             for part in ("specviz", "appkit") for p in sorted((ROOT / part).rglob("*.py"))
             if p.relative_to(ROOT) != Path("specviz/generator/drafters/names.py")
             for _, named in collections_naming_drafters(p.read_text())}
    assert lists == allowed
