"""The block drafter network (DFlash mechanics, with DSpark's optional heads).

No embeddings or LM head of its own: it borrows the target's, frozen (`attach_target`).

  context features  f_j = RMSNorm(W_fc [h_j^(l1) ; h_j^(l2) ; h_j^(l3)])   target layers l1..l3
  block input       [anchor, mask, mask, ...]  embedded with the target's embeddings
  each draft layer  queries from the block; keys/values from [context ; block] with the SAME
                    k/v projections; no mask inside the block (bidirectional), every block
                    position sees all of its context
  output            the target's LM head over RMSNorm(h): one proposal per input position
                    (position i predicts the token i+1 places after the anchor)

DSpark heads (when `markov_rank > 0`):
  Markov head       bias(x_{k-1}) = W2 W1[x_{k-1}], W1 an embedding of rank r, added to the
                    base logits of position k; x_0 is the anchor
  confidence head   c_k = sigmoid(w . [h_k ; W1[x_{k-1}]] + b): P(position k survives | all
                    before it did)

Positions use rotary embeddings at their absolute positions, so cached context keys stay valid
as the text grows. `forward_block` takes explicit context keys/values, which is what lets the
engine cache them and DLoop append provisional ones.

The published drafters (specviz.generator.drafters.published) are the same network with more
of the knobs a Qwen3 or Llama layer has: grouped-query attention (fewer key/value heads than
query heads) with an explicit head size, RMS norms on queries and keys per head, biases on the
attention projections, the target's rotary settings (scaled variants included) at any position
the target's context reaches, sliding-window layers, and the read-out convention: DSpark reads
proposal i from block slot i (`read_from_slot` 0: the anchor's own slot predicts the next
token), DFlash reads it from slot i + 1 (`read_from_slot` 1: the block holds k + 1 slots and
the anchor slot's output is dropped). The defaults are the embedded drafters' network.

What it leaves out: the recurrent and gated DSpark heads, DFlash2's convolutions and candidate
selector, causal draft layers, tree drafts.
"""
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import PretrainedConfig, PreTrainedModel
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS


class BlockDrafterConfig(PretrainedConfig):
    model_type = "specviz_block_drafter"

    # the rotary functions of transformers read the head count under this name
    attribute_map = {"num_attention_heads": "num_heads"}

    def __init__(self, hidden_size=384, num_layers=1, num_heads=6, intermediate_size=1024,
                 target_layers=(1, 4, 6), vocab_size=4096, mask_token_id=1, markov_rank=0,
                 rope_theta=10000.0, rms_norm_eps=1e-6, loop_aware=False, confidence_temperature=None,
                 num_kv_heads=None, head_dim=None, qk_norm=False, attention_bias=False, rope_settings=None,
                 max_position_embeddings=None, attention_windows=None, read_from_slot=0,
                 confidence_head=None, confidence_with_markov=True, kind=None, trained_block_size=None,
                 **kwargs):
        self.hidden_size, self.num_layers, self.num_heads = hidden_size, num_layers, num_heads
        self.intermediate_size, self.target_layers = intermediate_size, list(target_layers)
        self.vocab_size, self.mask_token_id, self.markov_rank = vocab_size, mask_token_id, markov_rank
        self.rope_theta, self.rms_norm_eps, self.loop_aware = rope_theta, rms_norm_eps, loop_aware
        # per block position, set by calibration (specviz.training.calibrate); None = 1 everywhere
        self.confidence_temperature = confidence_temperature
        self.num_kv_heads, self.head_dim = num_kv_heads or num_heads, head_dim or hidden_size // num_heads
        self.qk_norm, self.attention_bias = qk_norm, attention_bias
        # None: rope_theta with the embedded drafters' formula; else transformers' rope_parameters
        self.rope_settings, self.max_position_embeddings = rope_settings, max_position_embeddings
        self.attention_windows = attention_windows   # per layer: None (full) or W (keys within W positions)
        self.read_from_slot = read_from_slot
        self.confidence_head = bool(markov_rank) if confidence_head is None else confidence_head
        self.confidence_with_markov = confidence_with_markov
        self.kind = kind   # what the sidebar calls it, e.g. "DFlash · z-lab"; None: the embedded drafters
        self.trained_block_size = trained_block_size   # a published drafter's block_size, as its authors count it
        super().__init__(**kwargs)


ROTARY_POSITIONS = 4096   # the rotary table's first length: the context (512) plus DLoop's stages, with room
STATIC_ROPE = ("default", "linear", "llama3", "yarn")   # rotary types whose angles do not depend on the length


