"""Token HTML: escaping, the drafted block per phase, histories, n_matches, cache strip, race lane."""
import re

import pytest
from hypothesis import given, strategies as st

from specviz.generator.trace import Round
from specviz.viz import cache, histories, tokens
from specviz.viz.race import lane_html


def greedy_round(**changes) -> Round:
    """Proposals ' a', '<b>', ' c'; the target agrees with the first two, prefers ' d' to ' c'."""
    fields = dict(
        index=0, proposed=[10, 11, 12], proposed_tokens=[" a", "<b>", " c"], q=[0.5, 0.4, 0.3],
        q_top=[[[10, " a", 0.5]], [[11, "<b>", 0.4]], [[12, " c", 0.3]]],
        p_top=[[[10, " a", 0.6]], [[11, "<b>", 0.7]], [[13, " d", 0.55], [12, " c", 0.2]], [[14, ".", 0.9]]],
        p_proposed=[0.6, 0.7, 0.2], target_choice=[10, 11, 13, 14],
        decisions=[{"accepted": True}, {"accepted": True}, {"accepted": False}],
        greedy={"mismatch": [0, 0, 1], "cumsum": [0, 0, 1], "n_matches": 2, "stop_rule_applied": False},
        accepted=2, emitted=[{"id": 10, "text": " a", "kind": "accepted"}, {"id": 11, "text": "<b>", "kind": "accepted"},
                             {"id": 13, "text": " d", "kind": "correction"}],
        processed_before=2, processed_after=5, committed_before=3, committed_after=6,
        draft_ms=1.0, verify_ms=5.0, overhead_ms=0.5, total_ms=6.5)
    fields.update(changes)
    return Round(**fields)


def test_every_token_string_is_escaped():
    assert tokens.esc('<script>alert("x")</script>') == "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"
    assert "<b>" not in tokens.block_html(greedy_round(), "commit")
    assert "&lt;b&gt;" in tokens.committed_html("<i>prompt</i>", [greedy_round()], 1, "commit")
    assert "<i>" not in tokens.committed_html("<i>prompt</i>", [greedy_round()], 1, "commit")


def test_spaces_and_newlines_stay_visible_in_chips():
    assert tokens.esc("\n") == "↵" and tokens.esc("") == "∅"
    assert tokens.esc(" a") == " a" and tokens.esc("of course") == "of course"   # words read as words
    # a lone-space token is a full-colour sign, not a faint dot that vanishes on a projector
    assert tokens.esc(" ") == "␣" and tokens.esc("  ") == "␣␣"


def test_draft_phase_shows_proposals_without_verdicts():
    html = tokens.block_html(greedy_round(), "draft")
    assert html.count("sv-proposal") == 3 and "✓" not in html and "✗" not in html


def test_verify_phase_marks_the_accepted_prefix_and_the_first_rejection():
    html = tokens.block_html(greedy_round(), "verify")
    assert html.count("✓") == 2 and html.count("✗") == 1 and "correction" not in html


def test_commit_phase_adds_the_correction():
    html = tokens.block_html(greedy_round(), "commit")
    assert "sv-correction" in html and "d" in html


def test_after_a_rejection_later_proposals_are_never_used():
    r = greedy_round(accepted=0, emitted=[{"id": 13, "text": " z", "kind": "correction"}])
    assert tokens.block_html(r, "verify").count("never used") == 2


def test_a_stop_rule_drop_is_not_shown_as_a_rejection():
    r = greedy_round(accepted=2, greedy={"mismatch": [0, 0, 0], "cumsum": [0, 0, 0], "n_matches": 2,
                                         "stop_rule_applied": True})
    html = tokens.block_html(r, "verify")
    assert "stop rule" in html and "✗" not in html


