"""Block-parallel drafters on the shipped models: DFlash, DSpark's heads, DLoop's gate."""
import pytest
import torch

from specviz.generator.engine import Generation
from specviz.generator.sampling import SamplingSettings
from specviz.generator.settings import Settings, from_dflash_block_size
from tests.prompts import PROMPTS

DIALOGUE = 'Anne asked, "Could you open the window?" "Yes,'


def token(models, text: str) -> int:
    ids = models.tokenizer.encode(text)
    assert len(ids) == 1, (text, ids)
    return ids[0]


def scores(models, name: str, prompt: str, words: list[str]) -> dict:
    g = Generation(models, prompt, Settings(drafter=name, k=len(words)))
    return g.drafter.score(g.committed, [token(models, w) for w in words])


def test_dflash_block_size_counts_the_anchor():
    assert from_dflash_block_size(16) == 15 and from_dflash_block_size(2) == 1


def test_block_drafters_borrow_the_targets_embeddings_and_head(models):
    for name in ("dflash", "dspark", "dloop"):
        m = models.drafter_models[name]
        own = {n for n, _ in m.named_parameters()}
        assert not any("embed" in n or "lm_head" in n for n in own)
        assert m.embed.__self__._target_io[0] is models.target.get_input_embeddings()


def test_of_problem_is_likely_for_dflash_and_rare_for_dspark(models):
    """The seed's parallel-drafter failure, on our dialogue: "of course" and "no problem" are
    both good answers. DFlash multiplies independent marginals, so "of problem" gets
    P(of) * P(problem); DSpark's Markov head conditions "problem" on "of"."""
    flash = scores(models, "dflash", DIALOGUE, [" of", " problem"])
    spark = scores(models, "dspark", DIALOGUE, [" of", " problem"])
    p_flash = flash["marginal"][0] * flash["marginal"][1]
    p_spark = spark["sequential"][0] * spark["sequential"][1]
    print(f"P(of problem): DFlash product of marginals {p_flash:.3f}, DSpark sequential {p_spark:.4f}")
    assert p_flash > 0.05
    assert p_spark < p_flash / 5


def test_markov_head_makes_position_k_depend_on_the_token_at_k_minus_1(models):
    after_of = scores(models, "dspark", DIALOGUE, [" of", " course"])["sequential_dists"][1]
    after_no = scores(models, "dspark", DIALOGUE, [" no", " course"])["sequential_dists"][1]
    assert 0.5 * float((after_of - after_no).abs().sum()) > 0.2
    # without the head, position 2 cannot know what position 1 chose
    m_after_of = scores(models, "dspark", DIALOGUE, [" of", " course"])["marginal_dists"][1]
    m_after_no = scores(models, "dspark", DIALOGUE, [" no", " course"])["marginal_dists"][1]
    assert torch.equal(m_after_of, m_after_no)


def test_dspark_hands_the_verifier_the_corrected_distribution(models):
    s = Settings(drafter="dspark", verifier="sampling", k=4, max_new_tokens=8, seed=3,
                 sampling=SamplingSettings(temperature=1.0))
    g = Generation(models, DIALOGUE, s)
    committed = list(g.committed)
    r = g.step()
    again = Generation(models, DIALOGUE, s)
    expected = again.drafter.score(committed, r.proposed)["sequential"]
    assert r.q == pytest.approx(expected, rel=1e-4)


@pytest.fixture(scope="module")
def plain(models):
    return {p: Generation(models, p, Settings(drafter=None, max_new_tokens=24)).run().new_ids for p in PROMPTS}


THRESHOLDS = [-1.0, -4.0, -1e9]


@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_dloop_is_lossless_at_every_threshold(models, plain, threshold):
    # the prompts are dealt out in turn, a third to each threshold: every prompt and every threshold
    # is checked, and random thresholds on random prompts are tests/properties/test_fuzz.py's
    for prompt in PROMPTS[THRESHOLDS.index(threshold)::len(THRESHOLDS)]:
        for name in ("dloop", "dloop-plain"):
            s = Settings(drafter=name, k=4, max_new_tokens=24, loop_threshold=threshold, max_stages=3)
            assert Generation(models, prompt, s).run().new_ids == plain[prompt], (name, threshold, prompt)


@pytest.mark.parametrize("threshold", [-0.5, -3.0, -1e9])
def test_dloop_gate_follows_the_threshold_and_commits_at_most_s_k_plus_1(models, threshold):
    S, k = 3, 4
    s = Settings(drafter="dloop", k=k, max_new_tokens=40, loop_threshold=threshold, max_stages=S)
    trace = Generation(models, PROMPTS[1], s).run()
    for r in trace.rounds:
        stages = r.drafter_info["stages"]
        assert 1 <= len(stages) <= S
        for i, st in enumerate(stages):
            assert st["continue"] == (st["logprob_sum"] >= threshold and i + 1 < S)
        assert len(r.emitted) <= S * k + 1
    if threshold == -1e9:   # an always-open gate runs every stage
        assert all(len(r.drafter_info["stages"]) == S for r in trace.rounds if len(r.proposed) == S * k)


def test_dspark_exposes_confidence_and_prefix_survival(models):
    r = Generation(models, PROMPTS[0], Settings(drafter="dspark", k=6)).step()
    c, a = r.drafter_info["confidence"], r.drafter_info["survival"]
    assert len(c) == len(a) == 6 and all(0 < x < 1 for x in c)
    assert a[0] == pytest.approx(c[0]) and a[2] == pytest.approx(c[0] * c[1] * c[2])
    assert a == sorted(a, reverse=True)
