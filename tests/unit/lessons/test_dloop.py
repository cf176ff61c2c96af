"""What lesson 6 says of its sweep: whether it reproduces the paper's ordering and where the tokens
loop-aware training changed came from (one statement, every token figure per check), and what a later
stage is worth on this machine and on the large-target profile."""
import re

import pytest
from hypothesis import given, settings, strategies as st

from specviz.generator.engine import Generation
from specviz.generator.settings import Settings
from specviz.lessons.pricing import LARGE_GPU
from specviz.lessons import dloop
from specviz.lessons.protocol import spread
from specviz.lessons.dloop import (GATE_RULE, OPENING, pays_from, regime_rows, regime_verdict, stage_in_regimes, stages_answer,
                                   stages_reason, training_note)


def sweep(first, looping, g=-8.0, speedups=([1.0, 1.1], [1.0, 1.1])):
    """Tokens per check of the loop-aware and the plain drafter with one stage a round (`first`) and at g,
    and the speedups of their runs at g (overlapping by default: within the noise)."""
    def row(d, threshold, tokens, s=(1.0,)):
        return {"drafter": d, "threshold": threshold, "acceptance_length": tokens, "speedup_spread": spread(list(s))}
    return {"one_stage": {"dloop": row("dloop", None, first[0]), "dloop-plain": row("dloop-plain", None, first[1])},
            "rows": [row("dloop", g, looping[0], speedups[0]), row("dloop-plain", g, looping[1], speedups[1])]}


def test_the_per_stage_and_per_check_figures_never_meet_in_one_statement():
    """Lesson 6 showed 'each stage beyond the first added 0.16 against 0.20 tokens' beside 'the stages the gate
    added 0.24 … 0.33 tokens a check': one statement now, every token figure in it per check."""
    said = training_note(sweep((2.67, 2.13), (2.91, 2.46)), -8.0)
    assert "0.24 tokens a check with the training, 0.33 without" in said
    assert "each stage beyond the first" not in said and re.findall(r"tokens(?! a check| with the training)", said) == []


@pytest.mark.parametrize("speedups,head,pace", [
    (([1.5, 1.6], [1.0, 1.1]), "this sweep reproduces the paper's ordering", "its speedup was above the other's"),
    (([1.0, 1.1], [1.0, 1.1]), "as in the paper, but not more speed", "within this machine's noise"),
    (([0.7, 0.8], [1.0, 1.1]), "as in the paper, but not more speed", "its speedup was below the other's")])
def test_the_paper_ordering_is_claimed_only_with_more_tokens_and_a_speedup_beyond_the_noise(speedups, head, pace):
    said = training_note(sweep((2.67, 2.13), (2.83, 2.33), speedups=speedups), -8.0)
    assert head in said and pace in said


def test_fewer_tokens_with_the_training_never_reproduce_the_ordering_even_when_faster():
    said = training_note(sweep((2.1, 2.1), (2.2, 2.6), speedups=([1.5, 1.6], [1.0, 1.1])), -8.0)
    assert "does not reproduce the paper's ordering" in said and "its speedup was above" in said


def test_a_gain_from_the_first_stage_is_not_credited_to_the_later_stages():
    """The measurement the fixed caption contradicted: later stages added 0.16 with the training, 0.20 without."""
    said = training_note(sweep((2.67, 2.13), (2.83, 2.33)), -8.0)
    assert "The gain came from the first stage (2.67 against 2.13 tokens a check with one stage a round), not from " \
           "the stages the gate added (0.16 tokens a check with the training, 0.20 without)." in said
    assert "also had more training: this is not the paper's comparison" in said


def test_a_gain_from_the_later_stages_is_credited_to_them():
    said = training_note(sweep((2.13, 2.13), (2.83, 2.33)), -8.0)
    assert "The gain came from the stages the gate added (0.70 tokens a check with the training, 0.20 without), " \
           "not from the first stage" in said


def test_a_gain_from_both_stages_names_both_and_a_loss_is_called_a_loss():
    assert "), and also from the stages the gate added (0.60" in training_note(sweep((2.6, 2.1), (3.2, 2.4)), -8.0)
    said = training_note(sweep((2.1, 2.1), (2.2, 2.6)), -8.0)
    assert "The loss came from the stages the gate added (0.10 tokens a check with the training, 0.50 without)" in said


