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

What it leaves out: the recurrent (multi-token) DSpark head, tree drafts.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import PretrainedConfig, PreTrainedModel


class BlockDrafterConfig(PretrainedConfig):
    model_type = "specviz_block_drafter"

    def __init__(self, hidden_size=384, num_layers=1, num_heads=6, intermediate_size=1024,
                 target_layers=(1, 4, 6), vocab_size=4096, mask_token_id=1, markov_rank=0,
                 rope_theta=10000.0, rms_norm_eps=1e-6, loop_aware=False, confidence_temperature=None,
                 **kwargs):
        self.hidden_size, self.num_layers, self.num_heads = hidden_size, num_layers, num_heads
        self.intermediate_size, self.target_layers = intermediate_size, list(target_layers)
        self.vocab_size, self.mask_token_id, self.markov_rank = vocab_size, mask_token_id, markov_rank
        self.rope_theta, self.rms_norm_eps, self.loop_aware = rope_theta, rms_norm_eps, loop_aware
        # per block position, set by calibration (specviz.training.calibrate); None = 1 everywhere
        self.confidence_temperature = confidence_temperature
        super().__init__(**kwargs)


ROTARY_POSITIONS = 4096   # the rotary table's length: the context (512) plus DLoop's stages, with room


def rotary_table(dim: int, theta: float, device, dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of the angles pos * theta^(-2i/dim) for pos < ROTARY_POSITIONS: [positions, dim] each.

    Built once per model (see `BlockDrafterModel.rotary`): computing the angles in every call
    was a dozen small tensor ops per layer, paid each round in drafting and in commit.

    >>> cos, sin = rotary_table(4, 10000.0, "cpu", torch.float32)
    >>> cos.shape, cos[0].tolist(), [round(v, 4) for v in sin[1].tolist()]
    (torch.Size([4096, 4]), [1.0, 1.0, 1.0, 1.0], [0.8415, 0.01, 0.8415, 0.01])
    """
    freqs = theta ** (-torch.arange(0, dim, 2, device=device, dtype=torch.float32) / dim)
    ang = torch.arange(ROTARY_POSITIONS, device=device, dtype=torch.float32)[:, None] * freqs[None]
    return torch.cat([ang.cos()] * 2, -1).to(dtype), torch.cat([ang.sin()] * 2, -1).to(dtype)


def rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate pairs of channels of x [..., T, d] by the angles whose cos and sin are [T, d]."""
    d = x.size(-1)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return x * cos + torch.cat([-x2, x1], -1) * sin


class DraftLayer(nn.Module):
    def __init__(self, c: BlockDrafterConfig):
        super().__init__()
        self.heads, self.dh = c.num_heads, c.hidden_size // c.num_heads
        h = c.hidden_size
        self.norm1, self.norm2 = nn.RMSNorm(h, eps=c.rms_norm_eps), nn.RMSNorm(h, eps=c.rms_norm_eps)
        self.q, self.k, self.v, self.o = (nn.Linear(h, h, bias=False) for _ in range(4))
        self.gate, self.up = nn.Linear(h, c.intermediate_size, bias=False), nn.Linear(h, c.intermediate_size, bias=False)
        self.down = nn.Linear(c.intermediate_size, h, bias=False)

    def kv(self, feats: torch.Tensor, rot) -> tuple[torch.Tensor, torch.Tensor]:
        """Keys (rotated) and values of features [T, h] with rotary (cos, sin) [T, dh]: each [heads, T, dh]."""
        k = self.k(feats).view(-1, self.heads, self.dh).transpose(0, 1)
        v = self.v(feats).view(-1, self.heads, self.dh).transpose(0, 1)
        return rope(k, *rot), v

    def forward(self, x, rot, ctx_k, ctx_v, mask=None):
        """x: block hidden [T, h] with rotary (cos, sin); ctx_k/ctx_v: [heads, n, dh]; mask [T, n+T] bool."""
        a = self.norm1(x)
        q = rope(self.q(a).view(-1, self.heads, self.dh).transpose(0, 1), *rot)
        k, v = self.kv(a, rot)
        k, v = torch.cat([ctx_k, k], 1), torch.cat([ctx_v, v], 1)
        att = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.o(att.transpose(0, 1).reshape(x.shape))
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
        self.layers = nn.ModuleList(DraftLayer(config) for _ in range(config.num_layers))
        self.norm = nn.RMSNorm(h, eps=config.rms_norm_eps)
        if config.markov_rank:
            self.markov_in = nn.Embedding(config.vocab_size, config.markov_rank)        # W1
            self.markov_out = nn.Linear(config.markov_rank, config.vocab_size, bias=False)  # W2
            self.confidence = nn.Linear(h + config.markov_rank, 1)
            nn.init.zeros_(self.markov_out.weight)   # start as plain DFlash
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
        self._target_io = (target.get_input_embeddings(), target.get_output_embeddings())
        return self

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        return self._target_io[0](ids)

    def lm_head(self, h: torch.Tensor) -> torch.Tensor:
        return self._target_io[1](h)

    def context_features(self, target_hidden: torch.Tensor) -> torch.Tensor:
        """[T, len(layers) * h_target] concatenated target states -> [T, h] context features."""
        return self.ctx_norm(self.fc(target_hidden))

    def rotary(self, pos: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(cos, sin) [T, head_dim] at positions pos, looked up in this model's rotary table."""
        key = (pos.device, self.dtype)
        if key not in self._rotary:
            c = self.config
            self._rotary[key] = rotary_table(c.hidden_size // c.num_heads, c.rope_theta, pos.device, self.dtype)
        cos, sin = self._rotary[key]
        return cos[pos], sin[pos]

    def context_kv(self, feats: torch.Tensor, pos: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Per-layer keys/values of context features: what the drafter caches."""
        rot = self.rotary(pos)
        return [layer.kv(feats, rot) for layer in self.layers]

    def forward_block(self, block_ids: torch.Tensor, pos: torch.Tensor, ctx_kv, mask=None) -> torch.Tensor:
        """Final hidden states [T, h] of block tokens at positions pos, given context k/v per layer."""
        x, rot = self.embed(block_ids), self.rotary(pos)
        for layer, (k, v) in zip(self.layers, ctx_kv):
            x = layer(x, rot, k, v, mask)
        return self.norm(x)

    def markov_bias(self, prev_ids) -> torch.Tensor:
        """W2 W1[prev]: [vocab] for one previous token id (an int), [T, vocab] for T of them.

        Written with the weights rather than the modules: the drafter calls it once per proposal,
        one after another, where the modules' own call overhead was most of its 110 µs.
        """
        return F.linear(self.markov_in.weight[prev_ids], self.markov_out.weight)

    def confidence_logit(self, h: torch.Tensor, prev_ids: torch.Tensor) -> torch.Tensor:
        return self.confidence(torch.cat([h, self.markov_in(prev_ids)], -1)).squeeze(-1)

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
