"""What a block drafter recorded about its own round (Round.drafter_info), as escaped HTML.

DSpark's confidence head: c_i per proposal and prefix survival a_i = c_1 ... c_i.
DLoop's gate: per stage, the sum of log q over its proposals against the threshold g; the
next stage runs only while the sum is >= g (and fewer than S stages ran).
Lesson 6's sweep (specviz.lessons.sweep): its figure, its table, the price of the stages the
gate added (from the same runs) and the measured counterpart of DLoop's Table 2. The sweep keys
its rows by drafter name ("dloop"); what a learner reads is the page's label for it, so every
builder here takes `label` (name -> label) and shows no name.

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


def sweep_rows(result: dict, label: Callable[[str], str]) -> list[dict]:
    """The sweep as a learner reads it: one-stage rows first, then each threshold, each drafter by `label`.

    >>> from specviz.lessons.protocol import spread
    >>> row = {"drafter": "dloop", "threshold": -8.0, "stages_per_round": 2.125, "looped": 0.67,
    ...        "acceptance_length": 2.5, "speedup_spread": spread([0.9, 1.0, 1.2])}
    >>> sweep_rows({"one_stage": {}, "rows": [row]}, {"dloop": "DLoop"}.get)[0]
    {'drafter': 'DLoop', 'g': '-8', 'stages per round': '2.12', 'rounds that drafted again': '67%', \
'tokens per check': '2.50', 'speedup': '1.00× (0.90–1.20× over 3 runs)'}
    """
    rows = list(result["one_stage"].values()) + result["rows"]
    return [{"drafter": label(r["drafter"]), "g": "one stage" if r["threshold"] is None else f"{r['threshold']:g}",
             "stages per round": f"{r['stages_per_round']:.2f}", "rounds that drafted again": f"{r['looped']:.0%}",
             "tokens per check": f"{r['acceptance_length']:.2f}", "speedup": r["speedup_spread"].label(unit="×")}
            for r in rows]


def price_rows(prices: list[dict], label: Callable[[str], str]) -> list[dict]:
    """The rows of specviz.lessons.sweep.stage_prices as a learner reads them, each drafter by `label`;
    '–' where the gate never opened, and a stage's cost whose runs' range reaches zero said to be
    within the noise, never shown as a number (a negative cost above all).

    >>> price_rows([{"drafter": "dloop", "threshold": -8.0, "looped": 0.5, "extra_stages": 0.5, "token_ms": 10.0,
    ...              "stage_ms": 5.0, "stage_in_noise": False, "tokens_added": 0.25, "tokens_needed": 0.5,
    ...              "verdict": "does not pay"}], {"dloop": "DLoop"}.get)[0]
    {'drafter': 'DLoop', 'g': '-8', 'rounds that drafted again': '50%', 'a later stage costs': '5.0 ms', \
'it added': '0.25 tokens', 'worth': '2.5 ms (at 10.0 ms a token)', 'pays for itself': 'does not pay'}
    """
    out = []
    for p in prices:
        opened = p["stage_ms"] is not None
        out.append({"drafter": label(p["drafter"]), "g": f"{p['threshold']:g}",
                    "rounds that drafted again": f"{p['looped']:.0%}",
                    "a later stage costs": "–" if not opened else "within this machine's noise"
                    if p["stage_in_noise"] else f"{p['stage_ms']:.1f} ms",
                    "it added": f"{p['tokens_added']:.2f} tokens" if opened else "–",
                    "worth": f"{p['tokens_added'] * p['token_ms']:.1f} ms (at {p['token_ms']:.1f} ms a token)"
                    if opened else "–",
                    "pays for itself": p["verdict"]})
    return out


def price_verdict(prices: list[dict], drafter: str, name: str) -> str:
    """One sentence for `drafter`, called `name` in it: where the stages the gate added repaid their cost.

    >>> p = {"drafter": "dloop", "stage_ms": 5.0, "tokens_added": 0.25, "tokens_needed": 0.5}
    >>> print(price_verdict([dict(p, threshold=-4.0, verdict="gate never opened"),
    ...                      dict(p, threshold=-8.0, verdict="does not pay"),
    ...                      dict(p, threshold=-12.0, verdict="within this machine's noise")], "dloop", "DLoop"))
    ... # doctest: +NORMALIZE_WHITESPACE
    DLoop: at g = -8 the stages it added cost more than their tokens were worth; at g = -12 the difference
    from one stage a round is within this machine's noise; at g = -4 the gate never opened.
    """
    said = {"pays": "the stages it added paid for themselves", "does not pay":
            "the stages it added cost more than their tokens were worth",
            "within this machine's noise": "the difference from one stage a round is within this machine's noise",
            "gate never opened": "the gate never opened"}
    parts = []
    for verdict, text in said.items():
        gs = [f"{p['threshold']:g}" for p in prices if p["drafter"] == drafter and p["verdict"] == verdict]
        if gs:
            parts.append(f"at g = {', '.join(gs)} {text}")
    return f"{name}: " + "; ".join(parts) + "."


def paper_rows(result: dict, threshold: float, aware: str = "dloop", plain: str = "dloop-plain") -> list[dict]:
    """Table 2's three rows, measured in this sweep at `threshold` ("no loop": the plain drafter, one
    stage a round, the DSpark drafter's weights).

    >>> from specviz.lessons.protocol import spread
    >>> def row(d, g, acc):
    ...     return {"drafter": d, "threshold": g, "acceptance_length": acc, "speedup_spread": spread([1.0])}
    >>> res = {"one_stage": {"dloop-plain": row("dloop-plain", None, 2.46)},
    ...        "rows": [row("dloop-plain", -8.0, 2.46), row("dloop", -8.0, 2.13)]}
    >>> [r["tokens per check"] for r in paper_rows(res, -8.0)]
    ['2.46', '2.46', '2.13']
    """
    rows = {(r["drafter"], r["threshold"]): r for r in result["rows"]}
    measured = [("no loop", result["one_stage"][plain]), ("loop, no loop-aware training", rows[plain, threshold]),
                ("loop with loop-aware training", rows[aware, threshold])]
    return [{"configuration (this machine, g = " + f"{threshold:g})": name,
             "tokens per check": f"{r['acceptance_length']:.2f}", "speedup": r["speedup_spread"].label(unit="×")}
            for name, r in measured]