def test_no_difference_is_said_to_be_none():
    said = training_note(sweep((2.5, 2.5), (3.0, 3.0)), -8.0)
    assert "Loop-aware training changed nothing here" in said and "came from" not in said


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(1, 9).map(lambda x: round(x, 2)), min_size=4, max_size=4))
def test_the_part_named_as_the_source_always_moved_the_way_the_sentence_says(tokens):
    (a1, p1, ag, pg) = tokens
    said = training_note(sweep((a1, p1), (ag, pg)), -8.0)
    gap, parts = ag - pg, {"the first stage": a1 - p1, "the stages the gate added": (ag - a1) - (pg - p1)}
    found = re.search(r"The (gain|loss) came from (the first stage|the stages the gate added)", said)
    if abs(gap) < 0.005:
        assert found is None and "changed nothing" in said
        return
    assert found.group(1) == ("gain" if gap > 0 else "loss")
    named = found.group(2)
    assert parts[named] * gap > 0                                   # it moved the way the whole difference did
    other = next(p for p in parts if p != named)
    assert parts[named] * gap >= parts[other] * gap                  # and at least as far as the other part


def planted_regimes():
    """Plain decoding: 10 ms a step, 9 of them the forward. One stage a round: 5 rounds of k = 4 committing 2
    each, a further position 1 ms, a stage 6 ms in one run and 1 ms in the other. At g = -4 the gate never
    opened; at g = -8 two stages a round commit 2.75; at g = -12 three stages commit 4.5."""
    plain = {"rounds": 10, "mean_round_ms": 10.0, "verify_ms": 90.0}
    one = {"drafter": "dloop", "threshold": None, "stages_per_round": 1.0, "acceptance_length": 2.0,
           "shapes": [(5, 1, 2)] * 5,
           "runs_costs": [{"rounds": 5, "verify_ms": 65.0, "draft_ms": 30.0, "overhead_ms": 5.0},
                          {"rounds": 5, "verify_ms": 65.0, "draft_ms": 5.0, "overhead_ms": 5.0}]}
    rows = [dict(one, threshold=-4.0),
            dict(one, threshold=-8.0, stages_per_round=2.0, acceptance_length=2.75,
                 shapes=[(9, 2, 3)] * 3 + [(9, 2, 2)]),
            dict(one, threshold=-12.0, stages_per_round=3.0, acceptance_length=4.5,
                 shapes=[(13, 3, 5), (13, 3, 4)] * 2)]
    return stage_in_regimes({"baseline_runs": [plain, plain], "one_stage": {"dloop": one}, "rows": rows},
                            LARGE_GPU, "this machine")


def test_a_later_stage_is_priced_run_by_run_here_and_once_on_the_large_target_profile():
    never, two, three = planted_regimes()
    assert never["here"] == never["there"] == "gate never opened" and never["tokens_added"] is None
    # g = -8: a stage costs 10 ms of a 10 ms token in one run (needs 1.0), 5 ms of 7.5 in the other (0.67); it adds
    # 0.75, so the runs disagree. On the large-target profile it costs 2 + 0.5 × 4 = 4 ms of a 7 ms token.
    assert two["tokens_added"] == 0.75 and two["here"] == "within this machine's noise"
    assert (two["here_needed"].low, two["here_needed"].high) == (pytest.approx(2 / 3), 1.0)
    assert two["there_needed"] == pytest.approx(4 / 7) and two["there"] == "pays"
    # g = -12: two extra stages add 1.25 tokens each and need 1.0 or 0.67: it pays in both runs
    assert three["tokens_added"] == 1.25 and three["here"] == "pays" and three["there"] == "pays"
    prices = [never, two, three]
    assert (pays_from(prices, "dloop", "here"), pays_from(prices, "dloop", "there")) == (-12.0, -8.0)
    assert regime_verdict(prices, "dloop", "DLoop", "this machine", "the large-target profile") == (
        "DLoop: on this machine it starts to pay at g = -12, where it adds 1.25 tokens and needs 0.83; priced on "
        "the large-target profile it starts to pay at g = -8, where it adds 0.75 tokens and needs 0.57.")
    assert [r["pays, priced, this machine"] for r in regime_rows(prices, "dloop")] == ["–", "noise", "pays"]
    assert [r["needs, priced, this machine"] for r in regime_rows(prices, "dloop")] == ["–", "0.67–1.00", "0.67–1.00"]


