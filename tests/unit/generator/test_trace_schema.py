"""A trace file is untrusted input: every field, range and relation is checked, and a bad file is
refused with one sentence naming the first thing wrong. Mutated real traces (hypothesis) either
load and draw every lesson-1 phase, or are refused with a message; nothing else escapes."""
import copy
import json
import math
import tomllib
from dataclasses import asdict

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from specviz.generator.engine import Generation
from specviz.generator.sampling import SamplingSettings
from specviz.generator.settings import Settings
from specviz.generator.trace import Round, Trace
from specviz.hosting.config import Limits
from specviz.viz import cache, histories, stages, tokens
from tests.paths import ROOT

STREAMLIT_CONFIG = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
PROMPT = "He said, he said, he said, the best way to learn is to"
RECORDED = {   # name -> settings: each verifier, a drafter with stages and confidences, plain decoding
    "greedy-ar": Settings.greedy("ar", 16, k=4),
    "sampling-dspark": Settings(drafter="dspark", verifier="sampling", k=3, max_new_tokens=8,
                                sampling=SamplingSettings(temperature=0.9), seed=3),
    "match-lookup": Settings(drafter="lookup", verifier="match", k=3, max_new_tokens=8,
                             sampling=SamplingSettings(temperature=0.7), seed=1),
    "greedy-dloop": Settings.greedy("dloop", 8, k=2, loop_threshold=-50.0),
    "plain": Settings.greedy(None, 4),
}


@pytest.fixture(scope="module")
def recorded(models) -> dict:
    """Real traces, recorded by the engine on the embedded models, as the JSON a download holds."""
    return {name: json.loads(Generation(models, PROMPT, s).run().to_json()) for name, s in RECORDED.items()}


def refusal(d: dict, **limits) -> str:
    with pytest.raises(ValueError) as refused:
        Trace.from_json(json.dumps(d), **limits)
    return str(refused.value)


def edited(d: dict, edit) -> dict:
    d = copy.deepcopy(d)
    edit(d)
    return d


def test_every_recorded_trace_passes_its_own_schema_and_comes_back_equal(recorded):
    for name, d in recorded.items():
        back = Trace.from_json(json.dumps(d), max_new_tokens=Limits().max_new_tokens)
        assert json.loads(back.to_json()) == d, name


def test_a_probability_that_is_text_is_refused_where_it_is(recorded):
    d = edited(recorded["greedy-ar"], lambda d: d["rounds"][0]["p_top"][1][0].__setitem__(2, "abc"))
    assert refusal(d) == "round 1: p_top[1][0][2] should be a valid number, not 'abc'"


def test_more_accepted_than_proposed_is_refused(recorded):
    d = edited(recorded["greedy-ar"], lambda d: d["rounds"][2].__setitem__("accepted", 99))
    assert refusal(d) == "round 3: accepted 99 exceeds the 4 proposals"


def test_stages_without_the_stage_limit_are_refused(recorded):
    """Lesson 1's stage table works each gate decision out again from g and the limit S: without S it
    has no rule to apply, so the trace is refused rather than drawn with a table that fails."""
    d = edited(recorded["greedy-dloop"], lambda d: d["rounds"][0]["drafter_info"].pop("max_stages"))
    assert refusal(d) == "round 1: drafter_info gives the gate's threshold without max_stages, the stage limit it read"


def test_token_ids_outside_the_recorded_vocabulary_are_refused(recorded):
    too_big = edited(recorded["greedy-ar"], lambda d: d["rounds"][1]["proposed"].__setitem__(0, 10**12))
    assert refusal(too_big) == "round 2: a token id 1000000000000 is outside the vocabulary of 6144 tokens"
    negative = edited(recorded["greedy-ar"], lambda d: d["rounds"][1]["proposed"].__setitem__(1, -5))
    assert refusal(negative) == "round 2: proposed[1] should be greater than or equal to 0, not -5"
    in_a_top_list = edited(recorded["greedy-ar"], lambda d: d["rounds"][0]["q_top"][0][1].__setitem__(0, 6144))
    assert refusal(in_a_top_list) == "round 1: a token id 6144 is outside the vocabulary of 6144 tokens"


