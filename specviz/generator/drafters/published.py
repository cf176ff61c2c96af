"""Load a published block drafter into `BlockDrafterModel`, checked against its target.

Three formats, told apart by config.json; none runs the checkpoint's own code:

  z-lab      z-lab/dflash's DFlash drafters (architectures ["DFlashDraftModel"]): a Qwen3 or
             Llama config plus block_size and dflash_config {mask_token_id, target_layer_ids};
             weights fc, hidden_norm, norm and layers.N.*; the target's embeddings and LM head
  deepspec   deepseek-ai/DeepSpec's DSpark and DFlash drafters (["Qwen3DSparkModel"]): the
             target's config plus block_size, mask_token_id, target_layer_ids, markov_rank,
             enable_confidence_head; z-lab's weights plus embed_tokens and lm_head (frozen copies
             of the target's), markov_head.markov_w1/markov_w2 and confidence_head.proj
  native     transformers' own DFlash assistant (model_type "muse_glimmer_assistant"), the
             drafter `generate(..., speculation_type="dflash")` runs: encoder.fc,
             encoder.output_norm_enc, norm and layers.N.*; the target's embeddings and head

DFlash (z-lab, native) reads proposal i from block slot i + 1 after the anchor; DeepSpec reads
it from slot i. DeepSpec's embeddings and head are dropped in favour of the target's when they
are equal to them (they were trained frozen), which saves two vocabulary-sized matrices.

A drafter is refused, with a message naming the file and what does not fit, when its weights
are missing, unexpected or of another shape, when it was made for another vocabulary, hidden
size or depth of target, or when it uses a part this network does not have.

What it leaves out: downloading (the host fetches checkpoints), sharded files beyond the
standard index, DFlash2, DSpark's gated and recurrent heads, Gemma drafters, dynamic rotary.
"""
import json
import re
from pathlib import Path

import torch
from torch import nn

from specviz.generator.drafters.block_model import STATIC_ROPE, BlockDrafterConfig, BlockDrafterModel

# our layer's parameter names -> the published Qwen3-style names
LAYER_NAMES = {"norm1": "input_layernorm", "norm2": "post_attention_layernorm", "q": "self_attn.q_proj",
               "k": "self_attn.k_proj", "v": "self_attn.v_proj", "o": "self_attn.o_proj",
               "q_norm": "self_attn.q_norm", "k_norm": "self_attn.k_norm", "gate": "mlp.gate_proj",
               "up": "mlp.up_proj", "down": "mlp.down_proj"}
TOP_NAMES = {
    "z-lab": {"fc": "fc", "ctx_norm": "hidden_norm", "norm": "norm"},
    "deepspec": {"fc": "fc", "ctx_norm": "hidden_norm", "norm": "norm", "markov_in": "markov_head.markov_w1",
                 "markov_out": "markov_head.markov_w2", "confidence": "confidence_head.proj"},
    "native": {"fc": "encoder.fc", "ctx_norm": "encoder.output_norm_enc", "norm": "norm"},
}
KINDS = {"z-lab": "DFlash · z-lab", "native": "DFlash · transformers"}
REFUSED = {   # architectures we recognise but do not run, and why
    "DFlash2DraftModel": "z-lab's DFlash2 (causal convolutions and a candidate selector) is not supported",
    "Gemma4DSparkModel": "DeepSpec's Gemma 4 drafters are not supported (only its Qwen3 drafters)",
}


class DrafterMismatch(ValueError):
    """A published drafter that cannot be loaded for this target; the message names the file."""


def detect(config: dict, where: Path = Path("config.json")) -> str | None:
    """The published format of a drafter's config.json `where`, or None for anything else.

    >>> detect({"architectures": ["DFlashDraftModel"], "model_type": "qwen3"})
    'z-lab'
    >>> detect({"architectures": ["Qwen3DSparkModel"]}), detect({"model_type": "muse_glimmer_assistant"})
    ('deepspec', 'native')
    >>> detect({"architectures": ["LlamaForCausalLM"]}) is None
    True
    """
    arch = config.get("architectures") or []
    if config.get("model_type") == "muse_glimmer_assistant":
        return "native"
    if "DFlashDraftModel" in arch:
        return "z-lab"
    if "Qwen3DSparkModel" in arch:
        return "deepspec"
    for name, why in REFUSED.items():
        if name in arch:
            raise DrafterMismatch(f"{where}: {why}")
    return None


