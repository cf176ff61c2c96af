"""The cache strip: which committed tokens the target has processed into its KV cache.

The invariant the engine keeps between rounds: every committed token is processed except the
newest (the last correction or bonus), which is committed text but not yet in the cache. A
round feeds that token plus the proposals in one forward; commit crops the cache back.

  draft   committed tokens (the newest one pending), proposals drafted outside the cache
  verify  the pending token is processed into the cache with the proposals; it is committed text,
          so it stays processed, while the proposals are in the cache speculatively
  commit  the cache holds the committed prefix minus its newest token; rejected positions
          were cropped away

What it leaves out: the drafter's own cache (it follows the same crop).
"""
from specviz.viz.tokens import PHASES, esc

LEGEND = [("processed", "processed into the target's cache"), ("pending", "committed, not yet processed"),
          ("drafted", "drafted, outside the cache"), ("speculative", "in the cache speculatively"),
          ("discarded", "cropped away")]


def cells(texts_before: list[str], r, phase: str) -> list[tuple[str, str]]:
    """(text, state) for every position the strip shows, oldest first.

    >>> from types import SimpleNamespace as R
    >>> r = R(proposed_tokens=["a", "b"], accepted=1, emitted=[{"text": "a"}, {"text": "d"}],
    ...       processed_before=2, committed_before=3, processed_after=4, committed_after=5)
    >>> [s for _, s in cells(["<s>", "x", "y"], r, "verify")]
    ['processed', 'processed', 'processed', 'speculative', 'speculative']
    >>> cells(["<s>", "x", "y"], r, "commit")[-3:]
    [('a', 'processed'), ('d', 'pending'), ('b', 'discarded')]
    """
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}")
    pb, cb = r.processed_before, r.committed_before
    if len(texts_before) != cb:
        raise ValueError(f"expected {cb} committed token texts, got {len(texts_before)}")
    if phase == "draft":
        return ([(t, "processed") for t in texts_before[:pb]] + [(t, "pending") for t in texts_before[pb:]]
                + [(t, "drafted") for t in r.proposed_tokens])
    if phase == "verify":   # the check processes the newest committed token too, and it is kept
        return [(t, "processed") for t in texts_before] + [(t, "speculative") for t in r.proposed_tokens]
    after = texts_before + [e["text"] for e in r.emitted]
    pa = r.processed_after
    rejected = r.proposed_tokens[r.accepted:]
    return ([(t, "processed") for t in after[:pa]] + [(t, "pending") for t in after[pa:]]
            + [(t, "discarded") for t in rejected])


def strip_html(texts_before: list[str], r, phase: str, window: int = 24) -> str:
    """The strip for the last `window` positions, with counts and a legend."""
    shown = cells(texts_before, r, phase)
    hidden = max(0, len(shown) - window)
    parts = [f'<span class="sv-cell elided">… {hidden} earlier</span>'] if hidden else []
    parts += [f'<span class="sv-cell {state}" title="{state}">{esc(text)}</span>' for text, state in shown[hidden:]]
    if phase == "commit":
        counts = f"processed {r.processed_after} · committed {r.committed_after}"
    elif phase == "verify":
        counts = (f"processed {r.committed_before} · committed {r.committed_before} · "
                  f"{len(r.proposed_tokens)} in the cache speculatively")
    else:
        counts = f"processed {r.processed_before} · committed {r.committed_before}"
    legend = "".join(f'<span class="sv-cell {s}">&nbsp;</span>{label}' for s, label in LEGEND)
    return (f'<div class="sv-strip">{"".join(parts)}</div>'
            f'<div class="sv-legend"><b>{counts}</b>{legend}</div>')