def test_a_stage_that_pays_nowhere_here_says_where_it_came_closest_and_where_the_runs_disagree():
    never, two, _ = planted_regimes()
    assert regime_verdict([never, two], "dloop", "DLoop", "this machine", "the large-target profile").startswith(
        "DLoop: on this machine whether a later stage pays is within this machine's noise at every swept g (its runs "
        "disagree); priced on the large-target profile it starts to pay at g = -8")
    dear = dict(two, threshold=-6.0, here="does not pay")
    said = regime_verdict([never, dear, two], "dloop", "DLoop", "this machine", "the large-target profile")
    assert said.startswith("DLoop: on this machine a later stage pays at none of the swept g (at g = -6 it adds "
                           "0.75 tokens and needs 0.83); at g = -8 its runs disagree, within this machine's noise; ")
    assert regime_verdict([never], "dloop", "DLoop", "here", "there") == (
        "DLoop: the gate never opened at the swept g, so no later stage was drafted to price.")


def test_a_need_whose_runs_reach_zero_is_shown_as_noise_never_as_negative_tokens():
    from specviz.lessons.protocol import spread
    _, two, _ = planted_regimes()
    assert regime_rows([dict(two, here_needed=spread([-0.8, 1.7]))], "dloop")[0]["needs, priced, this machine"] == "noise"
    assert regime_rows([dict(two, here_needed=spread([0.5, 0.5]))], "dloop")[0]["needs, priced, this machine"] == "0.50"


def counted(stages: dict) -> dict:
    """A sweep's rows with only what the stages answer reads: {drafter: {g: stages a round}}."""
    return {"rows": [{"drafter": d, "threshold": g, "stages_per_round": n} for d, by_g in stages.items()
                     for g, n in by_g.items()]}


def test_the_stages_answer_is_read_off_the_sweep_s_counts_on_each_side():
    # the rows come in the order the page sweeps them (ascending g); the answer reads them from the highest g down
    assert stages_answer(counted({"dloop": {-12.0: 2.5, -8.0: 1.83, -4.0: 1.0}}), str.upper) == (
        "**Answer, measured here: more.** DLOOP: 1.00 → 1.83 → 2.50 stages a round at g = -4, -8, -12 (the gate "
        "never opened at g = -4).")
    # the gate shut at every swept g (0% opening at g = -4 on four presets): a fixed "more" would contradict the table
    assert stages_answer(counted({"dloop": {-4.0: 1.0, -6.0: 1.0}})) == (
        "**Answer, measured here: the same.** dloop: 1.00 → 1.00 stages a round at g = -4, -6 (the gate never opened "
        "at g = -4, -6).")
    # another split of the rounds can draft fewer stages at a lower g: never called "more"
    assert stages_answer(counted({"dloop": {-8.0: 2.0, -12.0: 1.8}})).startswith(
        "**Answer, measured here: not always more.** dloop: 2.00 → 1.80 stages a round at g = -8, -12.")
    assert stages_answer(counted({"dloop": {-8.0: 1.5, -12.0: 2.0}, "dloop-plain": {-8.0: 1.0, -12.0: 1.0}})).startswith(
        "**Answer, measured here: it depends on the drafter.**")
    assert stages_answer(counted({"dloop": {-8.0: 2.0}})).startswith("**Answer, measured here: one g only.**")


@given(st.lists(st.tuples(st.integers(-20, -1), st.sampled_from([1.0, 1.25, 1.5, 2.0, 2.5, 3.0])),
                min_size=2, max_size=6, unique_by=lambda t: t[0]))