def published_name(ours: str, fmt: str) -> str:
    """The checkpoint's name for one of our parameters.

    >>> published_name("layers.0.q.weight", "z-lab"), published_name("ctx_norm.weight", "native")
    ('layers.0.self_attn.q_proj.weight', 'encoder.output_norm_enc.weight')
    """
    m = re.fullmatch(r"layers\.(\d+)\.(\w+)\.(weight|bias)", ours)
    if m:
        return f"layers.{m[1]}.{LAYER_NAMES[m[2]]}.{m[3]}"
    module, leaf = ours.rsplit(".", 1)
    return f"{TOP_NAMES[fmt][module]}.{leaf}"


def _value(raw: dict, key: str):
    """z-lab keeps some keys under dflash_config, DeepSpec and transformers at the top."""
    return raw.get("dflash_config", {}).get(key, raw.get(key))


def translate(raw: dict, fmt: str, where: Path) -> BlockDrafterConfig:
    """Our config for a published drafter's config.json (rotary settings standardised by transformers)."""
    from transformers import AutoConfig

    def refuse(why: str):
        raise DrafterMismatch(f"{where}: {why}")

    if "model_type" not in raw:
        refuse("model_type is missing")
    src = AutoConfig.for_model(raw["model_type"], **{k: v for k, v in raw.items() if k != "model_type"})
    if getattr(src, "hidden_act", "silu") != "silu":
        refuse(f"hidden_act {src.hidden_act!r}; these drafters' MLP is SiLU-gated")
    rope = dict(src.rope_parameters)
    if rope.get("rope_type", "default") not in STATIC_ROPE or rope.get("partial_rotary_factor", 1.0) != 1.0:
        refuse(f"rotary settings {rope} are not supported (types: {', '.join(STATIC_ROPE)}, whole head)")
    for key in ("input_embedding_scale", "output_multiplier", "final_logit_softcapping"):
        if _value(raw, key) not in (None, 1.0):
            refuse(f"{key} = {_value(raw, key)} is not supported")
    layer_types = getattr(src, "layer_types", None) or ["full_attention"] * src.num_hidden_layers
    if fmt != "native" and "sliding_attention" in layer_types:
        refuse("sliding-window draft layers are supported in transformers' format only")
    for key in ("block_size", "mask_token_id", "target_layer_ids"):
        if _value(raw, key) is None:
            refuse(f"{key} is missing")
    markov = int(raw.get("markov_rank", 0)) if fmt == "deepspec" else 0
    if markov and raw.get("markov_head_type", "vanilla") != "vanilla":
        refuse(f"markov_head_type {raw['markov_head_type']!r}: only DSpark's vanilla Markov head is supported")
    confidence = fmt == "deepspec" and bool(raw.get("enable_confidence_head", False))
    kind = KINDS.get(fmt) or f"{'DSpark' if markov or confidence else 'DFlash'} · DeepSpec"
    return BlockDrafterConfig(
        hidden_size=src.hidden_size, num_layers=src.num_hidden_layers, num_heads=src.num_attention_heads,
        num_kv_heads=src.num_key_value_heads, head_dim=getattr(src, "head_dim", None) or
        src.hidden_size // src.num_attention_heads, intermediate_size=src.intermediate_size,
        target_layers=list(_value(raw, "target_layer_ids")), vocab_size=raw.get("vocab_size"),
        mask_token_id=int(_value(raw, "mask_token_id")), markov_rank=markov, rms_norm_eps=src.rms_norm_eps,
        qk_norm=True, attention_bias=bool(getattr(src, "attention_bias", False)), rope_settings=rope,
        max_position_embeddings=src.max_position_embeddings,
        attention_windows=[src.sliding_window if t == "sliding_attention" else None for t in layer_types],
        read_from_slot=0 if fmt == "deepspec" else 1, confidence_head=confidence,
        confidence_with_markov=bool(raw.get("confidence_head_with_markov", False)), kind=kind,
        trained_block_size=int(_value(raw, "block_size")))


