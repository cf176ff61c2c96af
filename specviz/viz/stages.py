"""What a block drafter recorded about its own round (Round.drafter_info), as escaped HTML.

DSpark's confidence head: c_i per proposal and prefix survival a_i = c_1 ... c_i.
DLoop's gate: per stage, the sum of log q over its proposals against the threshold g; the
next stage runs only while the sum is >= g (and fewer than S stages ran).
Whether a second stage earns its cost (specviz.lessons.sweep.stage_earnings), as table rows and a verdict.

What it leaves out: drafters that record nothing (autoregressive, prompt lookup): empty string.
"""
from specviz.viz.tokens import esc


def survival_html(info: dict, tokens: list[str]) -> str:
    """One row per proposal: confidence c_i and prefix survival a_i.

    >>> "0.72" in survival_html({"confidence": [0.8, 0.9], "survival": [0.8, 0.72]}, ["a", "b"])
    True
    """
    if not info.get("survival"):
        return ""
    cells = "".join(f"<td class='num'>{esc(t)}</td>" for t in tokens)
    conf = "".join(f"<td class='num'>{c:.2f}</td>" for c in info["confidence"])
    surv = "".join(f"<td class='num'>{a:.2f}</td>" for a in info["survival"])
    return (f"<table class='sv-table' style='width:auto'><tr><th>proposal</th>{cells}</tr>"
            f"<tr><th>confidence c<sub>i</sub></th>{conf}</tr>"
            f"<tr><th>prefix survival a<sub>i</sub></th>{surv}</tr></table>")


def stages_html(info: dict, tokens: list[str]) -> str:
    """DLoop's stages: proposals per stage, the log-probability sum and the gate's decision.

    >>> html = stages_html({"threshold": -2.0, "max_stages": 3, "stages": [
    ...     {"start": 0, "end": 2, "logprob_sum": -0.5, "continue": True},
    ...     {"start": 2, "end": 4, "logprob_sum": -3.1, "continue": False}]}, ["a", "b", "c", "d"])
    >>> "−0.50 ≥ g = −2.0: draft another stage" in html, "check all 4 proposals" in html
    (True, True)
    """
    stages, g = info.get("stages") or [], info.get("threshold")
    if g is None or not stages:
        return ""
    rows = []
    for i, s in enumerate(stages, 1):
        chips = " ".join(esc(t) for t in tokens[s["start"]:s["end"]])
        lp = f"{s['logprob_sum']:.2f}".replace("-", "−")
        gs = f"{g:.1f}".replace("-", "−")
        if s["continue"]:
            verdict = f"{lp} ≥ g = {gs}: draft another stage"
        elif i == info.get("max_stages"):
            verdict = f"{lp}: stage limit S = {info['max_stages']} reached, check all {s['end']} proposals"
        else:
            verdict = f"{lp} &lt; g = {gs}: stop and check all {s['end']} proposals"
        provisional = "" if i == 1 else " <small>(context: provisional drafter features)</small>"
        rows.append(f"<tr><td>stage {i}{provisional}</td><td>{chips}</td><td>{verdict}</td></tr>")
    return ("<table class='sv-table'><tr><th>stage</th><th>proposals</th><th>Σ log q vs threshold</th></tr>"
            + "".join(rows) + "</table>")


def earnings_rows(result: dict) -> list[dict]:
    """The rows of `stage_earnings` as a learner reads them; '–' where the gate never opened.

    >>> earnings_rows({"stage_ms": 7.0, "rows": [{"threshold": -4.0, "opens": 0.5, "first_stage_whole": 0.4,
    ...                                           "tokens_added": 0.3, "worth_ms": 4.2, "pays": False}]})[0]["pays for itself"]
    'no: 4.2 ms < 7.0 ms'
    """
    out = []
    for r in result["rows"]:
        opened = r["pays"] is not None
        verdict = (f"{'yes' if r['pays'] else 'no'}: {r['worth_ms']:.1f} ms {'>' if r['pays'] else '<'} "
                   f"{result['stage_ms']:.1f} ms") if opened else "–"
        out.append({"g": r["threshold"], "gate opens in": f"{r['opens']:.0%} of rounds",
                    "first stage survived whole": f"{r['first_stage_whole']:.0%}" if opened else "–",
                    "tokens the second stage added": f"{r['tokens_added']:.2f}" if opened else "–",
                    "pays for itself": verdict})
    return out


def earnings_verdict(result: dict) -> str:
    """One sentence: at which thresholds, if any, the second stage repaid its cost.

    >>> earnings_verdict({"token_ms": 14.0, "stage_ms": 7.0, "tokens_needed": 0.5, "rounds": 30,
    ...                   "rows": [{"threshold": -4.0, "pays": False},
    ...                            {"threshold": -8.0, "pays": None}]})
    'A second stage costs 7.0 ms, the price of 0.50 tokens at 14.0 ms each; at no threshold where the gate opened did it add that many.'
    """
    if not result["rounds"]:
        return "No round drafted two whole stages within this run's token budget, so there is nothing to price."
    if result["stage_ms"] <= 0:
        return (f"The two-stage rounds were not slower here ({result['stage_ms']:.1f} ms): the shared machine was "
                "busier during the one-stage runs. Price it again.")
    head = (f"A second stage costs {result['stage_ms']:.1f} ms, the price of {result['tokens_needed']:.2f} tokens at "
            f"{result['token_ms']:.1f} ms each")
    paid = [r["threshold"] for r in result["rows"] if r["pays"]]
    if paid:
        return head + f"; it added more at g = {', '.join(f'{g:g}' for g in paid)}."
    return head + "; at no threshold where the gate opened did it add that many."
