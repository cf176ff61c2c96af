"""Lesson 6's price of a later DLoop stage in two regimes (specviz.lessons.sweep.stage_in_regimes, regime_rows,
regime_verdict), planted on the sides test_sweep.py's planted sweep does not reach: a stage that pays in neither
regime, one that pays only on the large-target profile, one that pays only here.

Each plant is a sweep as `threshold_sweep` returns it, with run costs like a real measurement's: plain decoding
10 ms a step (9 of them the forward), one stage a round in 5 rounds of k = 4 committing 2 tokens each, and at
g = -8 two stages a round. A stage pays exactly where it adds more tokens than its cost is worth in one-stage
tokens (the large-target profile: a step 10 ms, a further position 0.5 ms, a stage 2 ms, so one stage more
costs 4 ms of a 7 ms token and needs 4/7 = 0.57 tokens).
"""
import pytest

from specviz.lessons.pricing import LARGE_GPU
from specviz.lessons.sweep import regime_rows, regime_verdict, stage_in_regimes

PLAIN = {"rounds": 10, "mean_round_ms": 10.0, "verify_ms": 90.0}


def sweep(verify_ms: float, draft_ms: list[float], tokens_at_g: list[int]) -> dict:
    """One-stage runs whose verify and draft ms are planted (a further position costs (verify − 45) / 20 ms, a
    stage draft / 5 ms, no bookkeeping beyond a step's), and g = -8 rounds of two stages committing
    `tokens_at_g`."""
    one = {"drafter": "dloop", "threshold": None, "stages_per_round": 1.0, "acceptance_length": 2.0,
           "shapes": [(5, 1, 2)] * 5,
           "runs_costs": [{"rounds": 5, "verify_ms": verify_ms, "draft_ms": d, "overhead_ms": 5.0} for d in draft_ms]}
    row = dict(one, threshold=-8.0, stages_per_round=2.0, acceptance_length=sum(tokens_at_g) / len(tokens_at_g),
               shapes=[(9, 2, t) for t in tokens_at_g])
    return {"baseline_runs": [PLAIN] * len(draft_ms), "one_stage": {"dloop": one}, "rows": [row]}


@pytest.mark.parametrize("planted, row, said", [
    # a position 1 ms, a stage 6 ms or 1 ms: a round of one stage costs 20 or 15 ms (a token 10 or 7.5 ms), a
    # second stage 10 or 5 ms more, so it needs 1.00 or 0.67 tokens; it adds 0.25: dear in both runs and there
    (sweep(65.0, [30.0, 5.0], [2, 2, 2, 3]),
     {"a stage adds": "0.25", "needs, priced, this machine": "0.67–1.00", "pays, priced, this machine": "no",
      "needs, priced, large target": "0.57", "pays, priced, large target": "no"},
     "D: on this machine a later stage pays at none of the swept g (at g = -8 it adds 0.25 tokens and needs 0.83); "
     "priced on the large-target profile a later stage pays at none of the swept g (at g = -8 it adds 0.25 tokens "
     "and needs 0.57)."),
    # a stage 6 ms in both runs (needs 1.00); it adds 0.75: too little here, more than the 0.57 it needs there
    (sweep(65.0, [30.0, 30.0], [3, 3, 3, 2]),
     {"a stage adds": "0.75", "needs, priced, this machine": "1.00", "pays, priced, this machine": "no",
      "needs, priced, large target": "0.57", "pays, priced, large target": "pays"},
     "D: on this machine a later stage pays at none of the swept g (at g = -8 it adds 0.75 tokens and needs 1.00); "
     "priced on the large-target profile it starts to pay at g = -8, where it adds 0.75 tokens and needs 0.57."),
    # a further position free and a stage 0.5 ms: one stage more costs 0.5 ms of a 5.25 ms token (needs 0.10);
    # it adds 0.25: it pays here in every run, and not there
    (sweep(45.0, [2.5, 2.5], [2, 2, 2, 3]),
     {"a stage adds": "0.25", "needs, priced, this machine": "0.10", "pays, priced, this machine": "pays",
      "needs, priced, large target": "0.57", "pays, priced, large target": "no"},
     "D: on this machine it starts to pay at g = -8, where it adds 0.25 tokens and needs 0.10; priced on the "
     "large-target profile a later stage pays at none of the swept g (at g = -8 it adds 0.25 tokens and needs "
     "0.57)."),
], ids=["pays in neither", "pays only there", "pays only here"])
def test_a_later_stage_pays_in_each_regime_exactly_where_it_adds_more_than_it_needs(planted, row, said):
    """Catches a verdict shared by both regimes (the two columns disagree in two plants), a "pays" read off the
    looping rounds' tokens alone (it adds tokens in every plant), and a need priced from the other regime's
    costs."""
    prices = stage_in_regimes(planted, LARGE_GPU, "this machine")
    assert regime_rows(prices, "dloop") == [{"g": "-8", **row}]
    assert regime_verdict(prices, "dloop", "D", "this machine", "the large-target profile") == said
