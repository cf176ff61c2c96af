"""The autoregressive drafter's forward pass, written out: one sequence, a growing KV cache.

Why not call the transformers model, as the target does? A drafter step is tiny (one layer,
7 MB), so transformers' per-call machinery (mask builders, config lookups, module hooks, output
classes) costs as much as its arithmetic: on this project's CPU a step took 2.9-3.4 ms that way
and 1.3-1.9 ms this way (same weights; logits differ by about 5e-6). The drafter runs k times a
round, so the difference is paid k times. The target keeps transformers' forward: it is the
reference whose greedy output the engine must reproduce token for token, while the drafter's
numbers only decide how often a guess is right.

It reuses the model's own modules (embedding, norms, projections, MLP, LM head, rotary
frequencies) and writes out only what ties them together: rotary positions, the cache, the
attention and the residuals.

What it leaves out: every architecture but the plain Llama the shipped drafter uses (see
`supports`; other drafters go through transformers), batches, padding.
"""
import torch
import torch.nn.functional as F


def supports(model) -> bool:
    """True for a Llama model this decoder reproduces: default rotary positions, no biases."""
    c = model.config
    rope = (getattr(c, "rope_parameters", None) or {}).get("rope_type", "default")
    return (c.model_type == "llama" and rope == "default" and not c.attention_bias
            and not c.mlp_bias and c.hidden_act == "silu")


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding, in Llama's half-split layout: x·cos + rotate_half(x)·sin."""
    half = x.size(-1) // 2
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin


class LlamaDecoder:
    """Feed token ids, get the next-token logits; `crop(n)` forgets all but the first n positions.

    >>> d = LlamaDecoder(drafter_model)              # doctest: +SKIP
    >>> d.feed([0, 464, 1266]).shape, d.length        # doctest: +SKIP
    (torch.Size([4096]), 3)
    """

    def __init__(self, model):
        self.model, c = model, model.config
        self.heads, self.kv_heads = c.num_attention_heads, c.num_key_value_heads
        self.head_dim = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
        self.rope = model.model.rotary_emb
        self.k = self.v = self.cos = self.sin = None   # allocated on first use, grown as needed
        self.length = 0

    def _room(self, needed: int) -> None:
        """Grow the cache and the rotary tables (doubling) so that they hold `needed` positions.

        [layers, kv_heads, capacity, head_dim] for keys and values; the tables have no fixed
        end, like transformers' rotary embedding, so a context longer than the model's
        max_position_embeddings behaves the same way in both.
        """
        have = 0 if self.k is None else self.k.size(2)
        if needed <= have:
            return
        capacity, dtype, device = max(needed, 2 * have, 64), self.model.dtype, self.model.device
        shape = (len(self.model.model.layers), self.kv_heads, capacity, self.head_dim)
        k = torch.zeros(shape, dtype=dtype, device=device)
        v = torch.zeros_like(k)
        if have:
            k[:, :, :have], v[:, :, :have] = self.k, self.v
        self.k, self.v = k, v
        positions = torch.arange(capacity, dtype=torch.float32, device=device)
        angles = positions[:, None] * self.rope.inv_freq.float()[None]
        angles = torch.cat([angles, angles], -1)
        self.cos = (angles.cos() * self.rope.attention_scaling).to(dtype)
        self.sin = (angles.sin() * self.rope.attention_scaling).to(dtype)

    def crop(self, length: int) -> None:
        self.length = min(self.length, length)

    def feed(self, ids: list[int]) -> torch.Tensor:
        """Process `ids` after the cached positions; returns the logits after the last of them."""
        m, T, start = self.model.model, len(ids), self.length
        end = start + T
        self._room(end)
        cos, sin = self.cos[start:end], self.sin[start:end]
        # a query may see every cached key and the new keys up to its own position
        mask = None if T == 1 else (torch.arange(end, device=cos.device)[None]
                                    <= torch.arange(start, end, device=cos.device)[:, None])
        x = m.embed_tokens(torch.tensor(ids, device=cos.device))
        for i, layer in enumerate(m.layers):
            a = layer.self_attn
            h = layer.input_layernorm(x)
            q = rotate(a.q_proj(h).view(T, self.heads, self.head_dim).transpose(0, 1), cos, sin)
            k = rotate(a.k_proj(h).view(T, self.kv_heads, self.head_dim).transpose(0, 1), cos, sin)
            self.k[i, :, start:end] = k
            self.v[i, :, start:end] = a.v_proj(h).view(T, self.kv_heads, self.head_dim).transpose(0, 1)
            o = F.scaled_dot_product_attention(q[None], self.k[None, i, :, :end], self.v[None, i, :, :end],
                                               attn_mask=mask, enable_gqa=True)[0]
            x = x + a.o_proj(o.transpose(0, 1).reshape(T, -1))
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        self.length = end
        return self.model.lm_head(m.norm(x[-1:]))[0]
