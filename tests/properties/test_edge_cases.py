"""Edges of a round: end-of-text inside a block, the length limit mid-block, block size 1,
empty and over-long prompts.

The edges of a round are forced, not waited for: a drafter built here (`Scripted`) proposes
chosen tokens, around the target's own greedy continuation of two prompts (one that ends with
end-of-text after six tokens, one that runs on), so every branch of the accept and stop rules
is taken on purpose."""
import pytest
import torch

from specviz.generator.drafters.base import Draft, Drafter
from specviz.generator.engine import Generation, encode_prompt
from specviz.generator.sampling import SamplingSettings, transform
from specviz.generator.settings import Settings
from tests.tiny import tiny_models

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


class World:
    """A model set with two prompts: `reply`, whose greedy answer `said` ends with end-of-text after
    a few tokens, and `truth`, whose greedy continuation `ahead` runs 12 tokens without it;
    `wrong(t)` is a token that is neither t nor end-of-text (a proposal the target rejects)."""

    def __init__(self, models, reply: str, truth: str, wrong):
        self.m, self.reply, self.truth, self.wrong = models, reply, truth, wrong
        self.said = plain(models, reply, 12)
        self.ahead = plain(models, truth, 12)
        assert 3 <= len(self.said) < 12 and self.said[-1] == models.eos_id and models.eos_id not in self.said[:-1]
        assert len(self.ahead) == 12 and models.eos_id not in self.ahead
        assert all(wrong(x) not in (x, models.eos_id) for x in self.said + self.ahead)


@pytest.fixture(scope="module", params=["embedded", "tiny"])
def world(request):
    """The embedded set (the answer to REPLY is ' said James, rising.' and end-of-text, 6 tokens;
    token 9 is never the one wanted) and the tiny set of tests.tiny (the answer to 'c d a' is 4
    tokens and end-of-text), where each forced edge runs in milliseconds."""
    if request.param == "embedded":
        return World(request.getfixturevalue("models"), REPLY, TRUTH, lambda t: 9)
    return World(tiny_models(), "c d a", "a a a", lambda t: 2 if t == 1 else 1)


def test_end_of_text_in_the_middle_of_a_block_after_accepted_tokens_ends_the_generation(world):
    # the draft runs past end-of-text; the engine cuts it there, and since the block hit a stop and
    # matched whole, the stop rule has the target supply end-of-text itself
    w, said = world, world.said
    g = scripted(w.m, w.reply, [said + [w.wrong(0)] * 2], k=8, max_new_tokens=40)
    r = g.step()
    assert r.proposed == said
    assert r.greedy["stop_rule_applied"] and r.accepted == len(said) - 1
    assert kinds(r) == ["accepted"] * (len(said) - 1) + ["stop"] and r.emitted_ids == said
    assert g.done and g.step() is None and g.trace.new_ids == said and g.trace.finished


def test_end_of_text_proposed_where_the_target_wants_another_token_is_rejected(world):
    w, said = world, world.said
    g = scripted(w.m, w.reply, [[said[0], w.m.eos_id, said[2], w.m.eos_id]], k=4, max_new_tokens=40)
    r = g.step()
    assert r.proposed == [said[0], w.m.eos_id]   # nothing is proposed past the first end-of-text
    assert not r.greedy["stop_rule_applied"]      # the block did not match whole
    assert kinds(r) == ["accepted", "correction"] and r.emitted_ids == said[:2]
    assert not g.done and not g.trace.finished


def test_end_of_text_as_the_correction_after_accepted_tokens_ends_the_generation(world):
    w, said = world, world.said
    g = scripted(w.m, w.reply, [said[:-1] + [w.wrong(said[-1])] * 3], k=8, max_new_tokens=40)
    r = g.step()
    assert r.accepted == len(said) - 1 and kinds(r) == ["accepted"] * (len(said) - 1) + ["correction"]
    assert r.emitted_ids == said and g.done and g.trace.finished


def test_end_of_text_as_the_bonus_ends_the_generation(world):
    w, said = world, world.said
    g = scripted(w.m, w.reply, [said[:-1]], k=len(said) - 1, max_new_tokens=40)
    r = g.step()
    assert kinds(r) == ["accepted"] * (len(said) - 1) + ["bonus"] and r.emitted_ids == said
    assert g.done