def test_counts_must_follow_from_round_to_round(recorded):
    d = edited(recorded["greedy-ar"], lambda d: d["rounds"][1].__setitem__("committed_before", 3))
    first = recorded["greedy-ar"]["rounds"][0]["committed_after"]
    assert refusal(d) == f"round 2: committed_before 3 should be {first}"
    repeated = edited(recorded["greedy-ar"], lambda d: d.__setitem__("rounds", d["rounds"][:1] * 3))
    assert refusal(repeated) == "round 2: index 0 should be 1 (rounds are numbered in order)"


def test_emitted_must_be_the_accepted_proposals_and_one_correction_or_bonus(recorded):
    def one_more(d):
        r = d["rounds"][0]
        r["emitted"].append(dict(r["emitted"][-1]))
        r["committed_after"] += 1
        r["processed_after"] += 1
    r = recorded["greedy-ar"]["rounds"][0]
    assert refusal(edited(recorded["greedy-ar"], one_more)) == (
        f"round 1: emits {len(r['emitted']) + 1} tokens for {r['accepted']} accepted: expected the accepted "
        f"proposals and one correction or bonus")


def test_top_lists_have_the_recorded_length(recorded):
    d = edited(recorded["greedy-ar"], lambda d: d["rounds"][0]["p_top"][0].extend(d["rounds"][0]["p_top"][0]))
    assert refusal(d) == "round 1: p_top[0] lists 10 tokens; the trace records 1 to 5"
    short = edited(recorded["greedy-ar"], lambda d: d["rounds"][0]["p_top"].pop())
    assert refusal(short) == "round 1: p_top holds 4 entries, not 5"


def test_the_verifiers_record_must_agree_with_what_it_kept(recorded):
    def contradict(d):   # a uniform draw that says the opposite of what the round did
        x = d["rounds"][0]["decisions"][0]
        x["u"] = 1.0 if x["accepted"] else 0.0
    assert recorded["sampling-dspark"]["rounds"][0]["decisions"][0]["ratio"] > 0
    assert refusal(edited(recorded["sampling-dspark"], contradict)) == (
        "round 1: decisions[0] does not follow min(1, p/q) and u < ratio")
    no_greedy = edited(recorded["greedy-ar"], lambda d: d["rounds"][0].__setitem__("greedy", None))
    assert refusal(no_greedy) == "round 1: greedy should be recorded under the greedy verifier"


def test_types_are_strict_and_unknown_fields_are_refused(recorded):
    flag = edited(recorded["greedy-ar"], lambda d: d["rounds"][0]["q"].__setitem__(0, True))
    assert refusal(flag) == "round 1: q[0] should be a valid number, not True"
    text = edited(recorded["greedy-ar"], lambda d: d["settings"].__setitem__("k", "4"))
    assert refusal(text) == "settings: k should be a valid integer, not '4'"
    extra = edited(recorded["greedy-ar"], lambda d: d["rounds"][1].__setitem__("script", "<b>"))
    assert refusal(extra) == "round 2: script is not part of a specviz trace"
    gone = edited(recorded["greedy-ar"], lambda d: d.pop("vocab_size"))
    assert refusal(gone) == "vocab_size is missing"
    nan = edited(recorded["greedy-ar"], lambda d: d.__setitem__("prefill_ms", math.nan))
    assert refusal(nan) == "prefill_ms should be a finite number, not nan"


def test_a_refusal_quoting_a_huge_value_is_cut_to_one_short_sentence(recorded):
    # found by the mutation test below: the value is the file's, and can be as long as the file
    huge = edited(recorded["greedy-ar"], lambda d: d["settings"].__setitem__("verifier", "x" * 5000))
    message = refusal(huge)
    assert message.startswith("settings: verifier must be one of ('greedy', 'sampling', 'match'), got 'xxx")
    assert len(message) == 300 and message.endswith("…")


def test_a_notice_is_a_plain_sentence_because_the_page_shows_it_as_markdown(recorded):
    d = edited(recorded["greedy-ar"], lambda d: d["notices"].append("see ![x](http://example.com/pixel)"))
    assert refusal(d) == "notices[0]: a notice is a plain sentence, without any of $<>[\\]`"


def test_a_trace_longer_than_the_hosts_limit_is_refused(recorded):
    n = len([e for r in recorded["greedy-ar"]["rounds"] for e in r["emitted"]])
    assert refusal(recorded["greedy-ar"], max_new_tokens=n - 1) == (
        f"the trace holds {n} new tokens; this server replays at most {n - 1}")
    Trace.from_json(json.dumps(recorded["greedy-ar"]), max_new_tokens=n)


