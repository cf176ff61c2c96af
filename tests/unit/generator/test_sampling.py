"""Temperature, top-k and top-p: the transforms applied identically to p and q."""
import pytest
import torch

from specviz.generator.sampling import SamplingSettings, transform

LOGITS = torch.tensor([2.0, 1.0, 0.0, -1.0])


def test_temperature_zero_is_one_hot_on_the_argmax():
    assert transform(LOGITS, SamplingSettings(temperature=0)).tolist() == [1, 0, 0, 0]


def test_temperature_one_is_softmax():
    assert transform(LOGITS, SamplingSettings()).tolist() == pytest.approx(torch.softmax(LOGITS, -1).tolist())


@pytest.mark.parametrize("temperature,expected", [
    (2.0, [0.50648, 0.30719, 0.18632]),      # softmax of [1, 0.5, 0]: flatter
    (0.5, [0.86681, 0.11731, 0.01588]),      # softmax of [4, 2, 0]: sharper
])
def test_temperature_divides_the_logits(temperature, expected):
    assert transform(torch.tensor([2.0, 1.0, 0.0]), SamplingSettings(temperature=temperature)).tolist() == \
        pytest.approx(expected, abs=1e-5)


@pytest.mark.parametrize("temperature", [0, 1e-300, 0.7])
def test_each_row_of_a_block_is_transformed_on_its_own(temperature):
    # the engine transforms the k + 1 rows of a round at once; each row must come out as it would
    # alone, whatever the other rows' scale (here the second row's logits are far below the first's)
    rows = torch.tensor([[3.0, 1.0, 0.0], [-9.0, -8.0, -5.0]])
    s = SamplingSettings(temperature=temperature)
    both = transform(rows, s)
    assert both.shape == rows.shape
    assert torch.equal(both, torch.stack([transform(r, s) for r in rows]))
    if temperature < 1e-6:
        assert both.tolist() == [[1, 0, 0], [0, 0, 1]]


def test_top_k_keeps_k_tokens_renormalised():
    p = transform(LOGITS, SamplingSettings(top_k=2))
    assert p[2:].tolist() == [0, 0] and float(p.sum()) == pytest.approx(1)


def test_top_k_of_one_is_the_argmax_alone():
    assert transform(LOGITS, SamplingSettings(top_k=1)).tolist() == [1, 0, 0, 0]


def test_top_p_keeps_the_smallest_prefix_reaching_p():
    soft = torch.softmax(LOGITS, -1)           # 0.644, 0.237, 0.087, 0.032
    p = transform(LOGITS, SamplingSettings(top_p=0.85))
    assert (p > 0).tolist() == [True, True, False, False]
    assert p[0] / p[1] == pytest.approx(float(soft[0] / soft[1]))


def test_top_p_stops_at_the_first_prefix_whose_mass_reaches_it_exactly():
    # two equal tokens, 0.5 each: the first already reaches top_p = 0.5, so the second is dropped
    p = transform(torch.tensor([0.0, 0.0]), SamplingSettings(top_p=0.5))
    assert sorted(p.tolist()) == [0.0, 1.0]


def test_top_p_of_one_keeps_every_token_even_past_float32_rounding():
    # 1 - 9e-14 is 1.0 in float32: the mass before the second token already "reaches" 1, yet
    # top_p = 1 means no cut at all, so the tiny token keeps its probability
    p = transform(torch.tensor([0.0, -30.0]), SamplingSettings(top_p=1.0))
    assert 9.3e-14 < float(p[1]) < 9.4e-14


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
