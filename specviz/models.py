"""Load a model set: the tokenizer, the target, and the drafters that share its tokenizer.

The embedded set lives in `models/` (trained here by `python -m specviz train`). Device and
dtype: CUDA, then Apple MPS, then CPU; half precision on a GPU, fp32 on the CPU (the shipped
bf16 weights are upcast, because CPU matmuls in bf16 are slow and less exact).

What it leaves out: host-configured model sets from a config file (their own module).
"""
import os
from dataclasses import dataclass, field
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.utils import logging as hf_logging

from specviz.drafters.autoregressive import AutoregressiveDrafter
from specviz.drafters.base import Drafter
from specviz.drafters.prompt_lookup import PromptLookupDrafter

hf_logging.disable_progress_bar()
MODELS_DIR = Path(os.environ.get("SPECVIZ_MODELS_DIR", Path(__file__).resolve().parents[1] / "models"))
EMBEDDED = {"target": "target", "drafters": {"ar": "drafter-ar", "lookup": None}}
DRAFTER_LABELS = {"ar": "autoregressive (1-layer model)", "lookup": "prompt lookup (no model)"}


def pick_device(device: str | None = None) -> tuple[torch.device, torch.dtype]:
    if device is None:
        device = "cuda" if torch.cuda.is_available() else (
            "mps" if torch.backends.mps.is_available() else "cpu")
    dev = torch.device(device)
    return dev, (torch.float32 if dev.type == "cpu" else torch.bfloat16 if dev.type == "cuda" else torch.float16)


@dataclass
class ModelSet:
    name: str
    tokenizer: object
    target: torch.nn.Module
    drafter_models: dict           # name -> model, or None for model-free drafters
    paths: dict                    # {"target": path, "drafters": {name: path or None}}
    device: torch.device
    dtype: torch.dtype
    token_text: list[str] = field(default_factory=list)   # decoded text of every token id

    @property
    def eos_id(self) -> int:
        return self.tokenizer.eos_token_id

    @property
    def max_context(self) -> int:
        return self.target.config.max_position_embeddings

    def drafter(self, name: str) -> Drafter:
        """A fresh drafter (its own state) for one generation."""
        if name not in self.drafter_models:
            raise ValueError(f"unknown drafter {name!r}; this model set has {sorted(self.drafter_models)}")
        if name == "lookup":
            return PromptLookupDrafter(len(self.token_text))
        return AutoregressiveDrafter(self.drafter_models[name])


def load_model(path: Path, device, dtype):
    return AutoModelForCausalLM.from_pretrained(path, dtype=dtype).to(device).eval()


def load_embedded(device: str | None = None, models_dir: Path = MODELS_DIR) -> ModelSet:
    """Load the shipped models; raises FileNotFoundError naming what is missing."""
    dev, dtype = pick_device(device)
    target_path = models_dir / EMBEDDED["target"]
    if not (target_path / "config.json").exists():
        raise FileNotFoundError(f"no target model at {target_path}: run `python -m specviz train`")
    tok = AutoTokenizer.from_pretrained(target_path)
    drafters, paths = {}, {}
    for name, sub in EMBEDDED["drafters"].items():
        if sub is None:
            drafters[name], paths[name] = None, None
        elif (models_dir / sub / "config.json").exists():
            drafters[name] = load_model(models_dir / sub, dev, dtype)
            paths[name] = str(models_dir / sub)
    target = load_model(target_path, dev, dtype)
    text = [tok.decode([i]) for i in range(len(tok))]
    return ModelSet("embedded", tok, target, drafters, {"target": str(target_path), "drafters": paths},
                    dev, dtype, text)
