"""Edges of a round: end-of-text inside a block, the length limit mid-block, block size 1,
empty and over-long prompts."""
from dataclasses import replace

import pytest

from specviz.generator.engine import Generation, Settings, encode_prompt
from specviz.generator.sampling import SamplingSettings

DIALOGUE = 'Anne asked, "Could you open the window?" "Yes, of course." Tom said.'


def test_max_new_tokens_reached_mid_block_stops_exactly(models):
    for n in (1, 2, 3, 5, 7):
        trace = Generation(models, "It is a truth universally acknowledged, that",
                           Settings(drafter="ar", block_size=4, max_new_tokens=n)).run()
        assert len(trace.new_ids) == n or trace.new_ids[-1] == models.eos_id
        assert len(trace.new_ids) <= n
        # no round proposes past the limit
        done = 0
        for r in trace.rounds:
            assert len(r.proposed) <= n - done
            done += len(r.emitted)


def test_the_length_stop_rule_drops_a_match_when_the_whole_block_matched(models):
    # A drafter that is the target itself proposes exactly the target's greedy tokens, so the
    # whole block matches. With 4 tokens left and 4 matching proposals, transformers' rule drops
    # one match: the target supplies the 4th token itself and no bonus runs past the limit.
    twin = replace(models, drafter_models={**models.drafter_models, "ar": models.target})
    r = Generation(twin, "It is a truth universally acknowledged, that",
                   Settings(drafter="ar", block_size=4, max_new_tokens=4)).step()
    assert r.greedy["stop_rule_applied"]
    assert r.accepted == 3 and [e["kind"] for e in r.emitted] == ["accepted"] * 3 + ["correction"]
    assert [e["id"] for e in r.emitted] == r.proposed


def test_without_the_length_limit_a_fully_matched_block_earns_a_bonus(models):
    twin = replace(models, drafter_models={**models.drafter_models, "ar": models.target})
    r = Generation(twin, "It is a truth universally acknowledged, that",
                   Settings(drafter="ar", block_size=4, max_new_tokens=20)).step()
    assert not r.greedy["stop_rule_applied"]
    assert r.accepted == 4 and [e["kind"] for e in r.emitted] == ["accepted"] * 4 + ["bonus"]


def test_end_of_text_inside_a_block_ends_generation(models):
    """The dialogue exchanges of the corpus end with end-of-text; nothing follows it."""
    for drafter in [None, "ar", "lookup"]:
        trace = Generation(models, DIALOGUE, Settings(drafter=drafter, block_size=8, max_new_tokens=40)).run()
        ids = trace.new_ids
        if models.eos_id in ids:
            assert ids.index(models.eos_id) == len(ids) - 1
            assert trace.finished
        for r in trace.rounds:
            if models.eos_id in r.proposed:
                assert r.proposed.index(models.eos_id) == len(r.proposed) - 1   # drafting stops there


def test_block_size_one_is_classic_one_proposal_per_round(models):
    trace = Generation(models, "Emma could not help thinking that", Settings(drafter="ar", block_size=1,
                                                                          max_new_tokens=12)).run()
    assert all(len(r.proposed) <= 1 and 1 <= len(r.emitted) <= 2 for r in trace.rounds)


@pytest.mark.parametrize("prompt", ["", "   ", "\n\t "])
def test_empty_prompt_is_refused_with_a_clear_message(models, prompt):
    with pytest.raises(ValueError, match="prompt is empty"):
        Generation(models, prompt, Settings())


def test_over_long_prompt_keeps_its_end_and_says_so(models):
    prompt = "Once upon a time there was a letter. " * 200
    s = Settings(max_new_tokens=16, block_size=4)
    ids, notices = encode_prompt(models, prompt, s)
    assert len(ids) + s.max_new_tokens + s.block_size + 1 <= models.max_context
    assert notices and "only its last" in notices[0]
    assert ids[-5:] == models.tokenizer.encode(prompt)[-5:]
    trace = Generation(models, prompt, s).run()
    assert len(trace.new_ids) == 16 or trace.new_ids[-1] == models.eos_id


def test_settings_too_large_for_the_context_are_refused(models):
    with pytest.raises(ValueError, match="context"):
        Generation(models, "Hello", Settings(max_new_tokens=10_000))


@pytest.mark.parametrize("kwargs", [dict(block_size=0), dict(block_size=99), dict(max_new_tokens=0),
                                    dict(verifier="maybe")])
def test_out_of_range_engine_settings_are_refused(kwargs):
    with pytest.raises(ValueError):
        Settings(**kwargs)


def test_unknown_drafter_is_refused_by_name(models):
    with pytest.raises(ValueError, match="unknown drafter"):
        Generation(models, "Hello", Settings(drafter="oracle"))


def test_odd_characters_round_trip(models):
    prompt = "Zoë said \u200b\x07 «hi» 🙂\n<script>alert(1)</script>"
    ids, _ = encode_prompt(models, prompt, Settings())
    assert models.tokenizer.decode(ids[1:]) == prompt
    assert Generation(models, prompt, Settings(max_new_tokens=4)).run().new_ids


def test_temperature_zero_sampling_verifiers_are_greedy(models):
    greedy = Generation(models, "Fanny Price was", Settings(drafter="ar", max_new_tokens=16)).run().new_ids
    for v in ("sampling", "match"):
        s = Settings(drafter="ar", verifier=v, max_new_tokens=16, sampling=SamplingSettings(temperature=0))
        assert Generation(models, "Fanny Price was", s).run().new_ids == greedy
