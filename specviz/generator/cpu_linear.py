"""Linear layers that use, for each row count, the weight layout this CPU multiplies fastest.

`nn.Linear` computes y = x·Wᵀ with W stored [out, in]. torch can do the same product four
ways, equal up to float rounding (about 1e-6): with MKL as stored (`F.linear`), against a
contiguous copy of Wᵀ, or as (W·xᵀ)ᵀ; or with oneDNN against a copy of W that oneDNN packed for
a few rows. For the few rows of a decode step (M = 1) or a verification (M = k+1) their speeds
differ by as much as 3.5x, and which one wins depends on the CPU, the layer's shape and M.
Microseconds per call, medians, on two hosts this project ran on (the first three ways):

    layer        M    AMD EPYC (AVX2)              Intel Xeon (AVX-512, AMX)
                      F.linear  Wᵀ copy  W·xᵀ      F.linear  Wᵀ copy  W·xᵀ
    384 -> 1024  1      282       156     289         46        51      33
    384 -> 1024  5      383       291     212         66        93      88
    384 -> 4096  1     1203       550    1223        264       154     224      (the LM head)
    384 -> 4096  5     2078      2697     777        398       393     531

On the AMD EPYC host of 2026-12-01 (MKL, AVX2) the oneDNN copy kept a check nearly as cheap
as a one-token step, where MKL's ways grew with M: the LM head took 318, 320, 414, 486 µs at
1, 3, 5, 9 rows against the best of the other three at 272, 524, 627, 758; 384 -> 1024 took
121-144 µs against 134-197 from 3 rows up (at one row MKL's Wᵀ copy stays faster, 78 µs).

A choice written down for one host was the slowest on the other: verifying 4 tokens cost 1.7
one-token steps on the Xeon with the EPYC's choice, and about 1.3 with its own. So nothing is
written down: `use_fast_layouts` times the four on this machine when a model loads (for each
shape and each row count up to MAX_ROWS; about 1.3 s for the embedded models on the EPYC), like
DSpark's step-rate table profiled at engine start, and each layer looks its choice up on every
call. The baseline's one-token step gets its fastest layout as much as a verification does.

What it leaves out: GPUs (cuBLAS has no such gap; models there are left as they are),
training (the copies are taken once, at load, so the weights must stay frozen), more than
MAX_ROWS rows (a prefill: `F.linear`, whose kernels are built for that), and weights over
LARGEST bytes: a larger model's layers stay plain nn.Linear, because timing them would add
seconds to loading and a copy would double the model's memory (whether their layout
matters was not measured; the embedded models' largest weight, the LM head, is 6.3 MB).
"""
import math
import random
import statistics
import time
from collections import Counter

import torch
import torch.nn.functional as F

LAYOUTS = ("as stored", "Wᵀ copy", "W·xᵀ", "oneDNN packed")
MAX_ROWS = 25                                       # S·k+1 for DLoop's largest setting (3 stages of 8)
PROFILED_ROWS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 17, MAX_ROWS)   # a row count uses the next one up
LARGEST = 16 << 20                                  # bytes of weight; larger layers are left as they are
PACKED_FOR = 8                                      # the row count oneDNN packs for (timed flat from 1 to 9)
PROFILES: dict[tuple[int, int], dict[int, list[float]]] = {}   # (in, out) -> time_layouts, this process


def prepare(layout: int, weight: torch.Tensor) -> torch.Tensor | None:
    """The copy of W that `layout` multiplies against.

    oneDNN's packed copy exists only for float32 weights on a CPU whose torch has oneDNN, and
    is None elsewhere: the layouts are timed in float32, so a host that runs the embedded set in
    bfloat16 gets MKL's ways.

    >>> w = torch.arange(6.0).view(3, 2)
    >>> prepare(1, w).tolist(), prepare(2, w).data_ptr() == w.data_ptr()
    ([[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]], True)
    """
    weight = weight.detach()
    if layout == 1:
        return weight.t().contiguous()
    if layout == 3:
        usable = torch.backends.mkldnn.is_available() and weight.dtype == torch.float32 and weight.device.type == "cpu"
        return torch.ops.mkldnn._reorder_linear_weight(weight, PACKED_FOR) if usable else None
    return weight


def multiply(layout: int, x: torch.Tensor, prepared: torch.Tensor) -> torch.Tensor:
    """x·Wᵀ for 2-D x, computed in one of the LAYOUTS against that layout's `prepare`d copy of W."""
    if layout == 1:
        return x @ prepared
    if layout == 2:
        # contiguous, as the other layouts' results are: a transposed result reaches attention as a query
        # whose last dimension has a stride, and SDPA then leaves its flash kernel for the math one
        return (prepared @ x.t()).t().contiguous()
    if layout == 3:
        return torch.ops.mkldnn._linear_pointwise(x.contiguous(), prepared, None, "none", [], "")
    return F.linear(x, prepared)


def fastest(times: dict[int, list[float]]) -> list[int]:
    """The layout to use for 0..MAX_ROWS rows, from median times per profiled row count.

    Row counts between profiled ones use the next profiled count up; 0 rows never happen.

    >>> table = fastest({1: [5.0, 3.0, 4.0], 2: [2.0, 3.0, 4.0], 25: [9.0, 9.0, 1.0]})
    >>> table[1], table[2], table[3], table[25], len(table)
    (1, 0, 2, 2, 26)
    """
    best = {rows: min(range(len(t)), key=t.__getitem__) for rows, t in times.items()}
    return [best[min(r for r in best if r >= max(rows, 1))] for rows in range(MAX_ROWS + 1)]