def test_the_length_stop_rule_drops_a_match_when_the_whole_block_matched(world):
    # 4 tokens left and a block of 6 matching proposals: the draft is cut to 4, all match, and
    # transformers' rule drops one match so the target supplies the 4th token itself (the same
    # token: recorded as the stop rule's, neither a correction nor a bonus)
    w, ahead = world, world.ahead
    g = scripted(w.m, w.truth, [ahead[:6]], k=6, max_new_tokens=4)
    r = g.step()
    assert r.proposed == ahead[:4]
    assert r.greedy["stop_rule_applied"] and r.accepted == 3
    assert kinds(r) == ["accepted"] * 3 + ["stop"] and r.emitted_ids == ahead[:4]
    assert g.done and g.trace.new_ids == ahead[:4]


def test_without_the_length_limit_a_fully_matched_block_earns_a_bonus(world):
    w, ahead = world, world.ahead
    g = scripted(w.m, w.truth, [ahead[:4]], k=4, max_new_tokens=20)
    r = g.step()
    assert not r.greedy["stop_rule_applied"] and r.greedy["n_matches"] == 4
    assert kinds(r) == ["accepted"] * 4 + ["bonus"] and r.emitted_ids == ahead[:5]
    assert not g.done and not g.trace.finished


def test_max_new_tokens_reached_mid_block_stops_exactly(world):
    # wrong proposals after the first: each round keeps one proposal and corrects the next, and
    # the last round is cut by the limit in the middle of its block
    w, ahead = world, world.ahead
    for n in (1, 2, 3, 5, 7):
        blocks = [ahead[i:i + 1] + [w.wrong(ahead[i + 1])] * 3 for i in range(0, 12, 2)]
        g = scripted(w.m, w.truth, blocks, k=4, max_new_tokens=n)
        trace = g.run()
        assert trace.new_ids == ahead[:n]
        assert [len(r.proposed) for r in trace.rounds] == [min(4, n - 2 * i) for i in range(len(trace.rounds))]
        assert sum(len(r.emitted) for r in trace.rounds) == n
        assert [r.committed_after for r in trace.rounds] == [len(trace.prompt_ids) + min(n, 2 * i + 2)
                                                             for i in range(len(trace.rounds))]


def test_block_size_one_is_classic_one_proposal_per_round(models):
    trace = Generation(models, "Emma could not help thinking that", Settings(drafter="ar", k=1,
                                                                          max_new_tokens=12)).run()
    assert all(len(r.proposed) <= 1 and 1 <= len(r.emitted) <= 2 for r in trace.rounds)


@pytest.mark.parametrize("prompt", ["", "   ", "\n\t "])
def test_empty_prompt_is_refused_with_a_clear_message(models, prompt):
    with pytest.raises(ValueError, match="prompt is empty"):
        Generation(models, prompt, Settings())


def test_over_long_prompt_keeps_its_end_and_says_so(models):
    prompt = "Once upon a time there was a letter. " * 200
    s = Settings(max_new_tokens=16, k=4)
    ids, notices = encode_prompt(models, prompt, s)
    assert len(ids) + s.max_new_tokens + s.k + 1 <= models.max_context
    assert notices and "only its last" in notices[0]
    assert ids[-5:] == models.tokenizer.encode(prompt)[-5:]
    trace = Generation(models, prompt, s).run()
    assert len(trace.new_ids) == 16 or trace.new_ids[-1] == models.eos_id


def test_settings_too_large_for_the_context_are_refused(models):
    with pytest.raises(ValueError, match="context"):
        Generation(models, "Hello", Settings(max_new_tokens=10_000))