def test_the_stop_rule_token_is_labelled_as_the_targets_own_not_a_correction():
    # the block hit a stop and matched whole: the target supplies the last proposal's token itself
    r = greedy_round(accepted=2, target_choice=[10, 11, 12, 14],
                     greedy={"mismatch": [0, 0, 0], "cumsum": [0, 0, 0], "n_matches": 2, "stop_rule_applied": True},
                     emitted=[{"id": 10, "text": " a", "kind": "accepted"}, {"id": 11, "text": "<b>", "kind": "accepted"},
                              {"id": 12, "text": " c", "kind": "stop"}])
    html = tokens.block_html(r, "commit")
    assert "sv-stop" in html and "equal to the proposal" in html
    assert "sv-correction" not in html and "correction" not in html
    assert "sv-gen-stop" in tokens.committed_html("P", [r], 1, "commit")
    assert tokens.summary(r) == ("kept 2 of 3 proposals + 1 token the target supplies at the stop rule = 3 tokens "
                                 "from one target pass")
    assert tokens.log_rows([r])[0]["last"] == "stop"


def test_committed_text_shows_a_rounds_tokens_only_at_commit():
    r = greedy_round()
    assert "sv-gen-correction" not in tokens.committed_html("P", [r], 1, "verify")
    assert "sv-gen-correction" in tokens.committed_html("P", [r], 1, "commit")


def test_summary_and_log_count_what_was_emitted():
    r = greedy_round()
    assert tokens.summary(r) == "kept 2 of 3 proposals + 1 correction = 3 tokens from one target pass"
    assert tokens.log_rows([r])[0]["emitted"] == "' a&lt;b&gt; d'"   # a table's cell renders markdown: shown as itself


def test_the_round_log_shows_token_text_as_itself():
    """Planted bug it catches: emitted text put raw into a table cell, which renders markdown
    (`__init__` turns bold)."""
    r = greedy_round()
    r.emitted[0]["text"] = "def __init__"
    assert tokens.log_rows([r])[0]["emitted"].startswith(r"'def \_\_init\_\_")


def test_phases_are_validated():
    with pytest.raises(ValueError):
        tokens.block_html(greedy_round(), "accept")


def test_histories_hide_the_target_before_verification():
    html = histories.histories_html(greedy_round(), "draft", "greedy")
    assert "not computed yet" in html and html.count("<tr>") == 5   # header + H, H a, H a b, H a b c


def test_histories_show_target_choices_and_the_unused_last_row():
    html = histories.histories_html(greedy_round(), "verify", "greedy")
    assert "≠" in html and html.count("✓ keep") == 2 and "✗ reject" in html


def test_sampling_verdict_shows_the_uniform_and_the_ratio():
    r = greedy_round(greedy=None, accepted=0, decisions=[{"p": 0.2, "q": 0.4, "ratio": 0.5, "u": 0.7,
                                                         "accepted": False}])
    html = histories.histories_html(r, "verify", "sampling")
    assert "u = 0.700" in html and "min(1, 0.200/0.400) = 0.500" in html


def test_n_matches_written_out_with_the_rounds_values():
    html = histories.n_matches_html(greedy_round())
    assert "n_matches = sum(cumsum &lt; 1) = 2" in html and "3 tokens committed" in html
    assert histories.n_matches_html(greedy_round(greedy=None)) == ""


def test_cache_strip_keeps_the_newest_committed_token_pending():
    r = greedy_round()
    states = [s for _, s in cache.cells(["<s>", "x", "y"], r, "commit")]
    assert states == ["processed"] * 5 + ["pending", "discarded"]
    assert [s for _, s in cache.cells(["<s>", "x", "y"], r, "draft")] == ["processed", "processed", "pending"] + ["drafted"] * 3


def test_the_check_processes_the_newest_committed_token_and_keeps_it():
    """Catches the verify phase drawing the newest committed token "in the cache speculatively": it is committed
    text, processed in the check and kept; only the proposals are speculative."""
    r = greedy_round()
    states = [s for _, s in cache.cells(["<s>", "x", "y"], r, "verify")]
    assert states == ["processed"] * 3 + ["speculative"] * len(r.proposed_tokens)
    assert "processed 3 · committed 3 · 3 in the cache speculatively" in cache.strip_html(["<s>", "x", "y"], r, "verify")


