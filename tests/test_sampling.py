"""Temperature, top-k and top-p: the transforms applied identically to p and q."""
import pytest
import torch

from specviz.generator.sampling import SamplingSettings, transform

LOGITS = torch.tensor([2.0, 1.0, 0.0, -1.0])


def test_temperature_zero_is_one_hot_on_the_argmax():
    assert transform(LOGITS, SamplingSettings(temperature=0)).tolist() == [1, 0, 0, 0]


def test_temperature_one_is_softmax():
    assert transform(LOGITS, SamplingSettings()).tolist() == pytest.approx(torch.softmax(LOGITS, -1).tolist())


def test_top_k_keeps_k_tokens_renormalised():
    p = transform(LOGITS, SamplingSettings(top_k=2))
    assert p[2:].tolist() == [0, 0] and float(p.sum()) == pytest.approx(1)


def test_top_p_keeps_the_smallest_prefix_reaching_p():
    soft = torch.softmax(LOGITS, -1)           # 0.644, 0.237, 0.087, 0.032
    p = transform(LOGITS, SamplingSettings(top_p=0.85))
    assert (p > 0).tolist() == [True, True, False, False]
    assert p[0] / p[1] == pytest.approx(float(soft[0] / soft[1]))


def test_top_p_always_keeps_the_top_token():
    assert transform(LOGITS, SamplingSettings(top_p=0.01)).tolist() == [1, 0, 0, 0]


def test_top_p_smaller_than_float32_can_hold_still_keeps_the_top_token():
    # 2.25e-123 rounds to 0.0 in float32; found by the fuzz test in CI (it gave NaN)
    assert transform(LOGITS, SamplingSettings(top_p=2.25e-123)).tolist() == [1, 0, 0, 0]


@pytest.mark.parametrize("kwargs", [dict(temperature=-1), dict(top_k=-2), dict(top_p=0), dict(top_p=1.5)])
def test_out_of_range_settings_are_refused_with_a_message(kwargs):
    with pytest.raises(ValueError, match="must be"):
        SamplingSettings(**kwargs)


@pytest.mark.parametrize("temperature", [1e-300, 1e-45])
def test_a_temperature_below_float32_range_is_still_a_distribution(temperature):
    # greedy in the limit: all the mass on the argmax, never NaN
    assert transform(LOGITS, SamplingSettings(temperature=temperature)).tolist() == [1, 0, 0, 0]