def test_the_stages_answer_states_the_direction_of_the_counts(swept):
    said = stages_answer(counted({"d": {float(g): n for g, n in swept}}))
    counts = [n for _, n in sorted(swept, reverse=True)]           # from the highest g down
    fell = any(b < a for a, b in zip(counts, counts[1:]))
    assert said.startswith("**Answer, measured here: not always more.**") == fell
    assert said.startswith("**Answer, measured here: more.**") == (not fell and counts[-1] > counts[0])
    assert said.startswith("**Answer, measured here: the same.**") == (not fell and counts[-1] == counts[0])
    assert ("the gate never opened" in said) == (1.0 in counts)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=4, max_size=4), st.lists(st.floats(1, 40), min_size=2, max_size=3),
       st.integers(2, 3))
def test_a_later_stage_is_said_to_pay_exactly_where_it_adds_more_than_it_needs(tokens, draft_ms, stages):
    """stage_in_regimes: on the large-target profile "pays" iff a stage adds more tokens than it needs; here, run by
    run, "pays" only where it adds more than every run's need, "does not pay" only where no run's need is below it,
    and the runs disagreeing is noise. Catches a verdict read off one run, or off the median alone."""
    plain = {"rounds": 10, "mean_round_ms": 10.0, "verify_ms": 90.0}
    one = {"drafter": "dloop", "threshold": None, "stages_per_round": 1.0, "acceptance_length": 2.0,
           "shapes": [(5, 1, 2)] * 5,
           "runs_costs": [{"rounds": 5, "verify_ms": 65.0, "draft_ms": d, "overhead_ms": 5.0} for d in draft_ms]}
    row = dict(one, threshold=-8.0, stages_per_round=float(stages), acceptance_length=sum(tokens) / len(tokens),
               shapes=[(4 * stages + 1, stages, t) for t in tokens])
    p = stage_in_regimes({"baseline_runs": [plain] * len(draft_ms), "one_stage": {"dloop": one}, "rows": [row]},
                         LARGE_GPU, "this machine")[0]
    added, need = p["tokens_added"], p["here_needed"]
    if abs(added - p["there_needed"]) > 1e-9:
        assert (p["there"] == "pays") == (added > p["there_needed"])
    if min(abs(added - need.low), abs(added - need.high)) > 1e-9:
        assert (p["here"] == "pays") == (added > need.high)
        assert (p["here"] == "does not pay") == (added < need.low)
        assert (p["here"] == "within this machine's noise") == (need.low < added < need.high)


VERDICTS = ["pays", "does not pay", "within this machine's noise", "gate never opened"]


@st.composite
def priced(draw):
    """stage_in_regimes rows for one drafter at distinct g, each verdict and need drawn freely."""
    gs = draw(st.lists(st.integers(-16, -1), min_size=1, max_size=5, unique=True))
    out = []
    for g in gs:
        here = draw(st.sampled_from(VERDICTS))
        if here == "gate never opened":
            out.append({"drafter": "d", "threshold": float(g), "tokens_added": None, "here_needed": None,
                        "here": here, "there_needed": None, "there": here})
            continue
        low = draw(st.floats(-2, 3))
        out.append({"drafter": "d", "threshold": float(g), "tokens_added": draw(st.floats(0, 3)),
                    "here_needed": spread([low, low + draw(st.floats(0, 2))]), "here": here,
                    "there_needed": draw(st.floats(0, 3)), "there": draw(st.sampled_from(VERDICTS[:2]))})
    return out


@settings(max_examples=300, deadline=None)
@given(priced())
def test_the_regime_verdict_names_the_highest_g_that_pays_and_no_other(prices):
    said = regime_verdict(prices, "d", "D", "this machine", "the large-target profile")
    opened = [p for p in prices if p["tokens_added"] is not None]
    if not opened:
        assert said == "D: the gate never opened at the swept g, so no later stage was drafted to price."
        return
    here, there = said.split("; priced on ")
    for part, regime in ((here, "here"), (there, "there")):
        paid = [p["threshold"] for p in opened if p[regime] == "pays"]
        if paid:
            assert f"starts to pay at g = {max(paid):g}," in part
        else:
            assert "starts to pay" not in part
            assert "pays at none of the swept g" in part or "within this machine's noise at every swept g" in part
    noisy = [p for p in opened if p["here"] == "within this machine's noise"]
    assert ("within this machine's noise at every swept g" in here) == (len(noisy) == len(opened))


