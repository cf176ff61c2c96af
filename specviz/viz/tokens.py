"""Escaped HTML for token text: chips, the committed text, the drafted block, the round log.

A recorded round is revealed in three phases (PHASES): draft (only the proposals exist),
verify (the target's verdicts), commit (accepted prefix plus correction, bonus, or the token the
target supplies itself when the stop rule fires, which equals the proposal). Each builder
takes the phase so a page can show a round that has already run, one step at a time.

Token text comes from the tokenizer and from whatever a user typed, so every string goes
through `esc` (html.escape, then visible spaces and newlines) before it reaches HTML.

What it leaves out: the per-history p/q table and the cache strip (see `histories`, `cache`).
"""
import html

from specviz.lessons.markup import md_token

PHASES = ("draft", "verify", "commit")
KIND_LABEL = {"accepted": "accepted", "correction": "correction", "bonus": "bonus",
              "stop": "stop rule: the target's own token, equal to the proposal"}


def esc(text: str, visible_space: bool = True) -> str:
    """Escape token text for HTML; show newlines, and a token of spaces alone, so a chip is never blank.

    >>> esc("<b>")
    '&lt;b&gt;'
    >>> esc(" to"), esc("the token")
    (' to', 'the token')
    >>> esc(" ")
    '␣'
    """
    out = html.escape(text)
    if visible_space and not text.strip(" "):
        # a space among letters stays a space, so "the token" reads as words (a chip keeps a
        # leading space as a gap inside its border); a token of spaces alone would be an empty
        # chip, so it gets the open-box sign
        out = out.replace(" ", "␣")
    return out.replace("\n", "↵").replace("\t", "⇥") or "∅"


def chip(text: str, kind: str = "proposal", note: str = "", mark: str = "", extra: str = "") -> str:
    """One token as a chip; `note` is a small caption (already plain text, escaped here).

    >>> chip("a", "accepted", note="q 0.50", mark="ok")
    '<span class="sv-chip sv-accepted">a<small>q 0.50</small><span class="sv-mark ok">✓</span></span>'
    """
    cls = f"sv-chip sv-{kind}" + (f" {extra}" if extra else "")
    small = f"<small>{html.escape(note)}</small>" if note else ""
    sign = {"ok": '<span class="sv-mark ok">✓</span>', "no": '<span class="sv-mark no">✗</span>'}.get(mark, "")
    return f'<span class="{cls}">{esc(text)}{small}{sign}</span>'


def phase_badges(phase: str) -> str:
    """The three phases with the current one highlighted.

    >>> phase_badges("verify").count("sv-phase on")
    1
    """
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}")
    return "".join(f'<span class="sv-phase{" on" if p == phase else ""}">{i}. {p}</span>'
                   for i, p in enumerate(PHASES, 1))


def committed_html(prompt: str, rounds: list, shown: int, phase: str) -> str:
    """The prompt, then every token committed by the first `shown` rounds, coloured by kind.

    Round `shown - 1` is the one on screen: its tokens appear only once the page reaches its
    commit phase, marked as new.
    """
    parts = [f'<span class="sv-prompt">{esc(prompt, visible_space=False)}</span>']
    for r in rounds[:shown]:
        current = r.index == shown - 1
        if current and phase != "commit":
            break
        for e in r.emitted:
            new = " sv-new" if current else ""
            title = html.escape(f"round {r.index + 1}: {e['kind']}", quote=True)
            parts.append(f'<span class="sv-gen-{e["kind"]}{new}" title="{title}">{esc(e["text"], visible_space=False)}</span>')
    return '<div class="sv-text">' + "".join(parts) + "</div>"


