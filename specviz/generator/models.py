"""Load a model set: the tokenizer, the target, and the drafters that share its tokenizer.

The embedded set lives in `models/` (trained here by `python -m specviz train`). Device: CUDA,
then Apple MPS, then CPU. The embedded models run in fp32 on every device (the shipped bf16
weights are upcast): on the CPU bf16 matmuls are slow and less exact, and on a GPU models this
small are bound by kernel launches, not arithmetic, so half precision would buy no speed and
would make the lessons' numbers differ from device to device. Large models a host configures
default to half precision on a GPU (specviz.generator.devices.pick_device).

The embedded drafters and their folders are the registry's (specviz.generator.drafters.names).
Drafter folders load by what their config.json says (`load_model`): our block drafters, the
published block drafters of z-lab, DeepSpec and transformers (specviz.generator.drafters.published,
checked against the target), or else a causal LM.

What it leaves out: host-configured model sets from a config file (their own module).
"""
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.utils import logging as hf_logging

from specviz.generator.cpu_linear import use_fast_layouts
from specviz.generator.devices import pick_device
from specviz.generator.drafters.autoregressive import AutoregressiveDrafter
from specviz.generator.drafters.base import Drafter
from specviz.generator.drafters.block import BlockDrafter
from specviz.generator.drafters.block_model import BlockDrafterConfig, BlockDrafterModel
from specviz.generator.drafters.names import EMBEDDED_FOLDERS, LOOPING
from specviz.generator.drafters.published import detect, load_published
from specviz.generator.drafters.prompt_lookup import PromptLookupDrafter

hf_logging.disable_progress_bar()
MODELS_DIR = Path(os.environ.get("SPECVIZ_MODELS_DIR", Path(__file__).resolve().parents[2] / "models"))


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
    looping: tuple = LOOPING       # drafters that run DLoop's stages
    chat: bool = False             # prompts go through the tokenizer's chat template (`chat_ids`)

    @property
    def eos_id(self) -> int:
        return self.tokenizer.eos_token_id

    @property
    def max_context(self) -> int:
        return self.target.config.max_position_embeddings

    def drafter(self, name: str, loop_threshold: float = -2.0, max_stages: int = 3) -> Drafter:
        """A fresh drafter (its own state) for one generation."""
        if name not in self.drafter_models:
            raise ValueError(f"unknown drafter {name!r}; this model set has {sorted(self.drafter_models)}")
        model = self.drafter_models[name]
        if name == "lookup":
            return PromptLookupDrafter(len(self.token_text))
        if isinstance(model, BlockDrafterModel):
            return BlockDrafter(model, name, loop_threshold, max_stages if name in self.looping else 1)
        return AutoregressiveDrafter(model)

    def block_drafters(self, confidence: bool = False, markov: bool = False) -> list[str]:
        """Block drafters drafting one stage a round, in set order; only those with a confidence head
        or a Markov head, if asked."""
        return [n for n, m in self.drafter_models.items() if isinstance(m, BlockDrafterModel)
                and n not in self.looping and (m.config.confidence_head or not confidence)
                and (m.config.markov_rank or not markov)]

    def kind(self, name: str) -> str | None:
        """What a published block drafter is ("DSpark · DeepSpec"); None for the others.

        >>> load_embedded().kind("dspark") is None   # doctest: +SKIP
        True
        """
        model = self.drafter_models.get(name)
        return model.config.kind if isinstance(model, BlockDrafterModel) else None

    def chat_ids(self, prompt: str) -> list[int]:
        """The prompt as one user turn through the chat template, ready for the answer, thinking off.

        `enable_thinking=False` is how Qwen3's template leaves the thinking section empty; other
        templates ignore it.
        """
        return list(self.tokenizer.apply_chat_template([{"role": "user", "content": prompt}], tokenize=True,
                                                       add_generation_prompt=True, enable_thinking=False,
                                                       return_dict=False))


def ready(model: torch.nn.Module, device: torch.device) -> torch.nn.Module:
    """Moved to `device` for inference; on the CPU its linear layers use the faster weight layouts."""
    model = model.to(device).eval()
    if device.type == "cuda":
        # cuDNN's attention builds a plan for every new sequence length, and a generation meets a
        # new length every round: on an H200 a first pass over each length cost about 60 ms against
        # 6 ms once planned. The flash and memory-efficient kernels need no plan.
        torch.backends.cuda.enable_cudnn_sdp(False)
    return use_fast_layouts(model) if device.type == "cpu" else model


def load_model(source: str | Path, device, dtype, target=None, **hub):
    """The one loader of every model a set holds, ready for inference on `device`: a block drafter
    reading `target` if its folder's config says so (ours or a published one), else a causal LM
    from a local folder or a Hugging Face hub id.

    `hub` goes to from_pretrained (local_files_only, trust_remote_code) for a causal LM.
    """
    path = Path(source)
    config = json.loads((path / "config.json").read_text()) if (path / "config.json").is_file() else {}
    if config.get("model_type") == BlockDrafterConfig.model_type:
        return ready(BlockDrafterModel.from_pretrained(path, dtype=dtype), device).attach_target(target)
    if config and detect(config, path / "config.json"):
        return ready(load_published(path, target, device, dtype), device)
    return ready(AutoModelForCausalLM.from_pretrained(str(source), dtype=dtype, **hub), device)


def load_embedded(device: str | None = None, models_dir: Path = MODELS_DIR) -> ModelSet:
    """Load the shipped models; raises FileNotFoundError naming what is missing."""
    dev, dtype = pick_device(device)[0], torch.float32
    target_path = models_dir / "target"
    if not (target_path / "config.json").exists():
        raise FileNotFoundError(f"no target model at {target_path}: run `python -m specviz train`")
    tok = AutoTokenizer.from_pretrained(target_path)
    target = load_model(target_path, dev, dtype)
    drafters, paths, loaded = {}, {}, {}
    for name, sub in EMBEDDED_FOLDERS.items():   # the drafter registry (specviz.generator.drafters.names)
        if sub is None:
            drafters[name], paths[name] = None, None
        elif (models_dir / sub / "config.json").exists():
            if sub not in loaded:   # dloop-plain shares the DSpark weights
                loaded[sub] = load_model(models_dir / sub, dev, dtype, target)
            drafters[name], paths[name] = loaded[sub], str(models_dir / sub)
    text = [tok.decode([i]) for i in range(len(tok))]
    return ModelSet("embedded", tok, target, drafters, {"target": str(target_path), "drafters": paths},
                    dev, dtype, text)
