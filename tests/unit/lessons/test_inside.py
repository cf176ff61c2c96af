"""Lesson 9's computations: exact values on small cases, then the real models; its headings' terms are in the glossary."""
import re

import pytest
from hypothesis import given, strategies as st
import torch

from specviz.generator.sampling import SamplingSettings
from specviz.lessons.presets import PRESETS
from specviz.lessons import glossary, inside
from specviz.lessons.markup import md_token


def test_the_true_q_rebuilds_p_and_a_wrong_q_does_not():
    p, q = torch.tensor([0.7, 0.3], dtype=torch.float64), torch.tensor([0.5, 0.5], dtype=torch.float64)
    assert inside.emitted_distribution(p, q, q).tolist() == pytest.approx([0.7, 0.3], abs=1e-12)
    # drawn from (0.5, 0.5), verified as if from (0.25, 0.75): A is kept whenever drawn, B 40% of the time,
    # and the 30% rejected mass is redrawn from max(0, p - q_used) = (0.45, 0) -> all A
    assert inside.emitted_distribution(p, q, torch.tensor([0.25, 0.75], dtype=torch.float64)).tolist() == pytest.approx([0.8, 0.2])


def test_a_verifier_handed_q_before_temperature_emits_the_wrong_distribution():
    logits = torch.tensor([2.0, 1.0, 0.0, -1.0], dtype=torch.float64)
    p = torch.softmax(torch.tensor([1.5, 1.2, 0.1, -2.0], dtype=torch.float64) / 0.5, -1)
    true_q = torch.softmax(logits / 0.5, -1)
    assert inside.total_variation(inside.emitted_distribution(p, true_q, true_q), p) == pytest.approx(0, abs=1e-12)
    assert inside.total_variation(inside.emitted_distribution(p, true_q, torch.softmax(logits, -1)), p) > 0.01


def test_total_time_over_total_tokens_weights_rounds_by_their_output():
    assert inside.per_token([(14.0, 4), (14.0, 1)]) == {"total_over_total": 5.6, "mean_of_rounds": 8.75}
    assert inside.per_token([(10.0, 2), (10.0, 2)]) == {"total_over_total": 5.0, "mean_of_rounds": 5.0}


def test_overlapping_phases_count_once_on_the_critical_path():
    assert inside.elapsed([(0, 3), (2, 12), (12, 13)]) == {"sum_of_phases": 14, "critical_path": 13}
    assert inside.elapsed([(0, 3), (3, 13)]) == {"sum_of_phases": 13, "critical_path": 13}
    assert inside.elapsed([(0, 10), (2, 5)]) == {"sum_of_phases": 13, "critical_path": 10}


def test_a_later_strong_token_beats_an_early_doubtful_one_and_overconfidence_costs():
    r = inside.schedule_example()
    assert r["calibrated"]["lengths"] == [3, 0]
    kept = [(req, pos) for req, pos, _, ok in r["calibrated"]["order"] if ok]
    assert kept == [(0, 1), (0, 2), (0, 3)]                      # the strong request's third token is in
    assert r["survival"]["strong"][2] > r["survival"]["doubtful"][0]
    assert r["overconfident"]["believed_theta"] > r["calibrated"]["real_theta"] > r["overconfident"]["real_theta"]


def test_first_difference():
    assert inside.first_difference([1, 2, 3], [1, 2, 4]) == 2
    assert inside.first_difference([1, 2], [1, 2]) is None
    assert inside.first_difference([1, 2], [1, 2, 3]) == 2


def test_every_term_in_the_lessons_headings_is_in_the_glossary():
    for heading, terms in inside.SECTIONS:
        for term in terms:
            assert term.lower() in heading.lower(), (heading, term)
            assert glossary.lookup(term), f"{term!r} (in “{heading}”) has no glossary entry"


def test_the_block_drafter_reads_three_target_layers_and_an_anchor_plus_masks(models):
    v = inside.drafter_view(models, PRESETS[0], "dspark", k=4)
    assert v["target_layers"] == [1, 4, 6] and v["feature_in"] == 3 * v["target_width"]
    assert v["block_inputs"] == [v["anchor"], "[mask]", "[mask]", "[mask]"]
    assert v["block_positions"] == list(range(v["context_positions"], v["context_positions"] + 4))
    assert v["dflash_block_size"] == 5 and v["dflash_back"] == 4 and len(v["proposals"]) == 4
    for row, earlier in zip(v["attention"], v["earlier_context_share"]):   # each slot's weights sum to 1
        assert sum(row) + earlier == pytest.approx(1.0, abs=1e-5)


