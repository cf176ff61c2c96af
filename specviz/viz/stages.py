"""What a block drafter recorded about its own round (Round.drafter_info), as escaped HTML.

DSpark's confidence head: c_i per proposal and prefix survival a_i = c_1 ... c_i.
DLoop's gate: per stage, the sum of log q over its proposals against the threshold g; the
next stage runs only while the sum is >= g (and fewer than S stages ran).
Lesson 6's sweep (specviz.lessons.dloop): its figure. The sweep keys its rows by drafter name
("dloop"); what a learner reads is the page's label for it, so the figure takes `label`
(name -> label) and shows no name. Its tables and verdicts are specviz.lessons.dloop's.

What it leaves out: drafters that record nothing (autoregressive, prompt lookup): empty string.
"""
import html
from collections.abc import Callable

import plotly.graph_objects as go

from specviz.lessons.inside import gate_reason
from specviz.lessons.markup import md_token
from specviz.viz.charts import base_layout
from specviz.viz.style import ACCEPTED, TARGET
from specviz.viz.tokens import esc

COLORS = (ACCEPTED, TARGET)


def survival_html(info: dict, tokens: list[str]) -> str:
    """One row per proposal: confidence c_i and prefix survival a_i. A round the length limit cut
    keeps fewer proposals than the drafter scored: only the proposals the round had are shown.

    >>> "0.72" in survival_html({"confidence": [0.8, 0.9], "survival": [0.8, 0.72]}, ["a", "b"])
    True
    >>> survival_html({"confidence": [0.8, 0.9], "survival": [0.8, 0.72]}, ["a"]).count("<td class='num'>")
    3
    """
    if not info.get("survival"):
        return ""
    n = len(tokens)
    cells = "".join(f"<td class='num'>{esc(t)}</td>" for t in tokens)
    conf = "".join(f"<td class='num'>{c:.2f}</td>" for c in info["confidence"][:n])
    surv = "".join(f"<td class='num'>{a:.2f}</td>" for a in info["survival"][:n])
    return (f"<table class='sv-table' style='width:auto'><tr><th>proposal</th>{cells}</tr>"
            f"<tr><th>confidence c<sub>i</sub></th>{conf}</tr>"
            f"<tr><th>prefix survival a<sub>i</sub></th>{surv}</tr></table>")


def stages_html(info: dict, tokens: list[str]) -> str:
    """DLoop's stages: proposals per stage, the log-probability sum and the gate's decision.

    The decision is worked out again from each stage's numbers (Σ log q, g and the stage limit S)
    by lessons.inside.gate_reason, the rule the drafter itself runs, and not from the "continue"
    flag the record carries: a replayed or edited trace can carry a flag its numbers contradict,
    and the row must never print a comparison that is false.

    >>> table = stages_html({"threshold": -2.0, "max_stages": 3, "stages": [
    ...     {"start": 0, "end": 2, "logprob_sum": -0.5, "continue": True},
    ...     {"start": 2, "end": 4, "logprob_sum": -3.1, "continue": False}]}, ["a", "b", "c", "d"])
    >>> "draft another stage: Σ log q = −0.50 ≥ g = −2" in table
    True
    >>> "check now: Σ log q = −3.10 &lt; g = −2; the target checks all 4 proposals" in table
    True
    """
    stages, g = info.get("stages") or [], info.get("threshold")
    if g is None or not stages:
        return ""
    rows = []
    for i, s in enumerate(stages, 1):
        chips = " ".join(esc(t) for t in tokens[s["start"]:s["end"]])
        reason = gate_reason(i, s["logprob_sum"], g, info["max_stages"])
        if not reason.startswith("draft another stage"):
            end = min(s["end"], len(tokens))   # the length limit may have cut the last stage
            reason += f"; the target checks {'its one proposal' if end == 1 else f'all {end} proposals'}"
        provisional = "" if i == 1 else " <small>(context: provisional drafter features)</small>"
        rows.append(f"<tr><td>stage {i}{provisional}</td><td>{chips}</td><td>{html.escape(reason)}</td></tr>")
    return ("<table class='sv-table'><tr><th>stage</th><th>proposals</th><th>Σ log q vs threshold</th></tr>"
            + "".join(rows) + "</table>")