@settings(max_examples=300, deadline=None)
@given(priced())
def test_a_need_is_shown_as_a_number_only_when_every_run_priced_it_above_zero(prices):
    rows = regime_rows(prices, "d")
    assert [r["g"] for r in rows] == [f"{p['threshold']:g}" for p in prices]
    for r, p in zip(rows, prices):
        shown = r["needs, priced, this machine"]
        if p["tokens_added"] is None:
            assert shown == "–" and r["pays, priced, this machine"] == "–"
        elif p["here_needed"].low <= 0:
            assert shown == "noise"                                  # never a negative number of tokens
        else:
            assert all(float(x.lstrip("<")) > 0 for x in shown.split("–"))   # "0.00" would read as a free stage
        assert r["pays, priced, this machine"] == {"pays": "pays", "does not pay": "no", "gate never opened": "–",
                                                   "within this machine's noise": "noise"}[p["here"]]


def test_the_stages_reason_says_what_this_sweep_showed_of_the_gate_s_rule_on_each_side():
    # catches a fixed "the loop continues at least as often" beside a sweep whose count fell at a lower g
    fell = stages_reason(counted({"dloop": {-8.0: 2.0, -12.0: 1.8}}))
    assert fell.startswith(GATE_RULE + " dloop: the count fell at a lower g here. The rule holds on the same context")
    rose = stages_reason(counted({"dloop": {-4.0: 1.0, -8.0: 1.83, -12.0: 2.5}}), str.upper)
    assert rose == (GATE_RULE + " DLOOP: so it went here: 1.00 stages a round at g = -4, 2.50 at g = -12. Whether "
                    "more stages pay depends on how much of the extra block survives.")
    assert "fell" not in rose


def test_the_stages_reason_tells_a_shut_gate_from_a_full_round_and_a_level_count():
    # catches one "the count stays the same" reason given for three different measurements
    shut = stages_reason(counted({"dloop": {-4.0: 1.0, -6.0: 1.0}}))
    assert "dloop: no stage cleared even g = -6 here, so each round drafted one stage." in shut
    full = stages_reason(counted({"dloop": {-4.0: 3.0, -8.0: 3.0}}), max_stages=3)
    assert "dloop: every round already drafted all S = 3 stages at g = -4, so a lower g had no stage left" in full
    level = stages_reason(counted({"dloop": {-4.0: 1.5, -8.0: 1.5}}), max_stages=3)
    assert "dloop: the count held at 1.50: no stage's confidence fell between the swept g." in level


def test_the_stages_reason_names_each_drafter_s_own_side_and_claims_nothing_without_a_sweep():
    # catches a reason read from one drafter and printed for both
    both = stages_reason(counted({"dloop": {-8.0: 1.5, -12.0: 2.0}, "dloop-plain": {-8.0: 1.0, -12.0: 1.0}}))
    assert "dloop: so it went here: 1.50 stages a round at g = -8, 2.00 at g = -12." in both
    assert "dloop-plain: no stage cleared even g = -12 here" in both
    assert stages_reason(None) == GATE_RULE + " Whether more stages pay depends on how much of the extra block survives."
    assert stages_reason(counted({"dloop": {-8.0: 2.0}})) == stages_reason(None)   # one g: nothing to explain


# Lesson 6's price of a later DLoop stage in two regimes (specviz.lessons.dloop.stage_in_regimes, regime_rows,
# regime_verdict), planted on the sides test_sweep.py's planted sweep does not reach: a stage that pays in neither
# regime, one that pays only on the large-target profile, one that pays only here.
#
# Each plant is a sweep as `threshold_sweep` returns it, with run costs like a real measurement's: plain decoding
# 10 ms a step (9 of them the forward), one stage a round in 5 rounds of k = 4 committing 2 tokens each, and at
# g = -8 two stages a round. A stage pays exactly where it adds more tokens than its cost is worth in one-stage
# tokens (the large-target profile: a step 10 ms, a further position 0.5 ms, a stage 2 ms, so one stage more
# costs 4 ms of a 7 ms token and needs 4/7 = 0.57 tokens).
PLAIN_RUN = {"rounds": 10, "mean_round_ms": 10.0, "verify_ms": 90.0}


