"""Random prompts and settings through the engine: the invariants hold and nothing escapes
except a ValueError with a message (hypothesis)."""
from hypothesis import HealthCheck, given, settings, strategies as st

from specviz.generator.engine import Generation, Settings
from specviz.generator.sampling import SamplingSettings

DRAFTERS = [None, "ar", "lookup", "dflash", "dspark", "dloop"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prompt=st.text(min_size=0, max_size=60), drafter=st.sampled_from(DRAFTERS),
       block=st.integers(1, 8), new=st.integers(1, 12))
def test_greedy_output_equals_plain_decoding_for_any_prompt(models, prompt, drafter, block, new):
    try:
        plain = Generation(models, prompt, Settings(drafter=None, max_new_tokens=new)).run()
    except ValueError as e:
        assert not prompt.strip() and "empty" in str(e)
        return
    g = Generation(models, prompt, Settings(drafter=drafter, block_size=block, max_new_tokens=new))
    trace = g.run()
    assert trace.new_ids == plain.new_ids
    assert g.cache.get_seq_length() == len(g.committed) - 1
    assert 1 <= len(trace.new_ids) <= new


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prompt=st.text(min_size=1, max_size=40).filter(str.strip), drafter=st.sampled_from(DRAFTERS),
       verifier=st.sampled_from(["greedy", "sampling", "match"]), block=st.integers(-2, 40),
       temperature=st.floats(-1, 3), top_k=st.integers(-3, 5000), top_p=st.floats(-0.5, 1.5),
       seed=st.integers(0, 2**31), g=st.floats(-20, 2))
def test_any_settings_give_a_run_or_a_clear_error(models, prompt, drafter, verifier, block, temperature,
                                                  top_k, top_p, seed, g):
    try:
        s = Settings(drafter=drafter, verifier=verifier, block_size=block, max_new_tokens=6, seed=seed,
                     loop_threshold=g, sampling=SamplingSettings(temperature, top_k, top_p))
    except ValueError as e:
        assert "must" in str(e)
        return
    gen = Generation(models, prompt, s)
    trace = gen.run()
    assert 1 <= len(trace.new_ids) <= 6
    assert all(0 <= i < len(models.token_text) for i in trace.new_ids)
    for r in trace.rounds:
        assert r.processed_after == r.committed_after - 1