def block_html(r, phase: str) -> str:
    """The drafted block of round `r`: proposals with q, then verdicts, then what was emitted."""
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}")
    if not r.proposed:
        out = ['<span class="sv-chip sv-discarded">no proposals this round</span>']
    else:
        out = []
        first_reject = r.accepted
        for i, (tok, qx) in enumerate(zip(r.proposed_tokens, r.q)):
            note = f"q {qx:.2f}"
            if phase == "draft":
                out.append(chip(tok, "proposal", note))
            elif i < first_reject:
                out.append(chip(tok, "accepted", note, "ok"))
            elif i == first_reject and r.greedy and r.greedy["stop_rule_applied"]:
                # it matched, but the block hit a stop: the target supplies this token itself
                out.append(chip(tok, "discarded", note + " · stop rule"))
            elif i == first_reject:
                out.append(chip(tok, "rejected", note, "no"))
            else:
                out.append(chip(tok, "discarded", note + " · never used"))
    if phase == "commit":
        last = r.emitted[-1]
        if last["kind"] != "accepted":
            out.append('<span class="sv-chip" style="border:none;background:none">→</span>')
            out.append(chip(last["text"], last["kind"], note=KIND_LABEL[last["kind"]]))
    return '<div class="sv-text">' + "".join(out) + "</div>"


def summary(r) -> str:
    """One sentence for a committed round.

    >>> from types import SimpleNamespace as R
    >>> summary(R(proposed=[1, 2, 3], accepted=2, emitted=[{"kind": "accepted"}] * 2 + [{"kind": "correction"}]))
    'kept 2 of 3 proposals + 1 correction = 3 tokens from one target pass'
    >>> summary(R(proposed=[1, 2], accepted=1, emitted=[{"kind": "accepted"}, {"kind": "stop"}]))
    'kept 1 of 2 proposals + 1 token the target supplies at the stop rule = 2 tokens from one target pass'
    >>> summary(R(proposed=[], accepted=0, emitted=[{"kind": "bonus"}]))
    'the drafter proposed nothing: the target supplied 1 token of its own from one target pass'
    """
    if not r.proposed:   # prompt lookup finds no earlier match: the round is a plain step
        return "the drafter proposed nothing: the target supplied 1 token of its own from one target pass"
    last = r.emitted[-1]["kind"] if r.emitted else None
    extra = {"correction": " + 1 correction", "bonus": " + 1 bonus",
             "stop": " + 1 token the target supplies at the stop rule"}.get(last, "")
    n = len(r.emitted)
    return (f"kept {r.accepted} of {len(r.proposed)} proposals{extra} = {n} token{'s' if n != 1 else ''} "
            f"from one target pass")


def verdict(r, guess: int | None, committed: bool) -> str:
    """The round's outcome as one markdown sentence, after the learner's guess if there was one:
    at verify how many proposals survived, at commit what the one target pass committed.

    >>> from types import SimpleNamespace as R
    >>> r = R(proposed=[1, 2, 3, 4], accepted=1, emitted=[{"kind": "accepted"}, {"kind": "correction"}])
    >>> verdict(r, 2, committed=False)
    'You predicted 2; the target kept **1** of 4 proposals.'
    >>> verdict(r, None, committed=True)
    'The target kept **1** of 4 proposals + 1 correction = 2 tokens from one target pass.'
    >>> verdict(R(proposed=[], accepted=0, emitted=[{"kind": "bonus"}]), None, committed=True)
    'The drafter proposed nothing: the target supplied 1 token of its own from one target pass.'
    """
    if not r.proposed:
        return summary(r)[0].upper() + summary(r)[1:] + "." if committed else ""
    body = summary(r) if committed else f"kept {r.accepted} of {len(r.proposed)} proposals"
    body = body.replace(f"kept {r.accepted}", f"kept **{r.accepted}**", 1)
    return (f"You predicted {guess}; the target " if guess is not None else "The target ") + body + "."


def log_rows(rounds: list) -> list[dict]:
    """Rows for the round log table. A table's cells render markdown, so the emitted text is shown as
    itself (specviz.lessons.markup.md_token): `__init__` would turn bold, `<b>` vanish."""
    return [{"round": r.index + 1, "proposed": len(r.proposed), "accepted": r.accepted,
             "emitted": md_token("".join(e["text"] for e in r.emitted), spaces=False),
             "last": r.emitted[-1]["kind"] if r.emitted else "",
             "draft ms": round(r.draft_ms, 2), "verify ms": round(r.verify_ms, 2),
             "round ms": round(r.total_ms, 2)} for r in rounds]