def priced_sweep(verify_ms: float, draft_ms: list[float], tokens_at_g: list[int]) -> dict:
    """One-stage runs whose verify and draft ms are planted (a further position costs (verify − 45) / 20 ms, a
    stage draft / 5 ms, no bookkeeping beyond a step's), and g = -8 rounds of two stages committing
    `tokens_at_g`."""
    one = {"drafter": "dloop", "threshold": None, "stages_per_round": 1.0, "acceptance_length": 2.0,
           "shapes": [(5, 1, 2)] * 5,
           "runs_costs": [{"rounds": 5, "verify_ms": verify_ms, "draft_ms": d, "overhead_ms": 5.0} for d in draft_ms]}
    row = dict(one, threshold=-8.0, stages_per_round=2.0, acceptance_length=sum(tokens_at_g) / len(tokens_at_g),
               shapes=[(9, 2, t) for t in tokens_at_g])
    return {"baseline_runs": [PLAIN_RUN] * len(draft_ms), "one_stage": {"dloop": one}, "rows": [row]}


@pytest.mark.parametrize("planted, row, said", [
    # a position 1 ms, a stage 6 ms or 1 ms: a round of one stage costs 20 or 15 ms (a token 10 or 7.5 ms), a
    # second stage 10 or 5 ms more, so it needs 1.00 or 0.67 tokens; it adds 0.25: dear in both runs and there
    (priced_sweep(65.0, [30.0, 5.0], [2, 2, 2, 3]),
     {"a stage adds": "0.25", "needs, priced, this machine": "0.67–1.00", "pays, priced, this machine": "no",
      "needs, priced, large target": "0.57", "pays, priced, large target": "no"},
     "D: on this machine a later stage pays at none of the swept g (at g = -8 it adds 0.25 tokens and needs 0.83); "
     "priced on the large-target profile a later stage pays at none of the swept g (at g = -8 it adds 0.25 tokens "
     "and needs 0.57)."),
    # a stage 6 ms in both runs (needs 1.00); it adds 0.75: too little here, more than the 0.57 it needs there
    (priced_sweep(65.0, [30.0, 30.0], [3, 3, 3, 2]),
     {"a stage adds": "0.75", "needs, priced, this machine": "1.00", "pays, priced, this machine": "no",
      "needs, priced, large target": "0.57", "pays, priced, large target": "pays"},
     "D: on this machine a later stage pays at none of the swept g (at g = -8 it adds 0.75 tokens and needs 1.00); "
     "priced on the large-target profile it starts to pay at g = -8, where it adds 0.75 tokens and needs 0.57."),
    # a further position free and a stage 0.5 ms: one stage more costs 0.5 ms of a 5.25 ms token (needs 0.10);
    # it adds 0.25: it pays here in every run, and not there
    (priced_sweep(45.0, [2.5, 2.5], [2, 2, 2, 3]),
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


@given(st.lists(st.sampled_from([1.0, 1.5, 2.0, 2.5, 3.0]), min_size=2, max_size=4), st.sampled_from([None, 2, 3]))
def test_the_stages_reason_s_clause_agrees_with_the_counts_it_was_given(counts, max_stages):
    """For any sweep's stages a round (highest g first), stages_reason says "went here" only where they rose
    and never fell, "fell" only where one fell, a shut gate only at one stage everywhere, and a full round
    only at S. Catches a clause read off the first and last counts alone, or off the wrong end of the sweep."""
    gs = [-4.0 * (i + 1) for i in range(len(counts))]
    rows = [{"drafter": "dloop", "threshold": g, "stages_per_round": c} for g, c in zip(gs, counts)]
    said = stages_reason({"rows": rows}, str, max_stages)
    fell = any(b < a for a, b in zip(counts, counts[1:]))
    assert ("the count fell at a lower g here" in said) == fell
    assert ("so it went here" in said) == (not fell and counts[-1] > counts[0])
    assert ("no stage cleared" in said) == (max(counts) <= 1.0)
    full = not fell and counts[-1] == counts[0] and max(counts) > 1.0 and max_stages is not None and min(counts) >= max_stages
    assert ("already drafted all S" in said) == full


def test_lesson6_opens_where_a_second_stage_adds_tokens_with_the_shipped_drafters(models):
    """The lesson opened on a preset and g where every later stage added 0.00 tokens: looping could only
    cost there. At sweep.OPENING the loop-aware drafter's gate opens and its checks commit more tokens
    with three stages than with one (greedy, the same 32 tokens either way)."""
    o = OPENING
    one = Generation(models, o["prompt"], Settings.greedy("dloop", 32, k=o["k"], max_stages=1)).run()
    looped = Generation(models, o["prompt"], Settings.greedy("dloop", 32, k=o["k"], loop_threshold=o["g"],
                                                            max_stages=3)).run()
    assert looped.new_ids == one.new_ids
    stages = sum(len(r.drafter_info["stages"]) for r in looped.rounds) / len(looped.rounds)
    assert stages > 1.5
    assert len(looped.new_ids) / len(looped.rounds) > len(one.new_ids) / len(one.rounds) + 0.25
    assert o["g"] in o["sweep"]


def test_the_price_of_a_later_stage_reads_as_a_table_and_one_sentence_per_drafter():
    price = {"drafter": "dloop", "looped": 0.5, "extra_stages": 0.5, "token_ms": 14.0}
    shut = dict(price, threshold=-2.0, looped=0.0, extra_stages=0.0, stage_ms=None, tokens_added=None,
                tokens_needed=None, verdict="gate never opened")
    opened = dict(price, threshold=-4.0, stage_ms=6.0, stage_in_noise=False, tokens_added=0.6, tokens_needed=6 / 14,
                  verdict="pays")
    closed_row, opened_row = dloop.price_rows([shut, opened], {"dloop": "DLoop"}.get)
    assert closed_row["pays for itself"] == "gate never opened" and closed_row["it added"] == "–"
    assert opened_row == {"drafter": "DLoop", "g": "-4", "rounds that drafted again": "50%",
                          "a later stage costs": "6.0 ms", "it added": "0.60 tokens",
                          "worth": "8.4 ms (at 14.0 ms a token)", "pays for itself": "pays"}
    noisy = dict(opened, stage_ms=-20.8, stage_in_noise=True)      # a difference of two timings, inside their spread
    assert dloop.price_rows([noisy], {"dloop": "DLoop"}.get)[0]["a later stage costs"] == "within this machine's noise"
    assert dloop.price_verdict([shut, opened], "dloop", "DLoop") == (
        "DLoop: at g = -4 the stages it added paid for themselves; at g = -2 the gate never opened.")



PRICE_SAID = {"pays": "the stages it added paid for themselves",
            "does not pay": "the stages it added cost more than their tokens were worth",
            "within this machine's noise": "the difference from one stage a round is within this machine's noise",
            "gate never opened": "the gate never opened"}


@given(st.lists(st.tuples(st.sampled_from(["dloop", "dloop-plain"]), st.sampled_from(list(PRICE_SAID))),
                min_size=1, max_size=8))
def test_each_threshold_is_said_in_the_clause_of_its_own_verdict_and_nowhere_else(drafted):
    """dloop.price_verdict, whatever the sweep found: each of the drafter's thresholds appears once, in the
    clause of the verdict its prices carry; the other drafter's thresholds never appear. Catches a verdict
    attached to the wrong g, or read from the other drafter's rows."""
    prices = [{"drafter": d, "threshold": -float(i + 1), "verdict": v} for i, (d, v) in enumerate(drafted)]
    said = dloop.price_verdict(prices, "dloop", "DLoop")
    clauses = said.removeprefix("DLoop: ").removesuffix(".").split("; ")
    found = {}
    for clause in (c for c in clauses if c):
        gs, text = re.fullmatch(r"at g = (-[\d.]+(?:, -[\d.]+)*) (the .*)", clause).groups()
        for g in gs.split(", "):
            assert float(g) not in found
            found[float(g)] = text
    assert found == {p["threshold"]: PRICE_SAID[p["verdict"]] for p in prices if p["drafter"] == "dloop"}
