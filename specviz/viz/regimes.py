"""The same rounds priced in two regimes, as one figure: a round's cost in one-token steps, split
into the check, drafting and bookkeeping, one stacked bar per profile, beside the tokens a round
commits (the same for both). Where the bar is lower than that line the rounds beat plain decoding,
and the speedup is the line's height over the bar's. Every bar is named "priced, <profile>" in the
axis, the legend and an exported image, so no modelled figure reads as a measurement.

What it leaves out: each run of this machine (the median run is drawn; the page gives the spread).
"""
import plotly.graph_objects as go

from specviz.lessons.pricing import PARTS, Comparison
from specviz.viz.charts import base_layout
from specviz.viz.style import DRAFTER, MUTED, REJECTED, TARGET

COLOURS = {"check_ms": TARGET, "draft_ms": DRAFTER, "bookkeeping_ms": MUTED}


def round_steps(c: Comparison) -> go.Figure:
    """Stacked parts of a round in one-token steps per profile, and the tokens a round commits.

    >>> from specviz.lessons.pricing import LARGE_GPU, Profile, compare
    >>> fig = round_steps(compare([(5, 1, 3)], [Profile("here", 10.0, 1.5, 4.0, 1.0)], LARGE_GPU))
    >>> [(t.name, [round(y, 2) for y in t.y]) for t in fig.data]   # doctest: +NORMALIZE_WHITESPACE
    [('the check', [1.6, 1.2]), ('drafting', [0.4, 0.2]), ('bookkeeping', [0.1, 0.0]),
     ('tokens a round: 3.00 (the same rounds)', [3.0, 3.0])]
    >>> list(fig.data[0].x)
    ['priced, here', 'priced, a hypothetical large target on a GPU']
    """
    priced = [c.here_median, c.there]
    x = [p.label for p in priced]
    fig = go.Figure([go.Bar(name=name, x=x, y=[p.steps(part) for p in priced], marker_color=COLOURS[part],
                            text=[f"{p.steps(part):.2f}" for p in priced], textposition="inside")
                     for part, name in PARTS.items()])
    tokens = c.there.tokens_per_round
    fig.add_trace(go.Scatter(name=f"tokens a round: {tokens:.2f} (the same rounds)", x=x, y=[tokens] * len(x),
                             mode="lines+markers", line={"dash": "dash", "color": REJECTED}))
    return base_layout(fig, "a round in one-token steps, priced", barmode="stack", yaxis_title="one-token steps",
                       yaxis_rangemode="tozero")