def test_the_greedy_bonus_is_the_target_s_argmax_not_a_draw():
    """Catches "bonus drawn here" under the greedy verifier, whose bonus is the target's argmax; the sampling
    verifiers do draw theirs."""
    r = greedy_round(accepted=3, decisions=[{"accepted": True}] * 3, target_choice=[10, 11, 12, 14],
                     emitted=[{"id": i, "text": t, "kind": "accepted"} for i, t in ((10, " a"), (11, "<b>"), (12, " c"))]
                     + [{"id": 14, "text": ".", "kind": "bonus"}])
    greedy = histories.histories_html(r, "verify", "greedy")
    assert "bonus: the target's argmax here" in greedy and "drawn" not in greedy
    r = greedy_round(accepted=3, emitted=r.emitted, greedy=None,
                     decisions=[{"p": 0.6, "q": 0.5, "ratio": 1.0, "u": 0.1, "accepted": True}] * 3)
    assert "bonus drawn here" in histories.histories_html(r, "verify", "sampling")


def test_cache_strip_counts_and_elides_old_positions():
    html = cache.strip_html(["t"] * 3, greedy_round(), "commit", window=4)
    assert "processed 5 · committed 6" in html and "… 3 earlier" in html


def test_race_lane_escapes_and_reports_speed():
    html = lane_html("speculative", [("<x>", "accepted")], 3.25, False, plain=False)
    assert "&lt;x&gt;" in html and "3.2 ms/token" in html and "finished" not in html


def test_dloop_stages_show_the_gate_and_dspark_the_survival():
    from specviz.viz import stages
    info = {"threshold": -2.0, "max_stages": 2, "confidence": [0.9, 0.5], "survival": [0.9, 0.45],
            "stages": [{"start": 0, "end": 1, "logprob_sum": -0.2, "continue": True},
                       {"start": 1, "end": 2, "logprob_sum": -0.4, "continue": False}]}
    html = stages.stages_html(info, ["<a>", "b"])
    assert "&lt;a&gt;" in html and "provisional" in html
    # stage 2 of S = 2: its sum clears g, yet the limit stops the loop, and the row says both
    assert ("check now: Σ log q = −0.40 ≥ g = −2 would open the gate, but S = 2 stages is the limit; "
            "the target checks all 2 proposals") in html
    assert "0.45" in stages.survival_html(info, ["<a>", "b"])
    assert stages.stages_html({"threshold": None, "stages": [{}]}, []) == ""


def test_a_round_cut_by_the_length_limit_shows_only_the_proposals_it_had():
    from specviz.viz import stages
    # the drafter scored four proposals and its gate stayed shut (−9.0 < g = −8); the length limit left
    # the round one
    info = {"confidence": [0.9, 0.8, 0.7, 0.6], "survival": [0.9, 0.72, 0.5, 0.3], "threshold": -8.0,
            "max_stages": 2, "stages": [{"start": 0, "end": 4, "logprob_sum": -9.0, "continue": False}]}
    html = stages.survival_html(info, [" found"])
    assert "0.90" in html and "0.80" not in html and "0.72" not in html and "0.30" not in html
    assert "check now: Σ log q = −9.00 &lt; g = −8; the target checks its one proposal" in stages.stages_html(
        info, [" found"])


def test_the_gate_row_states_the_comparison_its_numbers_make_not_the_records_flag():
    """A record whose flag says "stopped" while its numbers open the gate (Σ log q = −1.0 ≥ g = −8 at
    stage 1 of 2; a replayed or edited trace can carry one): the row reads the numbers. Catches a row
    that writes "<" from the flag, which printed the false "−1.00 < g = −8.0"."""
    from specviz.viz import stages
    info = {"threshold": -8.0, "max_stages": 2,
            "stages": [{"start": 0, "end": 4, "logprob_sum": -1.0, "continue": False}]}
    html = stages.stages_html(info, [" a", " b", " c", " d"])
    assert "draft another stage: Σ log q = −1.00 ≥ g = −8" in html
    assert "&lt; g" not in html   # −1.00 is not below −8


@given(st.lists(st.tuples(st.floats(-30.0, 0.0), st.booleans()), min_size=1, max_size=5),
       st.floats(-20.0, 0.0), st.integers(1, 5))