def test_the_engine_records_only_a_round_that_follows_from_the_ones_before(models):
    g = Generation(models, PROMPT, Settings.greedy("ar", 6, k=2))
    first = g.step()
    again = Round(**asdict(first))   # the same round once more: its counts no longer follow
    with pytest.raises(ValueError, match=r"^round 2: index 0 should be 1"):
        g.trace.record(again)
    assert len(g.trace.rounds) == 1


# --- the upload limit and the error display of the shipped configuration -----------------------

LONG = 1.2345678901234567e-05   # a float whose JSON is as long as the engine writes them (22 characters)


def largest_trace(texts: list[str], limits: Limits = Limits(), stages_: int = 3, top_k: int = 5) -> dict:
    """The largest trace lesson 1 can record under `limits` (its DLoop runs Settings' default 3
    stages): every round rejects its first proposal, so there are max_new_tokens rounds, each
    proposing as many as the block size, the stages and the tokens left allow; every text is the
    vocabulary's longest, every number as long as the engine writes one; the prompt fills the
    context the answer leaves (512 - 128 - 16 - 1 tokens) and the prompt box."""
    widest, other = sorted(range(1, len(texts)), key=lambda i: (len(json.dumps(texts[i])), i))[-2:]
    new, block = limits.max_new_tokens, limits.max_k
    prompt_ids = [0] + [widest] * (512 - new - block - 2)
    row = [[widest, texts[widest], 0.12346]] * top_k
    rounds, committed = [], len(prompt_ids)
    for j in range(new):
        k = min(block * stages_, new - j)
        cuts = list(range(0, k, block)) + [k]
        rounds.append(dict(
            index=j, proposed=[widest] * k, proposed_tokens=[texts[widest]] * k, q=[LONG] * k,
            q_top=[row] * k, p_top=[row] * (k + 1), p_proposed=[LONG] * k, target_choice=[other] * (k + 1),
            decisions=[{"accepted": False}] * k,
            greedy={"mismatch": [1] * k, "cumsum": list(range(1, k + 1)), "n_matches": 0, "stop_rule_applied": False},
            accepted=0, emitted=[{"id": other, "text": texts[other], "kind": "correction"}],
            processed_before=committed - 1, processed_after=committed, committed_before=committed,
            committed_after=committed + 1, draft_ms=LONG, verify_ms=LONG, overhead_ms=LONG, total_ms=LONG,
            drafter_info={"stages": [{"start": a, "end": b, "logprob_sum": -LONG, "continue": b < k}
                                     for a, b in zip(cuts, cuts[1:])],
                          "threshold": -2.0, "max_stages": stages_, "confidence": [LONG] * k,
                          "survival": [LONG] * k, "confidence_logit": [-LONG] * k}))
        committed += 1
    s = Settings.greedy("dloop", new, k=block, max_stages=stages_)
    return dict(prompt="é" * limits.max_prompt_chars, settings=asdict(s), prompt_ids=prompt_ids, prefill_ms=LONG,
                vocab_size=len(texts), top_k=top_k, rounds=rounds, prompt_tokens=[texts[widest]] * len(prompt_ids),
                notices=["The prompt was 2000 tokens; only its last 365 were kept (context 512 tokens, "
                         "128 reserved for the answer)."], finished=True)


def test_the_upload_limit_fits_the_largest_trace_the_default_limits_allow(models):
    text = json.dumps(largest_trace(models.token_text))
    trace = Trace.from_json(text, max_new_tokens=Limits().max_new_tokens)   # a trace the schema allows
    assert sum(len(r.proposed) for r in trace.rounds) == 5016                # the config's arithmetic
    assert len(text) <= STREAMLIT_CONFIG["server"]["maxUploadSize"] * 2**20


def test_the_hosted_app_shows_no_error_details():
    # "none": Streamlit's own error box, if one ever appears, names no type, message or traceback
    assert STREAMLIT_CONFIG["client"]["showErrorDetails"] == "none"


# --- fuzzing: mutated real traces ---------------------------------------------------------------