@torch.no_grad()
def time_layouts(in_features: int, out_features: int, repeats: int = 7) -> dict[int, list[float]]:
    """Median µs of each layout per row count in PROFILED_ROWS, on random weights of this shape.

    Enough copies of the weight are cycled through (16 MB or more, beyond a core's own cache) that
    each call reads its weight from further out, as a layer does inside a whole forward pass.
    Calls are shuffled within each repeat so a busy moment of a shared machine hits all alike.
    A layout this build of torch lacks (oneDNN) is never timed and reads as infinitely slow.
    """
    size = in_features * out_features * 4
    weights = [torch.randn(out_features, in_features) for _ in range(min(24, max(2, (16 << 20) // size + 1)))]
    copies = [[prepare(layout, w) for w in weights] for layout in range(len(LAYOUTS))]
    inputs = {rows: torch.randn(rows, in_features) for rows in PROFILED_ROWS}
    calls = [(rows, layout) for rows in PROFILED_ROWS for layout in range(len(LAYOUTS)) if copies[layout][0] is not None]
    times = {rows: [[] for _ in LAYOUTS] for rows in PROFILED_ROWS}
    for rep in range(repeats + 1):
        random.Random(rep).shuffle(calls)   # no row count or layout always comes first
        for n, (rows, layout) in enumerate(calls):
            start = time.perf_counter()
            multiply(layout, inputs[rows], copies[layout][n % len(weights)])
            if rep:   # repeat 0 warms up
                times[rows][layout].append((time.perf_counter() - start) * 1e6)
    return {rows: [statistics.median(t) if t else float("inf") for t in per_layout] for rows, per_layout in times.items()}


class LayoutAwareLinear(torch.nn.Linear):
    """nn.Linear that multiplies in `layouts[rows]`; `prepared` holds the copy of W each layout in use needs.

    The copies are a plain attribute, not buffers: oneDNN's packed weight is an opaque tensor
    that a buffer's .to() and state_dict could not carry, and none of them is saved. So a
    .to() (a host's dtype) takes them again from the converted weight (`take_copies`).

    >>> layer = torch.nn.Linear(2, 3, bias=False)
    >>> x = torch.randn(4, 2)
    >>> reference = layer(x)
    >>> torch.allclose(use_fast_layouts(layer)(x), reference)
    True
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, x.size(-1))
        layout = self.layouts[rows.size(0)] if rows.size(0) <= MAX_ROWS else 0
        y = multiply(layout, rows, self.prepared[layout] if layout else self.weight)
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(*x.shape[:-1], self.out_features)

    def _apply(self, fn, recurse=True):
        super()._apply(fn, recurse)
        take_copies(self)
        return self


def take_copies(layer: LayoutAwareLinear) -> None:
    """Copy W for each layout `layer.layouts` uses; a row count whose layout has no copy for this
    weight (oneDNN's, off float32) multiplies the weight as stored instead."""
    copies = {layout: prepare(layout, layer.weight) for layout in set(layer.layouts) - {0}}
    layer.layouts = [layout if layout == 0 or copies[layout] is not None else 0 for layout in layer.layouts]
    layer.prepared = {layout: c for layout, c in copies.items() if c is not None}


def use_fast_layouts(model: torch.nn.Module) -> torch.nn.Module:
    """Turn every plain nn.Linear of `model` up to LARGEST bytes into a LayoutAwareLinear, in place.

    Each layer shape is timed once per process (`time_layouts`, kept in PROFILES), so the
    target and drafters, and a model set loaded again, share the measurements. A copy of W is
    made only for a layout some row count uses.
    """
    for layer in model.modules():
        if type(layer) is torch.nn.Linear and layer.weight.numel() * layer.weight.element_size() <= LARGEST:
            shape = (layer.in_features, layer.out_features)
            if shape not in PROFILES:
                PROFILES[shape] = time_layouts(*shape)
            layer.__class__ = LayoutAwareLinear
            layer.layouts = fastest(PROFILES[shape])
            take_copies(layer)
    return model


def report(model: torch.nn.Module, rows: tuple[int, ...] = (1, 5)) -> list[dict]:
    """Per layer shape of `model` and row count (1..MAX_ROWS): each layout's profiled µs, and the one in use.

    One entry per (shape, row count), with how many layers have that shape; empty for a model
    left as it is (a GPU's). A layout never timed (oneDNN, on a torch without it) has no entry.

    >>> [(r["layer"], r["layers"], r["rows"]) for r in report(use_fast_layouts(torch.nn.Linear(8, 4)), rows=(1, 4))]
    [('8 → 4', 1, 1), ('8 → 4', 1, 4)]
    """
    shapes = Counter((m.in_features, m.out_features) for m in model.modules() if isinstance(m, LayoutAwareLinear))
    table = []
    for (i, o), count in shapes.items():
        for r in rows:
            times = PROFILES[(i, o)][min(p for p in PROFILED_ROWS if p >= r)]
            table.append({"layer": f"{i} → {o}", "layers": count, "rows": r,
                          # a layout this torch lacks was never timed (inf): left out, not rounded
                          **{f"{name}, µs": round(t) for name, t in zip(LAYOUTS, times) if math.isfinite(t)},
                          "in use": LAYOUTS[fastest(PROFILES[(i, o)])[r]]})
    return table
