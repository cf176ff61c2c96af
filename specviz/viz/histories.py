"""The verification of one round as HTML: candidate histories H, H a, H a b, ... with what the
target (p) and the drafter (q) predict after each, the verdict per proposal, and the greedy
n_matches computation with the round's real numbers.

Row i is the history H x_1..x_i. The target's prediction there checks proposal x_{i+1} (not
x_i); the last row (after every proposal) can only supply a bonus token.

What it leaves out: the probabilities beyond the recorded top few (a `Round` keeps the top 5).
"""
import html

from specviz.viz.tokens import PHASES, esc


def _top(entries: list, cls: str, highlight: int | None = None) -> str:
    parts = []
    for tid, text, prob in entries[:4]:
        strong = ' style="outline:2px solid #0f172a"' if tid == highlight else ""
        parts.append(f'<span class="sv-chip"{strong}>{esc(text)}<small class="{cls}">{prob:.2f}</small></span>')
    return "".join(parts) or "—"


def history_label(tokens: list[str], i: int) -> str:
    """H followed by the first i proposals, escaped.

    >>> history_label([" a", "<b>"], 2)
    'H  a &lt;b&gt;'
    """
    return "H" + "".join(" " + esc(t) for t in tokens[:i])


def _verdict(r, i: int, verifier: str) -> str:
    """Row i's verdict: what the verifier compared there, with its own numbers, and what the round did
    (keep, reject, the stop rule, or unused after a rejection). Each comparison sign is worked out from
    the numbers the row shows, so a row never states an order they do not have.

    >>> from types import SimpleNamespace as R
    >>> r = R(accepted=1, decisions=[{"p": 0.3, "q": 0.6, "ratio": 0.5, "u": 0.2, "accepted": True},
    ...                              {"p": 0.1, "q": 0.4, "ratio": 0.25, "u": 0.7, "accepted": False}])
    >>> _verdict(r, 0, "sampling").split(" <span")[0], _verdict(r, 1, "sampling").split(" <span")[0]
    ('u = 0.200 &lt; min(1, p/q) = min(1, 0.300/0.600) = 0.500', 'u = 0.700 ≥ min(1, p/q) = min(1, 0.100/0.400) = 0.250')
    """
    if i >= len(r.decisions):
        return "—"
    d = r.decisions[i]
    if i > r.accepted:
        return '<span style="color:#94a3b8">unused: this history holds a rejected token</span>'
    ok = i < r.accepted
    mark = '<span class="sv-mark ok">✓ keep</span>' if ok else '<span class="sv-mark no">✗ reject</span>'
    if verifier == "greedy":
        g = r.greedy
        if not ok and g and g["stop_rule_applied"]:
            mark = '<span class="sv-mark no">stop rule: target supplies it</span>'
        choice = esc(_text_of(r, i, r.target_choice[i]))
        # "=" compares the two ids the row names, not the round's mismatch flag
        return f"target's argmax is {choice} {'=' if r.target_choice[i] == r.proposed[i] else '≠'} proposal {mark}"
    if verifier == "sampling":
        # the sign is the verifier's own test, u < min(1, p/q) (generator/verify.py), made on the numbers shown
        sign = "&lt;" if d["u"] < d["ratio"] else "≥"
        return (f"u = {d['u']:.3f} {sign} min(1, p/q) = min(1, {d['p']:.3f}/{d['q']:.3f}) = {d['ratio']:.3f} {mark}")
    return f"target draws {esc(_text_of(r, i, d['target_draw']))} {mark}"


def _text_of(r, i: int, tid: int) -> str:
    """Text of token `tid` at history i from the round's own records: the target's top list, the
    proposals, or what the round committed there (a target draw outside the top list is the token
    it emitted). An id the round recorded no text for is named as such, never as a bare number.

    >>> from types import SimpleNamespace as R
    >>> r = R(p_top=[[[5, " a", 0.6]]], proposed=[5], proposed_tokens=[" a"],
    ...       emitted=[{"id": 1101, "text": " found", "kind": "correction"}])
    >>> _text_of(r, 0, 5), _text_of(r, 0, 1101), _text_of(r, 0, 7)
    (' a', ' found', 'token id 7 (outside the recorded top 5)')
    """
    for t, text, _ in r.p_top[i]:
        if t == tid:
            return text
    if i < len(r.proposed) and r.proposed[i] == tid:
        return r.proposed_tokens[i]
    if i < len(r.emitted) and r.emitted[i]["id"] == tid:
        return r.emitted[i]["text"]
    return f"token id {tid} (outside the recorded top 5)"