def test_every_gate_row_states_the_comparison_its_numbers_make(sums_and_flags, g, limit):
    """Whatever the flags say, each row's sign is the true order of Σ log q and g (at the two decimals
    shown, the sign compares the unrounded numbers), and "draft another stage" appears exactly when the
    drafter's rule (drafters/block.py) would run another: Σ log q ≥ g and fewer than S stages ran."""
    from specviz.viz import stages
    info = {"threshold": g, "max_stages": limit,
            "stages": [{"start": i, "end": i + 1, "logprob_sum": lp, "continue": flag}
                       for i, (lp, flag) in enumerate(sums_and_flags)]}
    html = stages.stages_html(info, [f" t{i}" for i in range(len(sums_and_flags))])
    rows = html.split("<tr>")[2:]
    assert len(rows) == len(sums_and_flags)
    for i, (row, (lp, _)) in enumerate(zip(rows, sums_and_flags), 1):
        assert ("≥ g" in row) == (lp >= g) and ("&lt; g" in row) == (lp < g)
        assert ("draft another stage" in row) == (lp >= g and i < limit)
        assert ("S = " in row) == (i >= limit)


def test_a_target_draw_outside_the_top_list_is_named_by_the_token_the_round_committed():
    r = greedy_round(decisions=[{"accepted": True, "target_draw": 10}, {"accepted": True, "target_draw": 11},
                               {"accepted": False, "target_draw": 1101}],
                     emitted=[{"id": 10, "text": " a", "kind": "accepted"}, {"id": 11, "text": "<b>", "kind": "accepted"},
                              {"id": 1101, "text": " <found>", "kind": "correction"}])
    html = histories.histories_html(r, "verify", "match")
    assert "target draws  &lt;found&gt;" in html and "#1101" not in html and "<found>" not in html


def test_the_rounds_outcome_is_one_sentence():
    r = greedy_round()
    assert tokens.verdict(r, 3, committed=False) == "You predicted 3; the target kept **2** of 3 proposals."
    assert tokens.verdict(r, None, committed=True) == (
        "The target kept **2** of 3 proposals + 1 correction = 3 tokens from one target pass.")
    assert tokens.verdict(greedy_round(proposed=[], proposed_tokens=[], accepted=0), 0, committed=False) == ""


@given(st.integers(1, 8).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
       st.sampled_from(["correction", "bonus", "stop"]), st.one_of(st.none(), st.integers(0, 8)))
def test_every_count_the_round_sentence_states_is_the_rounds_own(n_and_kept, last, guess):
    """Whatever the round kept and however it ended, the sentence names those counts and that ending, and
    adds up: kept + 1 = the tokens emitted. Catches counts or an ending written from anything but the record."""
    from types import SimpleNamespace
    n, kept = n_and_kept
    r = SimpleNamespace(proposed=list(range(n)), accepted=kept,
                        emitted=[{"kind": "accepted"}] * kept + [{"kind": last}])
    said = tokens.summary(r)
    ending = {"correction": "1 correction", "bonus": "1 bonus", "stop": "1 token the target supplies at the stop rule"}
    tokens_ = f"{kept + 1} token{'s' if kept else ''}"
    assert said == f"kept {kept} of {n} proposals + {ending[last]} = {tokens_} from one target pass"
    opening = f"You predicted {guess}; the target" if guess is not None else "The target"
    assert tokens.verdict(r, guess, committed=False) == f"{opening} kept **{kept}** of {n} proposals."
    assert tokens.verdict(r, guess, committed=True).endswith(
        f" kept **{kept}** of {n} proposals + {ending[last]} = {tokens_} from one target pass.")


def test_a_sampling_row_states_the_order_of_u_and_the_ratio():
    """Catches a row that writes "vs" (no order) or an order from the round's flags: u = 0.700 is not below
    min(1, 0.200/0.400) = 0.500, so the row says ≥ beside its rejection."""
    r = greedy_round(greedy=None, accepted=0, decisions=[{"p": 0.2, "q": 0.4, "ratio": 0.5, "u": 0.7,
                                                         "accepted": False}])
    assert "u = 0.700 ≥ min(1, p/q) = min(1, 0.200/0.400) = 0.500 <span class=\"sv-mark no\">✗ reject" in (
        histories.histories_html(r, "verify", "sampling"))


def test_a_greedy_row_compares_the_ids_it_names_not_the_rounds_mismatch_flag():
    """A planted mismatch flag that says row 3 matched while the target's argmax ( d) is not the proposal ( c):
    the row still says ≠. Catches an "=" written from the flag."""
    r = greedy_round(greedy={"mismatch": [0, 0, 0], "cumsum": [0, 0, 0], "n_matches": 2, "stop_rule_applied": False})
    html = histories.histories_html(r, "verify", "greedy")
    assert "target's argmax is  d ≠ proposal" in html and "target's argmax is  a = proposal" in html


