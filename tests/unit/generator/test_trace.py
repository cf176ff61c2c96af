"""A recorded generation is plain data: it survives JSON and replays without a model."""
import json

import pytest

from specviz.generator.engine import Generation
from specviz.generator.settings import Settings
from specviz.generator.trace import Trace


@pytest.fixture(scope="module")
def trace(models):
    return Generation(models, "The best way to learn is to", Settings(drafter="ar", max_new_tokens=16)).run()


def test_json_round_trip_keeps_every_round(trace):
    back = Trace.from_json(trace.to_json())
    assert back == trace
    assert back.new_ids == trace.new_ids


def test_a_round_records_what_the_page_draws(trace, models):
    import torch
    r = trace.rounds[0]
    k = len(r.proposed)
    assert len(r.p_top) == k + 1 and len(r.q) == len(r.q_top) == len(r.p_proposed) == k
    assert len(r.target_choice) == k + 1
    assert [e["kind"] for e in r.emitted][:r.accepted] == ["accepted"] * r.accepted
    assert r.emitted[-1]["kind"] in ("correction", "bonus", "stop")
    assert r.greedy["n_matches"] == r.accepted
    assert r.total_ms >= r.draft_ms + r.verify_ms > 0
    # p at every candidate history, from one full target forward without a cache: what the page draws
    with torch.no_grad():
        logits = models.target(torch.tensor([trace.prompt_ids + r.proposed], device=models.device)).logits[0, -k - 1:]
    p = torch.softmax(logits.float(), -1)
    assert r.target_choice == p.argmax(-1).tolist()
    assert r.p_proposed == pytest.approx([float(p[i, t]) for i, t in enumerate(r.proposed)], abs=1e-5)


def test_the_prompt_tokens_are_recorded_so_a_replay_can_show_them(trace):
    # the engine starts every prompt with end-of-text; the rest spells the prompt
    assert trace.prompt_tokens[0] == "<|endoftext|>"
    assert "".join(trace.prompt_tokens[1:]) == "The best way to learn is to"


def test_a_trace_saved_before_prompt_tokens_were_recorded_still_loads(trace):
    old = json.loads(trace.to_json())
    del old["prompt_tokens"]
    assert Trace.from_json(json.dumps(old)).prompt_tokens == []


@pytest.mark.parametrize("text,reason", [
    ("", "not a specviz trace: the file is not JSON (EOF while parsing a value at line 1 column 0)"),
    ("not json", "not a specviz trace: the file is not JSON (expected ident at line 1 column 2)"),
    ("[1]", "not a specviz trace: the file holds a list, not an object of named fields"),
    ("{}", "prompt is missing"),
    ('{"prompt": 1}', "prompt should be a valid string, not 1"),
    (json.dumps({"rounds": [1]}), "prompt is missing"),
])
def test_a_corrupted_trace_is_refused_with_a_reason(text, reason):
    with pytest.raises(ValueError) as refused:
        Trace.from_json(text)
    assert str(refused.value) == reason


def test_a_trace_is_refused_for_its_first_wrong_field(trace):
    d = json.loads(trace.to_json())
    d["prompt_ids"][1] = "a"
    d["prompt_tokens"][0] = 7
    with pytest.raises(ValueError, match=r"^prompt_ids\[1\] should be a valid integer, not 'a'$"):
        Trace.from_json(json.dumps(d))