def stage_rows(loop: dict) -> list[dict]:
    r"""Lesson 9's table of one live DLoop round (specviz.lessons.inside.dloop_round): per stage its
    anchor, proposals and the gate's reason. A table's cells render markdown, so token text is shown as
    itself (specviz.lessons.markup.md_token): the Stack preset's `__init__` would turn bold.

    >>> loop = {"threshold": -8.0, "max_stages": 2,
    ...         "stages": [{"stage": 1, "anchor": "def", "proposals": [" __init__", "("], "logprob_sum": -1.5}]}
    >>> print(*stage_rows(loop)[0].values(), sep=" | ")
    1 | 'def' | '␣\_\_init\_\_' '\(' | draft another stage: Σ log q = −1.50 ≥ g = −8
    """
    return [{"stage": s["stage"], "anchor": md_token(s["anchor"]),
             "proposals": " ".join(md_token(t) for t in s["proposals"]),
             "gate": gate_reason(s["stage"], s["logprob_sum"], loop["threshold"], loop["max_stages"])}
            for s in loop["stages"]]


def sweep_figure(result: dict, label: Callable[[str], str]) -> go.Figure:
    """Speedup against g, the median with its range as an error bar, one line per drafter; each
    drafter's one-stage speedup as a dotted line of its colour, with its range as a band. The legend
    names each drafter by `label`, and each dotted line too: a note on the line itself would lie across
    the data, and two drafters' one-stage speedups are often close enough for their notes to collide.

    >>> from specviz.lessons.protocol import spread
    >>> one = {"speedup": 1.2, "speedup_spread": spread([1.1, 1.2, 1.3])}
    >>> rows = [{"drafter": "dloop", "threshold": g, "speedup": 1.0, "speedup_spread": spread([0.9, 1.0, 1.2])}
    ...         for g in (-4.0, -8.0)]
    >>> fig = sweep_figure({"one_stage": {"dloop": one}, "rows": rows}, {"dloop": "DLoop"}.get)
    >>> [t.name for t in fig.data], fig.data[1].line.dash
    (['DLoop', 'DLoop, one stage a round'], 'dot')
    >>> list(fig.data[0].x), list(fig.data[0].error_y.array), list(fig.data[0].error_y.arrayminus)
    ([-4.0, -8.0], [0.19999999999999996, 0.19999999999999996], [0.09999999999999998, 0.09999999999999998])
    >>> fig.layout.shapes[0].y0, fig.layout.shapes[0].y1
    (1.1, 1.3)
    """
    fig = go.Figure()
    for i, d in enumerate(result["one_stage"]):
        part, color = [r for r in result["rows"] if r["drafter"] == d], COLORS[i % 2]
        fig.add_trace(go.Scatter(
            name=label(d), x=[r["threshold"] for r in part], y=[r["speedup"] for r in part],
            mode="lines+markers", line={"color": color, "width": 3}, marker={"size": 10},
            error_y={"type": "data", "symmetric": False,
                     "array": [r["speedup_spread"].high - r["speedup"] for r in part],
                     "arrayminus": [r["speedup"] - r["speedup_spread"].low for r in part]}))
        one = result["one_stage"][d]["speedup_spread"]
        fig.add_hrect(y0=one.low, y1=one.high, fillcolor=color, opacity=0.12, line_width=0)
        fig.add_hline(y=one.median, line={"color": color, "dash": "dot"})
        fig.add_trace(go.Scatter(name=f"{label(d)}, one stage a round", x=[None], y=[None], mode="lines",
                                 line={"color": color, "dash": "dot"}))   # the dotted line's legend entry
    return base_layout(fig, "speedup against g (bars: the range over the runs; dotted: one stage a round)",
                       height=480,   # taller than the default: four legend rows sit below the axis title
                       xaxis_title="threshold g (lower: the gate opens more often)", yaxis_title="speedup ×")
