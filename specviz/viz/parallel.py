"""Figures for the parallel-drafting lesson: phrase probabilities (product of the backbone's
marginals vs the Markov head), sampled-block counts, conditional acceptance by block position,
drafting cost vs block size. A learner reads each drafter by the page's label for it, never its
name ("dflash"): the builders take labels, or `label` (name -> label) where rows carry names."""
from collections.abc import Callable

import plotly.graph_objects as go

from specviz.viz.charts import base_layout
from specviz.viz.style import ACCEPTED, DRAFTER, REJECTED, TARGET

COLORS = [TARGET, DRAFTER, ACCEPTED, REJECTED]


def phrase_bars(rows: list[dict], title: str) -> go.Figure:
    """Per phrase: the product of per-position marginals and the sequential probability."""
    x = [r["phrase"].strip() for r in rows]
    fig = go.Figure([go.Bar(name="product of the backbone's marginals (positions blind, no Markov head)", x=x,
                            y=[r["product_of_marginals"] for r in rows], marker_color=DRAFTER),
                     go.Bar(name="sequential (Markov head sees the previous token)", x=x,
                            y=[r["sequential"] for r in rows], marker_color=TARGET)])
    return base_layout(fig, title, barmode="group", yaxis_title="probability of the phrase")


def sample_bars(counts: dict[str, dict[str, int]], phrases: list[str], n: int) -> go.Figure:
    """How many of n sampled blocks start with each phrase, per drafter."""
    x = [p.strip() for p in phrases]
    fig = go.Figure([go.Bar(name=d, x=x, y=[c.get(p, 0) for p in phrases], marker_color=COLORS[i % 4],
                            text=[c.get(p, 0) for p in phrases], textposition="outside")
                     for i, (d, c) in enumerate(counts.items())])
    return base_layout(fig, f"{n} sampled blocks per drafter", barmode="group", yaxis_title="blocks")


def position_lines(rates: dict[str, list[float | None]]) -> go.Figure:
    """Conditional acceptance at block position i (among rounds that kept 1..i-1), per drafter."""
    fig = go.Figure([go.Scatter(name=d, x=list(range(1, len(r) + 1)), y=r, mode="lines+markers",
                                line={"color": COLORS[i % 4], "width": 3}) for i, (d, r) in enumerate(rates.items())])
    return base_layout(fig, "kept at position i, among rounds that kept 1..i−1", xaxis_title="position in the block",
                       yaxis_title="conditional acceptance", yaxis_range=[0, 1.05])


def cost_lines(rows: list[dict], label: Callable[[str], str]) -> go.Figure:
    """Drafting ms per round against block size, one line per drafter (named by `label`): the median
    of the runs, their range as an error bar (rows of specviz.lessons.parallel.draft_cost)."""
    fig = go.Figure()
    for i, d in enumerate(dict.fromkeys(r["drafter"] for r in rows)):
        part = [r for r in rows if r["drafter"] == d]
        fig.add_trace(go.Scatter(
            name=label(d), x=[r["k"] for r in part], y=[r["draft_ms"] for r in part], mode="lines+markers",
            line={"color": COLORS[i % 4], "width": 3},
            error_y={"type": "data", "symmetric": False, "array": [r["spread"].high - r["draft_ms"] for r in part],
                     "arrayminus": [r["draft_ms"] - r["spread"].low for r in part]}))
    return base_layout(fig, "drafting time per round against block size (bars: range over the runs)",
                       xaxis_title="proposals per round (k)", yaxis_title="ms", yaxis_rangemode="tozero")
