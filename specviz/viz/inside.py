"""Figures for lesson 9 (inside a round): the block drafter's attention over the target's context
and its own block, and the distribution a verifier emits with a true or a wrong q beside p."""
import html

import plotly.graph_objects as go

from specviz.viz.charts import base_layout
from specviz.viz.style import DRAFTER, REJECTED, TARGET

CASE_COLORS = {"true": TARGET, "raw": DRAFTER, "marginal": REJECTED}


def label(token: str) -> str:
    """Token text as an axis label: escaped (plotly reads a few HTML tags), newlines and a token of
    spaces alone visible (words keep their spaces).

    >>> label(" <b>"), label(" "), label("\\n"), label("")
    (' &lt;b&gt;', '␣', '↵', '∅')
    """
    shown = token if token.strip(" ") else token.replace(" ", "␣")
    return html.escape(shown).replace("\n", "↵") or "∅"


def attention_map(view: dict) -> go.Figure:
    """Rows: the block's input slots (anchor, masks); columns: the last context tokens, then the slots.

    >>> attention_map({"attention": [[0.5, 0.5]], "columns": ["a", "slot 0"], "block_inputs": ["a"]}).data[0].z
    ([0.5, 0.5],)
    """
    rows = [f"slot {i}: {label(t)}" for i, t in enumerate(view["block_inputs"])]
    k = len(view["block_inputs"])
    columns = [label(c) for c in view["columns"][:-k]] + view["columns"][-k:]
    fig = go.Figure(go.Heatmap(z=view["attention"], x=columns, y=rows, colorscale="Blues", zmin=0,
                               colorbar={"title": "weight"}))
    return base_layout(fig, "first draft layer: attention from each block slot (mean over heads)",
                       xaxis_title="context tokens (target features) · block slots", yaxis_autorange="reversed")


def emitted_bars(res: dict, names: dict[str, str]) -> go.Figure:
    """For the likeliest tokens under p: p, and what the verifier emits with each q it was handed."""
    x = [label(t) for t in res["labels"]]
    bars = [go.Bar(name="target p", x=x, y=res["p_top"], marker_color="#0f172a")]
    bars += [go.Bar(name=names[n], x=x, y=c["emitted_top"], marker_color=CASE_COLORS.get(n, DRAFTER))
             for n, c in res["cases"].items()]
    return base_layout(go.Figure(bars), "emitted distribution against p (exact)", barmode="group",
                       yaxis_title="probability")
