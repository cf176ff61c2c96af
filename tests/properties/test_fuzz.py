"""Random prompts and settings through the engine (hypothesis).

Valid settings only reach the engine, and every example runs it and checks a property that can
fail: greedy output equals plain decoding token for token, and after every round the target's
cache holds the committed text minus its newest token (a block drafter's context the same).
Invalid settings are drawn separately, one bad field at a time, and must each be refused with a
message naming the limit.
"""
from hypothesis import HealthCheck, given, settings, strategies as st

from specviz.generator.engine import Generation
from specviz.generator.sampling import SamplingSettings
from specviz.generator.settings import MAX_K, Settings

DRAFTERS = ["ar", "lookup", "dflash", "dspark", "dloop"]
PROMPTS = st.text(min_size=1, max_size=40).filter(str.strip)
FIXTURE = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def steps_keeping_the_cache_invariant(g: Generation) -> None:
    """Run g to the end, checking after every round what the target and the drafter have processed."""
    while (r := g.step()) is not None:
        assert r.processed_after == r.committed_after - 1 == g.cache.get_seq_length() == len(g.committed) - 1
        if hasattr(g.drafter, "n_ctx"):
            assert g.drafter.n_ctx == len(g.committed) - 1


@settings(max_examples=12, **FIXTURE)
@given(prompt=PROMPTS, drafter=st.sampled_from(DRAFTERS), block=st.integers(1, 8), new=st.integers(1, 12),
       g=st.floats(-8, 0), stages=st.integers(1, 3))
def test_greedy_output_equals_plain_decoding_for_any_prompt(models, prompt, drafter, block, new, g, stages):
    plain = Generation(models, prompt, Settings(drafter=None, max_new_tokens=new)).run()
    gen = Generation(models, prompt, Settings(drafter=drafter, k=block, max_new_tokens=new,
                                              loop_threshold=g, max_stages=stages))
    steps_keeping_the_cache_invariant(gen)
    assert gen.trace.new_ids == plain.new_ids


@settings(max_examples=10, **FIXTURE)
@given(prompt=PROMPTS, drafter=st.sampled_from(DRAFTERS), verifier=st.sampled_from(["sampling", "match"]),
       block=st.integers(1, 12), temperature=st.floats(0.05, 3), top_k=st.integers(0, 5000),
       top_p=st.floats(0.01, 1), seed=st.integers(0, 2**31), g=st.floats(-20, 0))
def test_any_valid_sampling_settings_run_and_keep_the_cache_invariant(models, prompt, drafter, verifier, block,
                                                                      temperature, top_k, top_p, seed, g):
    s = Settings(drafter=drafter, verifier=verifier, k=block, max_new_tokens=6, seed=seed,
                 loop_threshold=g, sampling=SamplingSettings(temperature, top_k, top_p))
    gen = Generation(models, prompt, s)
    steps_keeping_the_cache_invariant(gen)
    ids = gen.trace.new_ids
    assert 1 <= len(ids) <= 6 and (len(ids) == 6 or ids[-1] == models.eos_id)
    assert all(0 <= i < len(models.token_text) for i in ids)


INVALID = st.one_of(
    st.builds(lambda b: dict(k=b), st.one_of(st.integers(-5, 0), st.integers(MAX_K + 1, 500))),
    st.builds(lambda n: dict(max_new_tokens=n), st.integers(-5, 0)),
    st.builds(lambda v: dict(verifier=v), st.text(max_size=8).filter(lambda v: v not in ("greedy", "sampling", "match"))),
    st.builds(lambda g: dict(loop_threshold=g), st.floats(1e-6, 50)),
    st.builds(lambda m: dict(max_stages=m), st.one_of(st.integers(-3, 0), st.integers(9, 40))),
    st.builds(lambda t: dict(sampling=dict(temperature=t)), st.floats(-5, -1e-6)),
    st.builds(lambda k: dict(sampling=dict(top_k=k)), st.integers(-100, -1)),
    st.builds(lambda p: dict(sampling=dict(top_p=p)), st.one_of(st.floats(-2, 0), st.floats(1.0001, 3))),
)


@settings(max_examples=60, deadline=None)
@given(bad=INVALID)
def test_invalid_settings_are_refused_with_a_message(bad):
    try:
        s = Settings(**{k: v for k, v in bad.items() if k != "sampling"},
                     sampling=SamplingSettings(**bad.get("sampling", {})))
    except ValueError as e:
        assert "must" in str(e)
    else:
        raise AssertionError(f"accepted invalid settings: {s}")
