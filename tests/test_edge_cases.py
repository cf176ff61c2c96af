"""Edges of a round: end-of-text inside a block, the length limit mid-block, block size 1,
empty and over-long prompts.

The edges of a round are forced, not waited for: a drafter built here (`Scripted`) proposes
chosen tokens, around the target's own greedy continuation of two prompts (one that ends with
end-of-text after six tokens, one that runs on), so every branch of the accept and stop rules
is taken on purpose."""
import pytest
import torch

from specviz.generator.drafters.base import Draft, Drafter
from specviz.generator.engine import Generation, Settings, encode_prompt
from specviz.generator.sampling import SamplingSettings

REPLY = 'Anne asked, "Could you open the window?" "Yes, of course."'
TRUTH = "It is a truth universally acknowledged, that"


class Scripted(Drafter):
    """Proposes the blocks it is given, one per round, with one-hot q: forces a round's edge case."""
    name = "scripted"

    def __init__(self, blocks: list[list[int]], vocab_size: int):
        self.blocks, self.vocab_size = list(blocks), vocab_size

    def propose(self, committed, k, pick) -> Draft:
        tokens = self.blocks.pop(0)[:k]
        return Draft(tokens=tokens, q=[torch.nn.functional.one_hot(torch.tensor(t), self.vocab_size).float()
                                       for t in tokens])


def scripted(models, prompt: str, blocks: list[list[int]], **settings) -> Generation:
    g = Generation(models, prompt, Settings(drafter="lookup", **settings))
    g.drafter = Scripted(blocks, len(models.token_text))
    return g


def plain(models, prompt: str, n: int) -> list[int]:
    return Generation(models, prompt, Settings(drafter=None, max_new_tokens=n)).run().new_ids


def kinds(r) -> list[str]:
    return [e["kind"] for e in r.emitted]


@pytest.fixture(scope="module")
def said(models):
    """The target's greedy answer to REPLY: ' said James, rising.' and end-of-text, 6 tokens."""
    ids = plain(models, REPLY, 12)
    assert len(ids) == 6 and ids[-1] == models.eos_id
    return ids


@pytest.fixture(scope="module")
def truth(models):
    """The target's greedy continuation of TRUTH: 12 tokens, no end-of-text among them."""
    ids = plain(models, TRUTH, 12)
    assert len(ids) == 12 and models.eos_id not in ids and 9 not in ids   # 9: the scripted wrong guess
    return ids


def test_end_of_text_in_the_middle_of_a_block_after_accepted_tokens_ends_the_generation(models, said):
    # the draft runs past end-of-text; the engine cuts it there, and since the block hit a stop and
    # matched whole, the stop rule has the target supply end-of-text itself
    g = scripted(models, REPLY, [said + [9, 9]], block_size=8, max_new_tokens=40)
    r = g.step()
    assert r.proposed == said
    assert r.greedy["stop_rule_applied"] and r.accepted == 5
    assert kinds(r) == ["accepted"] * 5 + ["stop"] and r.emitted_ids == said
    assert g.done and g.step() is None and g.trace.new_ids == said


def test_end_of_text_proposed_where_the_target_wants_another_token_is_rejected(models, said):
    g = scripted(models, REPLY, [[said[0], models.eos_id, said[2]]], block_size=3, max_new_tokens=40)
    r = g.step()
    assert r.proposed == [said[0], models.eos_id]   # nothing is proposed past end-of-text
    assert not r.greedy["stop_rule_applied"]          # the block did not match whole
    assert kinds(r) == ["accepted", "correction"] and r.emitted_ids == said[:2]
    assert not g.done


def test_end_of_text_as_the_correction_after_accepted_tokens_ends_the_generation(models, said):
    g = scripted(models, REPLY, [said[:5] + [9, 9, 9]], block_size=8, max_new_tokens=40)
    r = g.step()
    assert r.accepted == 5 and kinds(r) == ["accepted"] * 5 + ["correction"] and r.emitted_ids == said
    assert g.done and g.trace.finished


def test_end_of_text_as_the_bonus_ends_the_generation(models, said):
    g = scripted(models, REPLY, [said[:5]], block_size=5, max_new_tokens=40)
    r = g.step()
    assert kinds(r) == ["accepted"] * 5 + ["bonus"] and r.emitted_ids == said
    assert g.done


def test_the_length_stop_rule_drops_a_match_when_the_whole_block_matched(models, truth):
    # 4 tokens left and a block of 6 matching proposals: the draft is cut to 4, all match, and
    # transformers' rule drops one match so the target supplies the 4th token itself (the same
    # token: recorded as the stop rule's, neither a correction nor a bonus)
    g = scripted(models, TRUTH, [truth[:6]], block_size=6, max_new_tokens=4)
    r = g.step()
    assert r.proposed == truth[:4]
    assert r.greedy["stop_rule_applied"] and r.accepted == 3
    assert kinds(r) == ["accepted"] * 3 + ["stop"] and r.emitted_ids == truth[:4]
    assert g.done and g.trace.new_ids == truth[:4]


def test_without_the_length_limit_a_fully_matched_block_earns_a_bonus(models, truth):
    g = scripted(models, TRUTH, [truth[:4]], block_size=4, max_new_tokens=20)
    r = g.step()
    assert not r.greedy["stop_rule_applied"]
    assert kinds(r) == ["accepted"] * 4 + ["bonus"] and r.emitted_ids == truth[:5]


def test_max_new_tokens_reached_mid_block_stops_exactly(models, truth):
    # wrong proposals after the first: each round keeps one proposal and corrects the next, and
    # the last round is cut by the limit in the middle of its block
    for n in (1, 2, 3, 5, 7):
        blocks = [truth[i:i + 1] + [9, 9, 9] for i in range(0, 12, 2)]
        g = scripted(models, TRUTH, blocks, block_size=4, max_new_tokens=n)
        trace = g.run()
        assert trace.new_ids == truth[:n]
        assert [len(r.proposed) for r in trace.rounds] == [min(4, n - 2 * i) for i in range(len(trace.rounds))]
        assert sum(len(r.emitted) for r in trace.rounds) == n


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
