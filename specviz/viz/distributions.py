"""Figures for the sampling lesson: p against q, the two parts that rebuild p, and the
empirical histogram of emitted tokens converging to p.

Inputs are plain lists over a small vocabulary (labels, p, q); token labels are plotly text,
which plotly renders as text, not HTML, after `label` makes whitespace visible.
"""
import plotly.graph_objects as go

from specviz.lessons.sampling import rebuild
from specviz.viz.charts import base_layout
from specviz.viz.style import ACCEPTED, DRAFTER, TARGET, CORRECTION


def label(text: str) -> str:
    """Axis label for a token: a token of spaces alone as ␣ (words keep their spaces), angle brackets
    neutralised.

    >>> label(" to"), label("the token"), label(" "), label("<b>")
    (' to', 'the token', '␣', '‹b›')
    """
    shown = text if text.strip(" ") else text.replace(" ", "␣")
    return (shown.replace("\n", "↵").replace("<", "‹").replace(">", "›")) or "∅"


def pq_bars(labels: list[str], p: list[float], q: list[float], title: str = "target p vs drafter q") -> go.Figure:
    """Grouped bars of p (target) and q (drafter) per token."""
    x = [label(t) for t in labels]
    fig = go.Figure([go.Bar(name="p (target)", x=x, y=p, marker_color=TARGET),
                     go.Bar(name="q (drafter)", x=x, y=q, marker_color=DRAFTER)])
    return base_layout(fig, title, barmode="group", yaxis_title="probability")


def rebuild_bars(labels: list[str], p: list[float], q: list[float]) -> go.Figure:
    """Stacked: min(p, q) from accepted proposals + (rejection mass) x residual; outline = p."""
    r = rebuild(p, q)
    x = [label(t) for t in labels]
    fig = go.Figure([
        go.Bar(name="accepted proposals: min(p, q)", x=x, y=r["accepted"], marker_color=ACCEPTED),
        go.Bar(name="rejections × residual max(0, p − q)", x=x, y=r["residual_part"], marker_color=CORRECTION),
        go.Scatter(name="target p", x=x, y=p, mode="markers", marker={"symbol": "line-ew-open", "size": 34,
                                                                       "color": TARGET, "line": {"width": 4}}),
    ])
    return base_layout(fig, f"the two parts rebuild p (acceptance rate {r['accept_rate']:.3f})",
                       barmode="stack", yaxis_title="probability")


def convergence(labels: list[str], p: list[float], freqs: dict[str, list[float]], n: int) -> go.Figure:
    """Empirical frequency of emitted tokens per rule after n draws, against p."""
    x = [label(t) for t in labels]
    colors = {0: ACCEPTED, 1: DRAFTER}
    fig = go.Figure([go.Bar(name=name, x=x, y=f, marker_color=colors.get(i, TARGET))
                     for i, (name, f) in enumerate(freqs.items())])
    fig.add_trace(go.Scatter(name="target p", x=x, y=p, mode="markers",
                             marker={"symbol": "line-ew-open", "size": 34, "color": TARGET, "line": {"width": 4}}))
    return base_layout(fig, f"emitted tokens after {n:,} rounds", barmode="group", yaxis_title="frequency")
