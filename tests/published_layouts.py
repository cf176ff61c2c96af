"""Tiny block drafters for the embedded target, written the way each publisher writes them.

transformers' native DFlash assistant is built and saved by transformers itself
(MuseGlimmerAssistantModel.save_pretrained). z-lab's and DeepSpec's layouts are written by hand
from their published parameter names, with the same backbone weights renamed, so a z-lab load
that differs from transformers' network in any tensor drafts other tokens.

What it leaves out: real weights (these are random); the formats' other files (tokenizer, code).
"""
import json
from pathlib import Path

import torch
from safetensors.torch import save_file
from transformers import MuseGlimmerAssistantConfig, MuseGlimmerAssistantModel

TARGET_LAYERS = [1, 4, 6]
MASK = 1            # the embedded tokenizer's mask token
ROPE = {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 2.0, "original_max_position_embeddings": 256}
SHAPE = dict(hidden_size=384, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-6, max_position_embeddings=512)


def native(folder: Path, block_size: int = 5, window: int = 6, seed: int = 0, target=None, steer: int | None = None) -> dict:
    """transformers' own DFlash assistant: layer 0 slides over `window` positions (None: it sees all), layer 1 sees all.
    Returns its weights (transformers' names) for the hand-written layouts.

    With `steer` (a token id of `target`, whose embeddings must be tied to its head), the layers'
    outputs are scaled down and the final norm is set so that a mask slot scores like that
    token's own embedding: the drafter proposes `steer` unless its context sways it, and a
    target that writes `steer` often accepts some of its proposals."""
    config = MuseGlimmerAssistantConfig(**SHAPE, rope_parameters=dict(ROPE), sliding_window=window or 2048,
                                        layer_types=["full_attention" if window is None else "sliding_attention",
                                                     "full_attention"], block_size=block_size,
                                        mask_token_id=MASK, target_layer_ids=TARGET_LAYERS, initializer_range=0.08)
    torch.manual_seed(seed)
    model = MuseGlimmerAssistantModel(config).eval()
    with torch.no_grad():   # norms away from 1, so a norm read from the wrong tensor shows
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1 + 0.3 * torch.randn(p.shape))
            if steer is not None and ("o_proj" in name or "down_proj" in name):
                p.mul_(0.01)
        if steer is not None:
            table = target.get_input_embeddings().weight
            mask = table[MASK].float()
            model.norm.weight.copy_(40 * table[steer] * mask.pow(2).mean().add(config.rms_norm_eps).sqrt() / mask)
    model.save_pretrained(folder)
    return {k: v.clone() for k, v in model.state_dict().items()}


def zlab_config(block_size: int, **extra) -> dict:
    """A z-lab config.json: the target family's config (Qwen3) plus DFlash's keys."""
    return {"architectures": ["DFlashDraftModel"], "model_type": "qwen3", "auto_map": {"AutoModel": "dflash.DFlashDraftModel"},
            **SHAPE, "vocab_size": 6144, "hidden_act": "silu", "attention_bias": False, "rope_parameters": dict(ROPE),
            "layer_types": ["full_attention"] * SHAPE["num_hidden_layers"], "num_target_layers": 8,
            "block_size": block_size, "dflash_config": {"mask_token_id": MASK, "target_layer_ids": TARGET_LAYERS},
            "tie_word_embeddings": False, "dtype": "float32"} | extra


def zlab_weights(native_weights: dict) -> dict:
    """transformers' names -> z-lab's: the context projection is fc and hidden_norm at the top."""
    rename = {"encoder.fc.weight": "fc.weight", "encoder.output_norm_enc.weight": "hidden_norm.weight"}
    return {rename.get(k, k): v for k, v in native_weights.items()}


def write(folder: Path, config: dict, weights: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    save_file({k: v.contiguous() for k, v in weights.items()}, folder / "model.safetensors")
    return folder


def deepspec_config(block_size: int, markov_rank: int, confidence: bool, **extra) -> dict:
    """A DeepSpec config.json: the target's (Qwen3) config plus DSpark's keys."""
    return zlab_config(block_size) | {"architectures": ["Qwen3DSparkModel"], "mask_token_id": MASK,
                                      "target_layer_ids": TARGET_LAYERS, "markov_rank": markov_rank,
                                      "markov_head_type": "vanilla", "enable_confidence_head": confidence,
                                      "confidence_head_with_markov": confidence and markov_rank > 0,
                                      "num_anchors": 512} | extra


def deepspec_weights(native_weights: dict, target, markov_rank: int, confidence: bool, seed: int = 1) -> dict:
    """z-lab's backbone plus copies of the target's embeddings and head, the Markov and confidence heads."""
    gen = torch.Generator().manual_seed(seed)
    out = zlab_weights(native_weights) | {
        "embed_tokens.weight": target.get_input_embeddings().weight.detach().clone(),
        "lm_head.weight": target.get_output_embeddings().weight.detach().clone()}
    if markov_rank:
        out["markov_head.markov_w1.weight"] = torch.randn(6144, markov_rank, generator=gen)
        out["markov_head.markov_w2.weight"] = torch.randn(6144, markov_rank, generator=gen) * 0.5
    if confidence:
        out["confidence_head.proj.weight"] = torch.randn(1, 384 + markov_rank, generator=gen) * 0.1
        out["confidence_head.proj.bias"] = torch.zeros(1)
    return out