def test_on_the_real_models_only_the_true_q_keeps_the_output_distribution(models):
    r = inside.wrong_q(models, PRESETS[0], SamplingSettings(temperature=0.6, top_k=10))
    assert r["cases"]["true"]["distance"] == pytest.approx(0, abs=1e-9)
    assert r["cases"]["raw"]["distance"] > 1e-3 and r["cases"]["marginal"]["distance"] > 1e-3


def test_dloop_stages_take_the_previous_stages_last_proposal_as_anchor(models):
    r = inside.dloop_round(models, PRESETS[0], k=3, threshold=-30.0, stages=3)
    stages = r["stages"]
    assert len(stages) == 3 and [s["continue"] for s in stages] == [True, True, False]
    for before, after in zip(stages, stages[1:]):
        assert after["anchor"] == before["proposals"][-1]


# --- narration: what lesson 9's live numbers show --------------------------------------------

def test_the_attention_note_says_the_slots_read_the_context_when_the_block_gets_little():
    assert inside.block_attention_note([0.33, 0.0, 0.0, 0.0]) == (
        "Measured: the anchor's slot 0 puts 0.33 of its attention on the block, slots 1, 2 and 3 almost none "
        "(below 0.005). Every slot may see every slot, but in this round every slot reads mostly the target's "
        "context features.")


def test_the_attention_note_names_the_slots_that_read_the_block():
    assert inside.block_attention_note([0.2, 0.8, 0.01]) == (
        "Measured: the anchor's slot 0 puts 0.20 of its attention on the block, slot 1 0.80, slot 2 almost none "
        "(at most 0.01). In this round slot 1 reads mostly the block, slots 0 (the anchor's) and 2 mostly the "
        "target's context features.")
    assert inside.block_attention_note([0.01, 0.02]) == (
        "Measured: slots 0 (the anchor's) and 1 put almost none of their attention on the block (at most 0.02). "
        "Every slot may see every slot, but in this round every slot reads mostly the target's context features.")
    assert inside.block_attention_note([0.9, 0.6]).endswith("In this round every slot reads mostly the block itself.")


@given(st.lists(st.floats(0, 1), min_size=1, max_size=9))
def test_the_attention_note_agrees_with_the_shares_it_was_given(shares):
    note = inside.block_attention_note(shares)
    if all(x < 0.5 for x in shares):
        assert "every slot reads mostly the target's context" in note and "mostly the block" not in note
    elif all(x >= 0.5 for x in shares):
        assert note.endswith("every slot reads mostly the block itself.") and "almost none" not in note
    else:
        assert "mostly the block," in note and "mostly the target's context features." in note
    assert ("almost none" in note) == any(x < 0.05 for x in shares)


def test_the_gate_gives_its_reason_and_a_confident_last_stage_stops_at_the_limit():
    assert inside.gate_reason(3, -2.97, -8.0, 3) == (
        "check now: Σ log q = −2.97 ≥ g = −8 would open the gate, but S = 3 stages is the limit")
    assert inside.gate_reason(2, -2.97, -8.0, 3) == "draft another stage: Σ log q = −2.97 ≥ g = −8"
    assert inside.gate_reason(1, -8.5, -8.0, 3) == "check now: Σ log q = −8.50 < g = −8"
    assert inside.gate_reason(1, -8.0, -8.0, 1) == (
        "check now: Σ log q = −8.00 ≥ g = −8 would open the gate, but S = 1 stages is the limit")


@given(st.integers(1, 5), st.integers(1, 5), st.floats(-20, 0), st.floats(-20, 0))
def test_the_gate_reason_agrees_with_the_drafters_rule(stage, limit, lp, g):
    reason = inside.gate_reason(stage, lp, g, limit)
    assert reason.startswith("draft another stage") == (stage < limit and lp >= g)   # the rule in drafters/block.py
    assert ("≥ g" in reason) == (lp >= g) and ("< g" in reason) == (lp < g)
    assert ("is the limit" in reason) == (stage >= limit)