def read_weights(path: Path) -> tuple[dict, Path]:
    """Every tensor of a checkpoint folder (one safetensors file, or shards with an index)."""
    from safetensors.torch import load_file

    single, index = path / "model.safetensors", path / "model.safetensors.index.json"
    if single.is_file():
        return load_file(single), single
    if index.is_file():
        weights = {}
        for shard in sorted(set(json.loads(index.read_text())["weight_map"].values())):
            weights.update(load_file(path / shard))
        return weights, index
    raise DrafterMismatch(f"{path}: no model.safetensors (or model.safetensors.index.json) there")


def check_target(cfg: BlockDrafterConfig, raw: dict, fmt: str, target, where: Path):
    """Refuse a drafter made for another target: vocabulary, hidden size, the layers it reads."""
    text = target.config.get_text_config()
    vocab, hidden, depth = target.get_output_embeddings().weight.shape[0], text.hidden_size, text.num_hidden_layers
    if cfg.vocab_size is not None and cfg.vocab_size != vocab:
        raise DrafterMismatch(f"{where}: made for a vocabulary of {cfg.vocab_size} tokens; the target scores {vocab}")
    if not 0 <= cfg.mask_token_id < vocab:
        raise DrafterMismatch(f"{where}: mask_token_id {cfg.mask_token_id} is not a token of the target's {vocab}")
    if cfg.hidden_size != hidden:
        raise DrafterMismatch(f"{where}: hidden size {cfg.hidden_size}; the target's is {hidden} (the drafter "
                              f"reads the target's embeddings and feeds its LM head, so they must agree)")
    trained_on = raw.get("num_target_layers")
    if trained_on is not None and trained_on != depth:
        raise DrafterMismatch(f"{where}: made for a target of {trained_on} layers; this target has {depth}")
    lowest = -1 if fmt == "deepspec" else 0   # DeepSpec's -1 is the embedding output
    bad = [i for i in cfg.target_layers if not lowest <= i < depth]
    if bad:
        raise DrafterMismatch(f"{where}: reads target layers {bad}, but the target has layers {lowest}..{depth - 1}")


def load_published(path: Path, target, device, dtype) -> BlockDrafterModel:
    """The drafter in folder `path`, on `device` in `dtype`, reading `target`; DrafterMismatch if it does not fit."""
    where = path / "config.json"
    raw = json.loads(where.read_text())
    fmt = detect(raw, where)
    if fmt is None:
        raise DrafterMismatch(f"{where}: not a published block drafter (z-lab, DeepSpec or transformers' DFlash)")
    cfg = translate(raw, fmt, where)
    weights, source = read_weights(path)
    io = {}
    if fmt == "deepspec":
        io = {k: weights.pop(k, None) for k in ("embed_tokens.weight", "lm_head.weight")}
        missing = [k for k, v in io.items() if v is None]
        if missing:
            raise DrafterMismatch(f"{source}: missing weights {', '.join(missing)}")
        cfg.vocab_size = io["embed_tokens.weight"].shape[0]
    check_target(cfg, raw, fmt, target, where)
    with torch.device("meta"):
        model = BlockDrafterModel(cfg)
    ours = {published_name(n, fmt): n for n in model.state_dict()}
    missing, unexpected = sorted(set(ours) - set(weights)), sorted(set(weights) - set(ours))
    if missing or unexpected:
        raise DrafterMismatch(f"{source}: " + "; ".join(
            f"{what} weights {', '.join(names[:4])}{' …' if len(names) > 4 else ''}"
            for what, names in (("missing", missing), ("unexpected", unexpected)) if names))
    expected = model.state_dict()
    for name, mine in ours.items():
        if tuple(weights[name].shape) != tuple(expected[mine].shape):
            raise DrafterMismatch(f"{source}: {name} has shape {list(weights[name].shape)}, "
                                  f"the config asks for {list(expected[mine].shape)}")
    model.load_state_dict({ours[n]: t.to(dtype) for n, t in weights.items()}, assign=True)
    model = model.to(device).eval()
    embed, head = target.get_input_embeddings(), target.get_output_embeddings()
    if io and not (torch.equal(io["embed_tokens.weight"].to(embed.weight), embed.weight)
                   and torch.equal(io["lm_head.weight"].to(head.weight), head.weight)):
        # trained with embeddings or a head of its own: keep them, outside the model's parameters
        embed = nn.Embedding.from_pretrained(io["embed_tokens.weight"].to(device, dtype))
        head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False, device=device, dtype=dtype)
        head.weight.data = io["lm_head.weight"].to(device, dtype)
    return model.use_io(embed, head)
