"""Where lesson 1's page is in a recorded trace: a round and how much of it is revealed.

A recorded round is revealed in three phases, draft -> verify -> commit (PHASE_ORDER). The cursor
is plain data, no models: a link carries one (appkit.links), and a follower's cursor
never passes the presenter's (`order`).

What it leaves out: moving through a generation (specviz.lessons.draft.Stepper).
"""
from dataclasses import dataclass

PHASE_ORDER = ("draft", "verify", "commit")


@dataclass(frozen=True)
class Cursor:
    """Where a page is in a recorded trace: `shown` rounds on screen (the current one is round
    shown - 1) and the phase of the current round revealed so far.

    >>> c = Cursor().forward(); c
    Cursor(shown=1, phase='draft')
    >>> c.forward().forward(), c.forward().forward().forward()
    (Cursor(shown=1, phase='commit'), Cursor(shown=2, phase='draft'))
    >>> Cursor(2, "draft").back(), Cursor(2, "verify").next_round(), Cursor(2, "commit").next_round()
    (Cursor(shown=1, phase='commit'), Cursor(shown=3, phase='draft'), Cursor(shown=3, phase='draft'))
    """
    shown: int = 0
    phase: str = "commit"

    def forward(self) -> "Cursor":
        """The next phase; after commit, the draft phase of the next round."""
        if self.phase == "commit":
            return Cursor(self.shown + 1, "draft")
        return Cursor(self.shown, PHASE_ORDER[PHASE_ORDER.index(self.phase) + 1])

    def next_round(self) -> "Cursor":
        """The next round's draft phase, from any phase of this one: the page asks there how many
        proposals the target will keep, so a round is never shown whole before its question."""
        return Cursor(self.shown + 1, "draft")

    def back(self) -> "Cursor":
        if self.shown == 0:
            return self
        if self.phase == "draft":
            return Cursor(self.shown - 1, "commit")
        return Cursor(self.shown, PHASE_ORDER[PHASE_ORDER.index(self.phase) - 1])


def order(c: Cursor) -> tuple[int, int]:
    """A key that sorts cursors by how far they have revealed; the start (nothing shown) first.

    >>> order(Cursor()) < order(Cursor(1, "draft")) < order(Cursor(1, "commit")) < order(Cursor(2, "draft"))
    True
    """
    return c.shown, PHASE_ORDER.index(c.phase) if c.shown else len(PHASE_ORDER)