def histories_html(r, phase: str, verifier: str) -> str:
    """A table: candidate history, proposal checked there, p top, q top, verdict."""
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}")
    rows = []
    k = len(r.proposed)
    for i in range(k + 1):
        if i < k:
            checked = f'{esc(r.proposed_tokens[i])} <small>(q {r.q[i]:.2f}{"" if phase == "draft" else f", p {r.p_proposed[i]:.2f}"})</small>'
            q_cell = _top(r.q_top[i], "sv-q", r.proposed[i]) if i < len(r.q_top) else "—"
        else:
            checked = "<small>nothing left: a bonus comes from here</small>"
            q_cell = "—"
        if phase == "draft":
            p_cell, verdict = '<span style="color:#94a3b8">not computed yet</span>', ""
        else:
            p_cell = _top(r.p_top[i], "sv-p", r.proposed[i] if i < k else None)
            bonus = r.emitted and r.emitted[-1]["kind"] == "bonus" and r.accepted == k
            # greedy takes the target's argmax as the bonus; the sampling verifiers draw it
            verdict = _verdict(r, i, verifier) if i < k else (
                ("bonus: the target's argmax here" if verifier == "greedy" else "bonus drawn here") if bonus else "")
        rows.append(f"<tr><td>{history_label(r.proposed_tokens, i)}</td><td>{checked}</td>"
                    f"<td>{p_cell}</td><td>{q_cell}</td><td>{verdict}</td></tr>")
    head = ("<tr><th>candidate history</th><th>proposal checked here</th>"
            "<th><span class='sv-p'>p</span>: target predicts (top)</th>"
            "<th><span class='sv-q'>q</span>: drafter proposed from</th><th>verdict</th></tr>")
    return f'<table class="sv-table">{head}{"".join(rows)}</table>'


def _cells(values: list) -> str:
    return "".join(f'<td class="num">{v}</td>' for v in values)


def n_matches_html(r) -> str:
    """The transformers 4.46 greedy rule written out with this round's values.

    mismatch_i = (x_i != argmax p_i); cumsum; n_matches = sum(cumsum < 1), minus one under the
    stop rule. Empty string when the round was not verified greedily.
    """
    g = r.greedy
    if not g:
        return ""
    k = len(r.proposed)
    choice = [esc(_text_of(r, i, r.target_choice[i])) for i in range(k)]
    below = [int(c < 1) for c in g["cumsum"]]
    rows = [
        f"<tr><th>proposal x</th>{''.join(f'<td class=num>{esc(t)}</td>' for t in r.proposed_tokens)}</tr>",
        f"<tr><th>target argmax</th>{''.join(f'<td class=num>{c}</td>' for c in choice)}</tr>",
        f"<tr><th>mismatch</th>{_cells(g['mismatch'])}</tr>",
        f"<tr><th>cumsum</th>{_cells(g['cumsum'])}</tr>",
        f"<tr><th>cumsum &lt; 1</th>{_cells(below)}</tr>",
    ]
    n = sum(below)
    formula = f"n_matches = sum(cumsum < 1) = {n}"
    if g["stop_rule_applied"]:
        formula += f"; the block hit a stop and all matched, so n_matches -= 1 → {g['n_matches']}"
    formula += (f"; valid_tokens = selected_tokens[:, : n_matches + 1] → {g['n_matches'] + 1} "
                f"token{'s' if g['n_matches'] else ''} committed")
    return (f'<table class="sv-table" style="width:auto">{"".join(rows)}</table>'
            f'<p style="margin-top:0.5em"><code>{html.escape(formula)}</code></p>')
