"""Figures for the cost lesson: per-round time split, the break-even curve, verification cost
against block width. Inputs are the plain numbers from `specviz.lessons.cost` and recorded rounds."""
import plotly.graph_objects as go

from specviz.lessons.cost import break_even_curve, break_even_tokens
from specviz.viz.charts import base_layout
from specviz.viz.style import ACCEPTED, DRAFTER, MUTED, REJECTED, TARGET


def round_costs(rounds: list, baseline_ms: float | None = None) -> go.Figure:
    """Stacked draft / verify / overhead ms per round; each bar labelled with tokens committed."""
    x = [r.index + 1 for r in rounds]
    fig = go.Figure([
        go.Bar(name="draft", x=x, y=[r.draft_ms for r in rounds], marker_color=DRAFTER),
        go.Bar(name="verify (target)", x=x, y=[r.verify_ms for r in rounds], marker_color=TARGET),
        go.Bar(name="overhead", x=x, y=[r.overhead_ms for r in rounds], marker_color=MUTED,
               text=[f"{len(r.emitted)} tok" for r in rounds], textposition="outside"),
    ])
    if baseline_ms:
        fig.add_hline(y=baseline_ms, line_dash="dash", line_color=REJECTED,
                      annotation_text=f"plain decoding: {baseline_ms:.1f} ms per token",
                      annotation_position="top left", annotation_bgcolor="rgba(255,255,255,0.8)")
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


def width_cost(rows: list[dict]) -> go.Figure:
    """Median ms of one target forward against the number of tokens it checks."""
    fig = go.Figure([go.Scatter(name="one target forward", x=[r["width"] for r in rows], y=[r["ms"] for r in rows],
                                mode="lines+markers", marker_color=TARGET,
                                text=[f"{r['relative']:.2f}×" for r in rows], textposition="top center")])
    fig.update_traces(mode="lines+markers+text")
    return base_layout(fig, "verification cost vs block width (this machine, now)",
                       xaxis_title="tokens checked in one forward", yaxis_title="ms (median)", yaxis_rangemode="tozero")