def inverse_frequencies(c: BlockDrafterConfig, device) -> tuple[torch.Tensor, float]:
    """Rotary inverse frequencies [head_dim / 2] and the factor cos and sin are scaled by.

    The embedded drafters were trained with theta^(-2i/d); published drafters use transformers'
    formulas for their rope_parameters, which differ from it in the last bits.

    >>> inverse_frequencies(BlockDrafterConfig(hidden_size=8, num_heads=2), "cpu")[0].tolist()
    [1.0, 0.009999999776482582]
    >>> c = BlockDrafterConfig(hidden_size=8, num_heads=2, rope_settings={"rope_type": "linear", "rope_theta": 100.0, "factor": 2.0})
    >>> inverse_frequencies(c, "cpu")
    (tensor([0.5000, 0.0500]), 1.0)
    """
    dim = c.head_dim
    if c.rope_settings is None:
        return c.rope_theta ** (-torch.arange(0, dim, 2, device=device, dtype=torch.float32) / dim), 1.0
    kind = c.rope_settings.get("rope_type", "default")
    if kind == "default":
        steps = torch.arange(0, dim, 2, dtype=torch.int64, device=device).float() / dim
        return 1.0 / (c.rope_settings["rope_theta"] ** steps), 1.0
    view = copy.copy(c)
    view.rope_parameters = dict(c.rope_settings)
    return ROPE_INIT_FUNCTIONS[kind](view, device)


def rotary_table(inv_freq: torch.Tensor, positions: int, dtype, scale: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of the angles pos * inv_freq for pos < positions, times scale: [positions, 2 * len(inv_freq)] each.

    Built once per model and length (see `BlockDrafterModel.rotary`): computing the angles in
    every call was a dozen small tensor ops per layer, paid each round in drafting and in commit.

    >>> cos, sin = rotary_table(torch.tensor([1.0, 0.01]), 4096, torch.float32)
    >>> cos.shape, cos[0].tolist(), [round(v, 4) for v in sin[1].tolist()]
    (torch.Size([4096, 4]), [1.0, 1.0, 1.0, 1.0], [0.8415, 0.01, 0.8415, 0.01])
    """
    ang = torch.arange(positions, device=inv_freq.device, dtype=torch.float32)[:, None] * inv_freq[None]
    return (torch.cat([ang.cos()] * 2, -1) * scale).to(dtype), (torch.cat([ang.sin()] * 2, -1) * scale).to(dtype)


def rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate pairs of channels of x [..., T, d] by the angles whose cos and sin are [T, d]."""
    d = x.size(-1)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return x * cos + torch.cat([-x2, x1], -1) * sin


class DraftLayer(nn.Module):
    def __init__(self, c: BlockDrafterConfig, window: int | None = None):
        super().__init__()
        self.heads, self.kv_heads, self.dh, self.window = c.num_heads, c.num_kv_heads, c.head_dim, window
        h, qd, kvd, bias = c.hidden_size, c.num_heads * c.head_dim, c.num_kv_heads * c.head_dim, c.attention_bias
        self.norm1, self.norm2 = nn.RMSNorm(h, eps=c.rms_norm_eps), nn.RMSNorm(h, eps=c.rms_norm_eps)
        self.q, self.k = nn.Linear(h, qd, bias=bias), nn.Linear(h, kvd, bias=bias)
        self.v, self.o = nn.Linear(h, kvd, bias=bias), nn.Linear(qd, h, bias=bias)
        if c.qk_norm:   # RMS norm of each head's query and key, before rotation (Qwen3)
            self.q_norm, self.k_norm = nn.RMSNorm(self.dh, eps=c.rms_norm_eps), nn.RMSNorm(self.dh, eps=c.rms_norm_eps)
        self.gate, self.up = nn.Linear(h, c.intermediate_size, bias=False), nn.Linear(h, c.intermediate_size, bias=False)
        self.down = nn.Linear(c.intermediate_size, h, bias=False)

    def _heads(self, x: torch.Tensor, n: int, norm: str) -> torch.Tensor:
        x = x.view(-1, n, self.dh)
        return (getattr(self, norm)(x) if hasattr(self, norm) else x).transpose(0, 1)

    def kv(self, feats: torch.Tensor, rot) -> tuple[torch.Tensor, torch.Tensor]:
        """Keys (rotated) and values of features [T, h] with rotary (cos, sin) [T, dh]: each [kv_heads, T, dh]."""
        k = self._heads(self.k(feats), self.kv_heads, "k_norm")
        v = self.v(feats).view(-1, self.kv_heads, self.dh).transpose(0, 1)
        return rope(k, *rot), v

    def forward(self, x, rot, ctx_k, ctx_v, mask=None):
        """x: block hidden [T, h] with rotary (cos, sin); ctx_k/ctx_v: [kv_heads, n, dh]; mask [T, n+T] bool."""
        a = self.norm1(x)
        q = rope(self._heads(self.q(a), self.heads, "q_norm"), *rot)
        k, v = self.kv(a, rot)
        k, v = torch.cat([ctx_k, k], 1), torch.cat([ctx_v, v], 1)
        att = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=self.kv_heads != self.heads)
        x = x + self.o(att.transpose(0, 1).reshape(len(x), -1))
        b = self.norm2(x)
        return x + self.down(F.silu(self.gate(b)) * self.up(b))