@given(st.lists(st.tuples(st.floats(0.0, 0.999), st.floats(0.001, 1.0), st.floats(0.001, 1.0)), min_size=1,
                max_size=5))
def test_every_sampling_row_s_sign_and_mark_agree_with_u_and_the_ratio(draws):
    """Rounds verified by the rule itself (u < min(1, p/q) accepts, the first failure rejects): each used
    row's sign is the true order of u and the ratio, and its mark agrees with it."""
    decisions, accepted = [], None
    for u, p, q in draws:
        ratio = min(1.0, p / q)
        decisions.append({"p": p, "q": q, "ratio": ratio, "u": u, "accepted": u < ratio})
        if accepted is None and not u < ratio:
            accepted = len(decisions) - 1
    accepted = len(draws) if accepted is None else accepted
    n = len(draws)
    r = greedy_round(greedy=None, accepted=accepted, decisions=decisions, proposed=list(range(10, 10 + n)),
                     proposed_tokens=[f" t{i}" for i in range(n)], q=[0.5] * n, q_top=[[[10, " a", 0.5]]] * n,
                     p_top=[[[10, " a", 0.5]]] * (n + 1), p_proposed=[0.5] * n)
    rows = histories.histories_html(r, "verify", "sampling").split("<tr>")[2:]
    for i, (row, d) in enumerate(zip(rows, decisions)):
        if i > accepted:
            assert "unused" in row and "u = " not in row
            continue
        below = d["u"] < d["ratio"]
        assert (f"u = {d['u']:.3f} &lt; min" in row) == below and (f"u = {d['u']:.3f} ≥ min" in row) == (not below)
        assert ("✓ keep" in row) == below == (i < accepted)


@given(st.lists(st.tuples(st.integers(10, 13), st.integers(10, 13)), min_size=1, max_size=5), st.booleans())
def test_every_greedy_row_s_sign_and_mark_agree_with_the_ids_it_compares(pairs, stop):
    """Rounds verified greedily (keep while the target's argmax is the proposal, the first mismatch rejects; a
    block that matched whole at a stop gives its last proposal's token to the target): each used row says "="
    exactly where the two ids are equal, keeps exactly before the first mismatch or the stop, and every row after
    it is unused. The round's mismatch flags are planted all 0 whatever the ids. Catches a sign or a mark read
    from the flags, a keep written after the prefix ended, and a stop shown as a rejection."""
    proposed = [p for p, _ in pairs]
    choice = [c for _, c in pairs] + [14]
    accepted = next((i for i, (p, c) in enumerate(pairs) if p != c), len(pairs))
    stop_rule = stop and accepted == len(pairs)         # the stop rule drops a whole match's last proposal
    accepted -= stop_rule
    names = {10: " a", 11: "<b>", 12: " c", 13: " d", 14: "."}
    r = greedy_round(proposed=proposed, proposed_tokens=[names[p] for p in proposed], q=[0.5] * len(pairs),
                     q_top=[[[p, names[p], 0.5]] for p in proposed],
                     p_top=[[[c, names[c], 0.6]] for c in choice], p_proposed=[0.5] * len(pairs),
                     target_choice=choice, decisions=[{"accepted": i < accepted} for i in range(len(pairs))],
                     greedy={"mismatch": [0] * len(pairs), "cumsum": [0] * len(pairs), "n_matches": accepted,
                             "stop_rule_applied": stop_rule}, accepted=accepted)
    rows = histories.histories_html(r, "verify", "greedy").split("<tr>")[2:]
    for i, (row, (p, c)) in enumerate(zip(rows, pairs)):
        if i > accepted:
            assert "unused" in row and "argmax" not in row
            continue
        assert f"target's argmax is {tokens.esc(names[c])} {'=' if p == c else '≠'} proposal" in row
        assert ("✓ keep" in row) == (i < accepted)
        if i == accepted:
            assert ("stop rule: target supplies it" in row) == stop_rule and ("✗ reject" in row) == (not stop_rule)
            assert (p == c) == stop_rule