def test_the_wrong_q_note_counts_a_distance_only_beyond_rounding():
    cases = {"true": {"distance": 1e-12}, "raw": {"distance": 0.1234}, "marginal": {"distance": 0.05}}
    assert inside.wrong_q_note("<a>", cases) == (
        "Measured after the first proposal '&lt;a&gt;': with the true q the emitted distribution is p exactly (distance "
        "0.000000). Handed the q taken before temperature and top-k, it lies 0.1234 from p; handed the backbone's "
        "marginal (no Markov head), it lies 0.0500 from p.")
    lucky = inside.wrong_q_note("a", dict(cases, marginal={"distance": 0.0}))
    assert "it is p here too (distance 0.000000)" in lucky and "luck, not a guarantee" in lucky
    off = inside.wrong_q_note("a", dict(cases, true={"distance": 0.01}))
    assert "lies 0.010000 from p, which is more than rounding" in off


@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1))
def test_the_wrong_q_note_calls_a_q_p_only_where_its_distance_is_rounding(true, raw, marginal):
    said = inside.wrong_q_note("a", {"true": {"distance": true}, "raw": {"distance": raw},
                                     "marginal": {"distance": marginal}})
    assert ("is p exactly" in said) == (true <= inside.EXACT)
    assert ("more than rounding" in said) == (true > inside.EXACT)
    for name, d in (("raw", raw), ("marginal", marginal)):
        named = said.split(f"anded {inside.WRONG_Q[name]}, it ")[1]
        assert named.startswith("lies") == (d > inside.EXACT)       # a distance is never stated for a lucky q
        assert named.startswith("is p here too") == (d <= inside.EXACT)


def test_the_wrong_q_answer_is_no_only_where_the_backbone_q_moved_the_output_beyond_rounding():
    # catches a fixed "**Answer: no.**" printed whatever the computed distance was
    assert inside.wrong_q_answer(0.0312) == "**Answer, measured here: no.**"
    assert inside.wrong_q_answer(2e-9) == "**Answer, measured here: no.**"                     # just past EXACT
    assert inside.wrong_q_answer(1e-9) == "**Answer, measured here: yes, at this history.**"   # EXACT itself: rounding
    assert inside.wrong_q_answer(0.0) == "**Answer, measured here: yes, at this history.**"
    assert inside.wrong_q_answer(None) == "**Answer, from the source: no.**"   # nothing computed: never "measured"


def test_the_speculative_note_counts_equal_prompts_on_each_side():
    # catches an "equals ... on N of M" sentence whose reading does not change when no prompt is equal
    all_equal = inside.speculative_note([True, True, True], "*C*")
    assert all_equal.startswith("Speculative greedy decoding in float32 equals plain float32 greedy decoding on "
                                "**3 of 3** prompts. That is this app's measurement on these prompts, not a guarantee: "
                                "the check is one forward over k + 1 tokens")
    some = inside.speculative_note([True, False, True, False], "*C*")
    assert some.startswith("Speculative greedy decoding in float32 equals plain float32 greedy decoding on **2 of 4** "
                           "prompts and parts from it on 2: the check is one forward")
    assert "not a guarantee" not in some
    none = inside.speculative_note([False, False], "*C*")
    assert none.startswith("Speculative greedy decoding in float32 parts from plain float32 greedy decoding on "
                           "**every one of the 2** prompts (equal on 0 of 2)")
    assert "equals" not in none
    assert all("*C* notes that different computation graphs" in s for s in (all_equal, some, none))


def test_the_precision_search_is_counted_from_its_rows_and_names_no_flip_it_did_not_find():
    rows = [{"first_difference": None}, {"first_difference": 3}, {"first_difference": None}]
    assert inside.precision_note(rows, 8) == (
        "**Measured here, now:** greedy float32 and bfloat16 outputs differ on **1 of 3** prompts (8 new tokens each).")
    none = inside.precision_note([{"first_difference": None}] * 5, 12)
    assert "differ on **0 of 5** prompts (12 new tokens each)." in none
    assert none.endswith("No prompt here shows a flipped greedy token; the claim stands as the source states it, "
                         "without a live case on these models.")