@pytest.mark.parametrize("kwargs", [dict(k=0), dict(k=99), dict(max_new_tokens=0),
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


class GivenQ(Drafter):
    """Proposes `tokens` with the q rows it is given (what a drafter reports it drew them from)."""
    name = "given"

    def __init__(self, tokens: list[int], q: torch.Tensor):
        self.tokens, self.q = tokens, q

    def propose(self, committed, k, pick) -> Draft:
        return Draft(tokens=list(self.tokens), q=list(self.q), info={"stages": [{"start": 0, "end": 3,
                                                                                 "logprob_sum": -1.0, "continue": False}]})


@pytest.mark.parametrize("verifier", ["greedy", "sampling", "match"])
def test_a_round_records_what_its_verifier_saw_tiny(verifier):
    # every recorded number of one round against the target's own forward (full, no cache)
    m = tiny_models()
    sampling = SamplingSettings(temperature=1.3, top_k=4)
    q = torch.tensor([[0.1, 0.3, 0.2, 0.2, 0.1, 0.1], [0.05, 0.05, 0.5, 0.2, 0.1, 0.1], [0.2, 0.2, 0.2, 0.2, 0.1, 0.1]])
    tokens = [3, 2, 4]
    g = Generation(m, "c d a", Settings(drafter="lookup", verifier=verifier, k=3, max_new_tokens=8,
                                        sampling=sampling, seed=5))
    g.drafter = GivenQ(tokens, q)
    prompt = list(g.committed)
    r = g.step()
    with torch.no_grad():
        logits = m.target(torch.tensor([prompt + tokens])).logits[0, len(prompt) - 1:]
    p = torch.softmax(logits, -1) if verifier == "greedy" else transform(logits, sampling)
    assert r.proposed == tokens and r.proposed_tokens == [m.token_text[t] for t in tokens]
    assert r.q == pytest.approx([0.2, 0.5, 0.1])
    assert r.p_proposed == pytest.approx([float(p[i][t]) for i, t in enumerate(tokens)], abs=1e-5)
    assert r.target_choice == logits.argmax(-1).tolist()
    assert [[e[0] for e in row] for row in r.q_top] == [torch.topk(row, 5).indices.tolist() for row in q]
    assert [[e[1] for e in row] for row in r.q_top] == [[m.token_text[i] for i in torch.topk(row, 5).indices] for row in q]
    for row, want in zip(r.p_top, p):
        top = torch.topk(want, 5)
        assert [e[0] for e in row] == [i for i, v in zip(top.indices.tolist(), top.values.tolist()) if v > 0]
        assert [e[2] for e in row] == pytest.approx([v for v in top.values.tolist() if v > 0], abs=1e-5)
    if verifier == "sampling":
        for d, pi, qi in zip(r.decisions, r.p_proposed, r.q):
            assert d["ratio"] == pytest.approx(min(1.0, pi / qi)) and 0 <= d["u"] < 1
            assert d["accepted"] == (d["u"] < d["ratio"])
    assert r.accepted == sum(d["accepted"] for d in r.decisions[:r.accepted]) and len(r.emitted) == r.accepted + 1
    assert r.processed_before == len(prompt) - 1 and r.processed_after == len(prompt) + r.accepted
    assert r.committed_before == len(prompt) and r.committed_after == len(prompt) + r.accepted + 1
    assert g.committed == prompt + r.emitted_ids and g.cache.get_seq_length() == len(g.committed) - 1
    assert r.drafter_info["stages"][0]["end"] == 3
    assert min(r.draft_ms, r.verify_ms, r.overhead_ms) >= 0
    assert r.total_ms == pytest.approx(r.draft_ms + r.verify_ms + r.overhead_ms)
    assert g.trace.rounds == [r] and g.trace.finished == g.done


@pytest.mark.parametrize("verifier", ["sampling", "match"])
def test_a_seed_alone_fixes_a_sampled_generation_tiny(verifier):
    # every draw of a round (the drafter's picks, the uniforms, the target's draws, the correction
    # or bonus) comes from the generation's own seeded generator: torch's global one changes nothing
    m = tiny_models()
    s = Settings(drafter="ar", verifier=verifier, k=3, max_new_tokens=12, seed=7,
                 sampling=SamplingSettings(temperature=1.3, top_k=4))
    runs = []
    for global_seed in (1, 2):
        torch.manual_seed(global_seed)
        trace = Generation(m, "a b c a b", s).run()
        runs.append([(r.proposed, r.emitted_ids, [d.get("u", d.get("target_draw")) for d in r.decisions])
                     for r in trace.rounds])
    assert runs[0] == runs[1]