class BlockDrafterModel(PreTrainedModel):
    config_class = BlockDrafterConfig
    base_model_prefix = "drafter"

    def __init__(self, config: BlockDrafterConfig):
        super().__init__(config)
        h = config.hidden_size
        self.fc = nn.Linear(h * len(config.target_layers), h, bias=False)
        self.ctx_norm = nn.RMSNorm(h, eps=config.rms_norm_eps)
        windows = config.attention_windows or [None] * config.num_layers
        self.layers = nn.ModuleList(DraftLayer(config, w) for w in windows)
        self.norm = nn.RMSNorm(h, eps=config.rms_norm_eps)
        if config.markov_rank:
            self.markov_in = nn.Embedding(config.vocab_size, config.markov_rank)        # W1
            self.markov_out = nn.Linear(config.markov_rank, config.vocab_size, bias=False)  # W2
        if config.confidence_head:
            self.confidence = nn.Linear(h + (config.markov_rank if config.confidence_with_markov else 0), 1)
        self._target_io = None
        self._rotary = {}   # (device, dtype) -> rotary_table
        self.post_init()

    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)
            if getattr(module, "bias", None) is not None:
                nn.init.zeros_(module.bias)

    def attach_target(self, target) -> "BlockDrafterModel":
        """Borrow the target's embeddings and LM head (kept out of this model's parameters)."""
        return self.use_io(target.get_input_embeddings(), target.get_output_embeddings())

    def use_io(self, embeddings: nn.Module, head: nn.Module) -> "BlockDrafterModel":
        """Embed with `embeddings` and score with `head`: the target's, or a drafter's own where they differ."""
        self._target_io = (embeddings, head)
        return self

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        return self._target_io[0](ids)

    def lm_head(self, h: torch.Tensor) -> torch.Tensor:
        return self._target_io[1](h)

    def context_features(self, target_hidden: torch.Tensor) -> torch.Tensor:
        """[T, len(layers) * h_target] concatenated target states -> [T, h] context features."""
        return self.ctx_norm(self.fc(target_hidden))

    def rotary(self, pos: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(cos, sin) [T, head_dim] at positions pos, looked up in this model's rotary table.

        The table starts at ROTARY_POSITIONS rows and doubles when a position lies past its end,
        so a drafter follows its target to the end of the target's context.
        """
        key, last = (pos.device, self.dtype), int(pos.max()) if len(pos) else 0
        if key not in self._rotary or last >= len(self._rotary[key][0]):
            rows = ROTARY_POSITIONS
            while rows <= last:
                rows *= 2
            inv_freq, scale = inverse_frequencies(self.config, pos.device)
            self._rotary[key] = rotary_table(inv_freq, rows, self.dtype, scale)
        cos, sin = self._rotary[key]
        return cos[pos], sin[pos]

    def window_mask(self, layer: DraftLayer, n_ctx: int, pos: torch.Tensor, mask):
        """`mask` narrowed to the keys a sliding-window layer sees: |query position - key position| <= W.

        Context keys sit at positions 0..n_ctx-1, the block's at `pos`.
        """
        if layer.window is None or int(pos.max()) <= layer.window:
            return mask
        keys = torch.cat([torch.arange(n_ctx, device=pos.device), pos])
        seen = (pos[:, None] - keys[None]).abs() <= layer.window
        return seen if mask is None else seen & mask

    def context_kv(self, feats: torch.Tensor, pos: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Per-layer keys/values of context features: what the drafter caches."""
        rot = self.rotary(pos)
        return [layer.kv(feats, rot) for layer in self.layers]

    def forward_block(self, block_ids: torch.Tensor, pos: torch.Tensor, ctx_kv, mask=None) -> torch.Tensor:
        """Final hidden states [T, h] of block tokens at positions pos, given context k/v per layer."""
        x, rot = self.embed(block_ids), self.rotary(pos)
        for layer, (k, v) in zip(self.layers, ctx_kv):
            x = layer(x, rot, k, v, self.window_mask(layer, k.size(1), pos, mask))
        return self.norm(x)

    def markov_bias(self, prev_ids) -> torch.Tensor:
        """W2 W1[prev]: [vocab] for one previous token id (an int), [T, vocab] for T of them.

        Written with the weights rather than the modules: the drafter calls it once per proposal,
        one after another, where the modules' own call overhead was most of its 110 µs.
        """
        return F.linear(self.markov_in.weight[prev_ids], self.markov_out.weight)

    def confidence_logit(self, h: torch.Tensor, prev_ids: torch.Tensor) -> torch.Tensor:
        feats = torch.cat([h, self.markov_in(prev_ids)], -1) if self.config.confidence_with_markov else h
        return self.confidence(feats).squeeze(-1)

    def confidence_prob(self, logit: float, position: int) -> float:
        """c_k = sigmoid(logit / T_k), T_k from calibration (1 if uncalibrated)."""
        temps = self.config.confidence_temperature or [1.0]
        return 1.0 / (1.0 + math.exp(-logit / temps[min(position, len(temps) - 1)]))


def position_weights(k: int, gamma: float) -> torch.Tensor:
    """DFlash's loss weight for block position k = 1..K: exp(-(k-1)/gamma).

    >>> [round(w, 3) for w in position_weights(3, 2.0).tolist()]
    [1.0, 0.607, 0.368]
    """
    return torch.exp(-torch.arange(k, dtype=torch.float32) / gamma)