def test_where_two_precisions_part_the_gap_is_stated_without_a_judgement_and_tokens_stay_literal():
    row = {"prompt": "He said, *he* said,", "first_difference": 0, "float32_token": "`", "bfloat16_token": "**",
           "gap": 1.25}
    # a fixed "only" beside a gap of 1.25 judged a number the page had not compared with anything
    assert inside.parted_note(row) == (
        r"'He said, \*he\* said,' parts at new token **1**: float32 takes '\`', bfloat16 '\*\*'. "
        "The float32 logits of the two tokens chosen there differ by **1.250**.")
    assert inside.parted_note(dict(row, gap=None)).endswith(r"bfloat16 '\*\*'.")


prompt_rows = st.lists(st.fixed_dictionaries({"first_difference": st.none() | st.integers(0, 40)}), min_size=1,
                       max_size=12)


@given(prompt_rows, st.integers(1, 64))
def test_the_precision_note_counts_exactly_the_prompts_that_parted(rows, new_tokens):
    """Catches a count of truthy first differences (a flip at the first new token, index 0, would go uncounted
    and the note would say "no prompt here shows a flipped greedy token" beside a flip), and a "stands without a
    live case" said beside a count above zero."""
    note = inside.precision_note(rows, new_tokens)
    parted = sum(r["first_difference"] is not None for r in rows)
    assert f"differ on **{parted} of {len(rows)}** prompts ({new_tokens} new tokens each)." in note
    assert ("No prompt here shows a flipped greedy token" in note) == (parted == 0)
    assert ("without a live case" in note) == (parted == 0)


def test_a_flip_at_the_first_new_token_is_counted():
    """Planted: the one prompt parts at index 0. Catches `if r["first_difference"]`, which reads 0 as no flip."""
    note = inside.precision_note([{"first_difference": 0}, {"first_difference": None}], 4)
    assert "differ on **1 of 2** prompts" in note and "No prompt here" not in note


@given(st.integers(0, 40), st.none() | st.floats(0, 50, allow_nan=False), st.text(max_size=6), st.text(max_size=6))
def test_the_parted_note_states_the_token_and_the_gap_it_was_given_and_judges_neither(at, gap, f32, bf16):
    """Where the prompt parted is stated 1-based (new token at+1), the gap to three decimals exactly when one was
    measured, and no word sizes the gap. Catches a 0-based position (the first new token called token 0), a gap
    sentence written with no gap measured, and a fixed judgement ("only", "small", "large") beside any gap."""
    note = inside.parted_note({"prompt": "p", "first_difference": at, "float32_token": f32, "bfloat16_token": bf16,
                               "gap": gap})
    assert note.startswith(f"'p' parts at new token **{at + 1}**: float32 takes {md_token(f32)}, "
                           f"bfloat16 {md_token(bf16)}.")
    assert ("differ by" in note) == (gap is not None)
    if gap is not None:
        assert note.endswith(f"differ by **{gap:.3f}**.")
    tail = note.split(f"bfloat16 {md_token(bf16)}.", 1)[1]   # the sentence after the tokens
    assert not re.search(r"\b(only|just|small|large|tiny|huge|big|narrow|wide)\b", tail)


@given(st.lists(st.booleans(), min_size=1, max_size=12))
def test_the_speculative_note_counts_the_prompts_it_was_given_and_claims_no_guarantee(same):
    """For any rows' speculative-equals-plain flags: the count stated is theirs, "not a guarantee" only where
    every prompt was equal, "parts" wherever one was not. Catches a count taken from a fixed list, and an
    equal-everywhere reading where one prompt parted."""
    said = inside.speculative_note(same, "*Checks*")
    n, equal = len(same), sum(same)
    assert (f"**{equal} of {n}**" in said) == (0 < equal)
    assert ("not a guarantee" in said) == (equal == n)
    assert ("parts from" in said) == (equal < n)


@given(st.one_of(st.none(), st.floats(0.0, 1.0)))
def test_the_wrong_q_answer_says_no_exactly_where_the_distance_left_float_rounding(distance):
    """Catches a fixed "no" beside a distance of 0, and a "measured here" where nothing was computed."""
    said = inside.wrong_q_answer(distance)
    assert ("from the source" in said) == (distance is None)
    assert ("no." in said) == (distance is None or distance > inside.EXACT)
