"""Figures for the cost lesson: per-round time split, the break-even curve, verification cost
against block width. Inputs are the plain numbers from `specviz.lessons.cost` and recorded rounds."""
import plotly.graph_objects as go

from specviz.lessons.cost import break_even_curve, break_even_tokens
from specviz.lessons.protocol import outlier_cap
from specviz.viz.charts import base_layout
from specviz.viz.style import ACCEPTED, DRAFTER, MUTED, REJECTED, TARGET


def round_costs(rounds: list, baseline_ms: float | None = None) -> go.Figure:
    """Stacked draft / verify / overhead ms per round; each bar labelled with tokens committed.

    A round far slower than the rest (a busy moment of the machine) would squash every other
    bar, so the axis stops at `outlier_cap` and such a round is marked with its real time.
    """
    x = [r.index + 1 for r in rounds]
    fig = go.Figure([
        go.Bar(name="draft", x=x, y=[r.draft_ms for r in rounds], marker_color=DRAFTER),
        go.Bar(name="verify (target)", x=x, y=[r.verify_ms for r in rounds], marker_color=TARGET),
        go.Bar(name="overhead", x=x, y=[r.overhead_ms for r in rounds], marker_color=MUTED,
               text=[f"{len(r.emitted)} tok" for r in rounds], textposition="outside"),
    ])
    if baseline_ms and x:   # a legend entry, not a label on the plot: a label there lies across the bars
        fig.add_trace(go.Scatter(name=f"plain decoding: {baseline_ms:.1f} ms per token", x=[x[0] - 0.5, x[-1] + 0.5],
                                 y=[baseline_ms] * 2, mode="lines", line={"dash": "dash", "color": REJECTED}))
    cap = outlier_cap([r.total_ms for r in rounds])
    if cap:
        fig.update_yaxes(range=[0, cap * 1.1])
        for r in rounds:
            if r.total_ms > cap:
                fig.add_annotation(x=r.index + 1, y=cap, text=f"↑ {r.total_ms:.0f} ms (axis cut)",
                                   showarrow=False, yshift=10, font={"color": REJECTED})
    return base_layout(fig, "time per round, split by phase", barmode="stack", xaxis_title="round",
                       yaxis_title="ms")


def break_even(round_ms: float, baseline_ms: float, max_tokens: int, observed: float | None = None) -> go.Figure:
    """ms per committed token as a function of tokens committed per round, against plain decoding."""
    rows = break_even_curve(round_ms, baseline_ms, max_tokens)
    fig = go.Figure([go.Scatter(name=f"speculative round of {round_ms:.1f} ms", x=[r["tokens"] for r in rows],
                                y=[r["ms_per_token"] for r in rows], mode="lines+markers", marker_color=TARGET)])
    fig.add_hline(y=baseline_ms, line_dash="dash", line_color=REJECTED,
                  annotation_text=f"plain: {baseline_ms:.1f} ms/token")
    fig.add_vline(x=break_even_tokens(round_ms, baseline_ms), line_dash="dot", line_color=MUTED,
                  annotation_text=f"break-even {break_even_tokens(round_ms, baseline_ms):.2f} tokens/round")
    if observed:
        fig.add_trace(go.Scatter(name=f"measured: {observed:.2f} tokens/round", x=[observed],
                                 y=[round_ms / observed], mode="markers", marker={"size": 16, "color": ACCEPTED}))
    return base_layout(fig, "when does a round pay for itself?", xaxis_title="tokens committed per round",
                       yaxis_title="ms per token")


def label_room(low: float, high: float, share: float = 0.08, least: float = 0.5) -> list[float]:
    """An axis range around [low, high] with room each side for a label centred on an end point: `share` of the
    span, at least `least` (a label is as wide whatever the span, so a short axis still needs room).

    >>> label_room(1, 16), label_room(1, 2)
    ([-0.2, 17.2], [0.5, 2.5])
    """
    pad = max(share * (high - low), least)
    return [round(low - pad, 9), round(high + pad, 9)]


def width_cost(rows: list[dict]) -> go.Figure:
    """One target forward's ms against the tokens it checks: each width's fastest call, faint,
    and the fitted cost line, labelled with its multiple of a one-token step.

    Each label sits centred above its point, so the widest width's label would reach past the plot's right
    edge and the highest one past its top: the axes leave room on both, and the labels are not clipped.
    """
    x = [r["width"] for r in rows]
    top = max(max(r["ms"], r["fitted_ms"]) for r in rows)
    fig = go.Figure([
        go.Scatter(name="measured (fastest of 5 calls)", x=x, y=[r["ms"] for r in rows], mode="markers",
                   marker={"color": TARGET, "opacity": 0.35, "size": 10}),
        go.Scatter(name="fitted cost line", x=x, y=[r["fitted_ms"] for r in rows], mode="lines+text",
                   line={"color": TARGET}, text=[f"{r['relative']:.2f}×" for r in rows], textposition="top center",
                   cliponaxis=False),
    ])
    return base_layout(fig, "verification cost vs block width (this machine, now)",
                       xaxis_title="tokens checked in one forward", yaxis_title="ms",
                       xaxis_range=label_room(min(x), max(x)), yaxis_range=[0, top * 1.2])
