"""Figures for the biased-admission lesson: Theta as Algorithm 1 admits candidates, and the
running frequency of A under each policy against the target's p(A)."""
import plotly.graph_objects as go

from specviz.viz.charts import base_layout, num
from specviz.viz.style import ACCEPTED, DRAFTER, MUTED, REJECTED, TARGET

POLICY_COLORS = {"retrospective": REJECTED, "non_anticipating": ACCEPTED, "two_steps_earlier": TARGET}


def theta_steps(theta0: float, steps: list, title: str) -> go.Figure:
    """Bars of Theta after each admission attempt, starting from the anchors alone."""
    x = ["anchor only"] + [f"+ (r{s.request + 1}, j{s.position})" for s in steps]
    y = [theta0] + [s.theta for s in steps]
    colors = [MUTED] + [ACCEPTED if s.kept else REJECTED for s in steps]
    fig = go.Figure([go.Bar(x=x, y=y, marker_color=colors, text=[num(v) for v in y], textposition="outside")])
    return base_layout(fig, title, yaxis_title="Θ = τ · SPS(B)", yaxis_range=[0, max(y) * 1.25], height=300)


def running(series: dict[str, list[float]], target: float, every: int = 1) -> go.Figure:
    """Running frequency of A per policy; a dashed line at the target's p(A)."""
    fig = go.Figure()
    for name, freq in series.items():
        xs = list(range(1, len(freq) + 1))[::every]
        fig.add_trace(go.Scatter(name=name.replace("_", " "), x=xs, y=freq[::every], mode="lines",
                                 line={"color": POLICY_COLORS.get(name, DRAFTER), "width": 3}))
    fig.add_hline(y=target, line_dash="dash", line_color="#0f172a", annotation_text=f"target p(A) = {target:g}")
    return base_layout(fig, "running frequency of A", xaxis_title="rounds", yaxis_title="P(first token = A)",
                       yaxis_range=[0, 1], xaxis_type="log")


def sps_figure(sps: list[float], raw: list[float], repeats: int) -> go.Figure:
    """Lesson 4's SPS table: target steps per second at B = 1, 2, … verification tokens, the fitted line
    Algorithm 1 prices with beside the measured points (each the fastest of `repeats` calls)."""
    widths = list(range(1, len(sps) + 1))
    fig = go.Figure([go.Scatter(name="fitted: never faster at a wider check", x=widths, y=sps, mode="lines",
                                line={"color": TARGET}),
                     go.Scatter(name=f"measured (fastest of {repeats})", x=widths, y=raw, mode="markers",
                                marker={"color": TARGET, "opacity": 0.35})])
    return base_layout(fig, "target steps per second at B verification tokens", xaxis_title="B",
                       yaxis_title="steps per second", yaxis_rangemode="tozero")