def render_every_phase(trace: Trace) -> None:
    """What lesson 1 draws of a trace (course_pages/draft_and_verify.py's panel), every round, every phase."""
    verifier = trace.settings.verifier
    prompt_texts = trace.prompt_tokens or [f"#{i}" for i in trace.prompt_ids]
    tokens.committed_html(trace.prompt, trace.rounds, 0, "commit")
    for r in trace.rounds:
        before = prompt_texts + [e["text"] for x in trace.rounds[:r.index] for e in x.emitted]
        for phase in tokens.PHASES:
            tokens.phase_badges(phase)
            tokens.committed_html(trace.prompt, trace.rounds, r.index + 1, phase)
            tokens.block_html(r, phase)
            stages.stages_html(r.drafter_info, r.proposed_tokens)
            stages.survival_html(r.drafter_info, r.proposed_tokens)
            histories.histories_html(r, phase, verifier)
            histories.n_matches_html(r)
            cache.strip_html(before, r, phase)
        tokens.summary(r)
    tokens.log_rows(trace.rounds)
    trace.to_json()


def places(node, at=()):
    """Every path into a JSON value below its top: keys of objects, indices of lists."""
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        yield at + (key,)
        yield from places(child, at + (key,))


def place(draw, d: dict) -> tuple:
    """A path chosen so every field has a fair chance, not every number of the long lists: first a
    field (the path with its list indices left out), then one place that field occurs."""
    fields = {}
    for at in places(d):
        fields.setdefault(tuple("*" if isinstance(k, int) else k for k in at), []).append(at)
    return draw(st.sampled_from(fields[draw(st.sampled_from(sorted(fields)))]))


ODD_VALUES = [None, True, False, 0, -1, -5, 1.5, -0.5, 10**12, 2**64, math.nan, math.inf, -math.inf, "abc",
              "0.5", "", [], {}, [1, "a", 0.5], {"id": 1}, "\u202egnp.exe", "a\x00b", "\ud800", "🙂" * 40,
              "<script>alert(1)</script>", "e\u0301" * 3, "x" * 5000]


@st.composite
def mutated(draw, recorded: dict):
    d = copy.deepcopy(draw(st.sampled_from(sorted(recorded.items())))[1])
    for _ in range(draw(st.integers(1, 2))):
        where = place(draw, d)
        if not where:
            continue
        parent = d
        for key in where[:-1]:
            parent = parent[key]
        key, value = where[-1], parent[where[-1]]
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        how = draw(st.sampled_from(["swap", "drop", "nudge" if number else "resize" if isinstance(value, list)
                                    else "unicode" if isinstance(value, str) else "swap"]))
        if how == "swap":
            parent[key] = draw(st.sampled_from(ODD_VALUES))
        elif how == "drop":
            del parent[key]
        elif how == "nudge":
            parent[key] = draw(st.sampled_from([value + 1, value - 1, value * 2, 0, -1, 10**12] if isinstance(value, int)
                                               else [value + 1e-9, 1 - value, -value, value * 2, 0.0, 1.0]))
        elif how == "resize":
            parent[key] = draw(st.sampled_from([value[:len(value) // 2], value[1:], value * 2,
                                                value + value[-1:], []]))
        else:
            parent[key] = draw(st.sampled_from(["\u202e" + value, value + "\x00", "\ud800", value + "🙂",
                                                "<b>" + value + "</b>", "\ufeff" + value]))
    return d


@pytest.mark.slow   # 500 mutated traces, each drawn in every phase
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                    HealthCheck.data_too_large])
@given(data=st.data())
def test_a_mutated_trace_loads_and_draws_every_phase_or_is_refused_with_a_message(recorded, data):
    d = data.draw(mutated(recorded))
    try:
        trace = Trace.from_json(json.dumps(d), max_new_tokens=Limits().max_new_tokens)
    except ValueError as e:
        message = str(e)
        assert message and "\n" not in message and len(message) < 400, message
        return
    render_every_phase(trace)



def test_a_trace_saved_when_k_was_named_block_size_replays_with_its_own_k(recorded):
    """A trace saved before the block size took the sources' name k holds settings.block_size. Planted
    bug it catches: the old name dropped as an unknown setting, so a k = 3 trace replays as k = 4."""
    old = edited(recorded["match-lookup"], lambda d: d["settings"].__setitem__("block_size", d["settings"].pop("k")))
    back = Trace.from_json(json.dumps(old))
    assert back.settings.k == 3 and back.new_ids == Trace.from_json(json.dumps(recorded["match-lookup"])).new_ids
