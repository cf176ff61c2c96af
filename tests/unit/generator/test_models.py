"""The shipped models: loadable with from_pretrained, and the target is the better model."""
import json
import math

import torch
from transformers import AutoModelForCausalLM

from specviz.generator.drafters.block_model import BlockDrafterModel
from specviz.generator.models import MODELS_DIR
from specviz.lessons.workloads import WORKLOADS

HELDOUT = [
    "Mrs. Bennet was not in the least disposed to be pleased with the arrangement, for she had set "
    "her heart upon seeing her daughter settled at Netherfield before the end of the winter.",
    "It was a very pleasant evening, and the whole party walked together to the parsonage, where "
    "they found Mr. Collins waiting for them at the gate with his usual ceremony.",
]


@torch.no_grad()
def perplexity(model, tok, text: str) -> float:
    ids = torch.tensor([[tok.eos_token_id] + tok.encode(text)])
    logits = model(ids).logits[0, :-1]
    return math.exp(torch.nn.functional.cross_entropy(logits.float(), ids[0, 1:]).item())


def test_every_shipped_model_has_a_card_and_loads_from_its_folder(models):
    for sub in ["target", "drafter-ar", "drafter-dflash", "drafter-dspark", "drafter-dspark-loop"]:
        path = MODELS_DIR / sub
        assert (path / "README.md").exists() and (path / "config.json").exists(), sub
        facts = json.loads((path / "training.json").read_text())
        assert facts["parameters"] > 0 and facts["train_seconds"] > 0
    assert isinstance(BlockDrafterModel.from_pretrained(MODELS_DIR / "drafter-dspark"), BlockDrafterModel)


def test_target_beats_the_drafter_on_text_neither_was_trained_on(models):
    """On both workloads: prose passages and held-out standard-library functions."""
    tok = models.tokenizer
    target = AutoModelForCausalLM.from_pretrained(MODELS_DIR / "target", dtype=torch.float32)
    drafter = AutoModelForCausalLM.from_pretrained(MODELS_DIR / "drafter-ar", dtype=torch.float32)
    for text in HELDOUT + WORKLOADS["code"][-2:]:
        assert perplexity(target, tok, text) < 0.9 * perplexity(drafter, tok, text)


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
