"""A recorded generation is plain data: it survives JSON and replays without a model."""
import json

import pytest

from specviz.generator.engine import Generation, Settings
from specviz.generator.trace import Trace


@pytest.fixture(scope="module")
def trace(models):
    return Generation(models, "The best way to learn is to", Settings(drafter="ar", max_new_tokens=16)).run()


def test_json_round_trip_keeps_every_round(trace):
    back = Trace.from_json(trace.to_json())
    assert back == trace
    assert back.new_ids == trace.new_ids


def test_a_round_records_what_the_page_draws(trace):
    r = trace.rounds[0]
    k = len(r.proposed)
    assert len(r.p_top) == k + 1 and len(r.q) == len(r.q_top) == len(r.p_proposed) == k
    assert len(r.target_choice) == k + 1
    assert [e["kind"] for e in r.emitted][:r.accepted] == ["accepted"] * r.accepted
    assert r.emitted[-1]["kind"] in ("correction", "bonus")
    assert r.greedy["n_matches"] == r.accepted
    assert r.total_ms >= r.draft_ms + r.verify_ms > 0
    assert abs(r.draft_ms + r.verify_ms + r.overhead_ms - r.total_ms) < 1e-6


def test_the_prompt_tokens_are_recorded_so_a_replay_can_show_them(trace):
    # the engine starts every prompt with end-of-text; the rest spells the prompt
    assert trace.prompt_tokens[0] == "<|endoftext|>"
    assert "".join(trace.prompt_tokens[1:]) == "The best way to learn is to"


def test_a_trace_saved_before_prompt_tokens_were_recorded_still_loads(trace):
    old = json.loads(trace.to_json())
    del old["prompt_tokens"]
    assert Trace.from_json(json.dumps(old)).prompt_tokens == []


@pytest.mark.parametrize("text", ["", "{}", "not json", '{"prompt": 1}', json.dumps({"rounds": [1]}),
                                  '{"prompt": "x", "settings": {}, "prompt_ids": ["a"], "prefill_ms": 0, "rounds": []}',
                                  '{"prompt": "x", "settings": {}, "prompt_ids": [0], "prefill_ms": 0, "rounds": [], '
                                  '"prompt_tokens": [7]}'])
def test_a_corrupted_trace_is_refused_with_a_reason(text):
    with pytest.raises(ValueError, match="not a specviz trace"):
        Trace.from_json(text)
