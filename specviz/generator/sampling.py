"""Logits -> the probabilities a token is drawn from, and the draw itself.

The same `transform` is applied to the target's logits (p) and the drafter's (q): the
lossless guarantee of speculative sampling holds for the distribution actually used, so both
sides must see the same temperature, top-k and top-p. Temperature 0 means greedy: the
distribution becomes one-hot on the argmax, and every verifier then reduces to greedy matching.

What it leaves out: repetition penalties and other history-dependent processors (they would
have to be applied identically at every candidate history, which this engine does not do).
"""
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class SamplingSettings:
    """How logits become a distribution. Defaults: plain softmax (temperature 1, no cut-off)."""
    temperature: float = 1.0
    top_k: int = 0      # 0 = keep every token
    top_p: float = 1.0  # 1 = keep every token

    def __post_init__(self):
        if not self.temperature >= 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if self.top_k < 0:
            raise ValueError(f"top-k must be >= 0, got {self.top_k}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top-p must be in (0, 1], got {self.top_p}")


def transform(logits: torch.Tensor, s: SamplingSettings) -> torch.Tensor:
    """Probabilities over the last dimension after temperature, top-k and top-p.

    >>> transform(torch.tensor([2.0, 1.0, 0.0]), SamplingSettings(temperature=0)).tolist()
    [1.0, 0.0, 0.0]
    >>> [round(x, 3) for x in transform(torch.tensor([2.0, 1.0, 0.0]), SamplingSettings(top_k=2)).tolist()]
    [0.731, 0.269, 0.0]
    """
    logits = logits.float()
    if s.temperature == 0:
        return torch.nn.functional.one_hot(logits.argmax(-1), logits.size(-1)).float()
    # shift so the top logit is 0 and divide in float64: a temperature like 1e-300 is 0.0 in
    # float32, and dividing unshifted logits by it overflows to inf - inf = NaN
    wide = logits.double()
    logits = ((wide - wide.amax(-1, keepdim=True)) / s.temperature).float()
    if 0 < s.top_k < logits.size(-1):
        kth = torch.topk(logits, s.top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    if s.top_p < 1:
        sorted_p, order = torch.sort(probs, dim=-1, descending=True)
        # keep the smallest prefix whose mass reaches top_p; the top token is kept explicitly
        # because a tiny top_p rounds to 0.0 in float32 and would otherwise drop everything
        drop = (sorted_p.cumsum(-1) - sorted_p) >= s.top_p
        drop[..., 0] = False
        sorted_p = sorted_p.masked_fill(drop, 0.0)
        probs = torch.zeros_like(probs).scatter(-1, order, sorted_p)
        probs = probs / probs.sum(-1, keepdim=True)
    return probs


def sample(probs: torch.Tensor, gen: torch.Generator) -> int:
    """One token id drawn from a 1-D distribution with the given (CPU) generator.

    The draw happens on the CPU so a seed gives the same stream on every device.
    """
    return int(torch.multinomial(probs.float().cpu(), 1, generator=gen).item())
