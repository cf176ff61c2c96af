"""Shared plotly layout: one look for every figure (readable on a projector, no chart junk).

The type size follows the page's: `TYPE_SIZE` holds it for the script run that builds the figure
(app's frame sets it from presenter mode), so every figure builder gets the larger type without
passing it down. Streamlit runs each session's script in its own thread, and a context variable
set in one run is not seen by another session's.
"""
from contextvars import ContextVar

import plotly.graph_objects as go

BASE_SIZE = 15
PRESENTER_SIZE = 22
TYPE_SIZE: ContextVar[int] = ContextVar("chart_type_size", default=BASE_SIZE)


def base_layout(fig: go.Figure, title: str, height: int = 380, font_size: int | None = None, **axes) -> go.Figure:
    """Apply the common layout; `axes` go to update_layout (xaxis_title=..., yaxis_range=...).
    Type is `font_size`, by default the run's TYPE_SIZE; margins grow with it, and the height half as fast.

    >>> base_layout(go.Figure(), "t").layout.title.text
    't'
    >>> big = base_layout(go.Figure(), "t", font_size=2 * BASE_SIZE).layout
    >>> big.font.size, big.xaxis.tickfont.size, big.height, big.margin.b, big.xaxis.automargin
    (30, 30, 570, 200, True)
    """
    size = font_size or TYPE_SIZE.get()
    grow = size / BASE_SIZE
    fig.update_layout(title={"text": title, "x": 0.0, "xanchor": "left"}, height=round(height * (1 + grow) / 2),
                      template="plotly_white", font={"size": size},
                      margin={"l": round(50 * grow), "r": 20, "t": round(48 * grow), "b": round(100 * grow)},
                      legend={"orientation": "h", "y": -0.3, "yanchor": "top", "x": 0, "xanchor": "left",
                              "font": {"size": size}},
                      title_font_size=round(size * 1.1), **axes)
    # explicit on every axis: Streamlit's chart theme sets its own tick and title sizes otherwise; the margins
    # grow to fit the tick labels (a rotated first label, "anchor only", was cut at the chart's left edge)
    fig.update_xaxes(tickfont_size=size, title_font_size=size, automargin=True)
    fig.update_yaxes(tickfont_size=size, title_font_size=size, automargin=True)
    return fig


def num(x: float, places: int = 3) -> str:
    """A number as the seeds write it: at most `places` decimals, trailing zeros dropped.

    >>> num(1.0), num(0.9), num(2.52 * 0.45), num(0.81)
    ('1.0', '0.9', '1.134', '0.81')
    """
    s = f"{x:.{places}f}".rstrip("0")
    return s + "0" if s.endswith(".") else s
