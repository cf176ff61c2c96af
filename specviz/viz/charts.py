"""Shared plotly layout: one look for every figure (readable on a projector, no chart junk)."""
import plotly.graph_objects as go


def base_layout(fig: go.Figure, title: str, height: int = 380, **axes) -> go.Figure:
    """Apply the common layout; `axes` go to update_layout (xaxis_title=..., yaxis_range=...).

    >>> base_layout(go.Figure(), "t").layout.title.text
    't'
    """
    fig.update_layout(title={"text": title, "x": 0.0, "xanchor": "left"}, height=height, template="plotly_white",
                      margin={"l": 50, "r": 20, "t": 48, "b": 100}, font={"size": 15},
                      legend={"orientation": "h", "y": -0.3, "yanchor": "top", "x": 0, "xanchor": "left"},
                      **axes)
    return fig


def num(x: float, places: int = 3) -> str:
    """A number as the seeds write it: at most `places` decimals, trailing zeros dropped.

    >>> num(1.0), num(0.9), num(2.52 * 0.45), num(0.81)
    ('1.0', '0.9', '1.134', '0.81')
    """
    s = f"{x:.{places}f}".rstrip("0")
    return s + "0" if s.endswith(".") else s
