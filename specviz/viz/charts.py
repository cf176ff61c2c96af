"""Shared plotly layout: one look for every figure (readable on a projector, no chart junk)."""
import plotly.graph_objects as go


def base_layout(fig: go.Figure, title: str, height: int = 340, **axes) -> go.Figure:
    """Apply the common layout; `axes` go to update_layout (xaxis_title=..., yaxis_range=...).

    >>> base_layout(go.Figure(), "t").layout.title.text
    't'
    """
    fig.update_layout(title={"text": title, "x": 0.0, "xanchor": "left"}, height=height, template="plotly_white",
                      margin={"l": 50, "r": 20, "t": 56, "b": 40}, font={"size": 15},
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 1, "xanchor": "right"},
                      **axes)
    return fig
