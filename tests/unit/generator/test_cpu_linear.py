"""The CPU's faster weight layouts change the speed of a linear layer, never its result."""
import pytest
import torch
from transformers import AutoModelForCausalLM

from specviz.generator.cpu_linear import (LARGEST, LAYOUTS, MAX_ROWS, PROFILED_ROWS, PROFILES, LayoutAwareLinear, fastest,
                                         multiply, prepare, report, take_copies, use_fast_layouts)
from specviz.generator.engine import encode_prompt
from specviz.generator.models import MODELS_DIR
from specviz.generator.settings import Settings
from tests.prompts import PROMPTS


@pytest.mark.parametrize("rows", [1, 2, 5, 33])
@pytest.mark.parametrize("shape", [(384, 1024), (1024, 384), (256, 256), (384, 6144)])
@pytest.mark.parametrize("bias", [False, True])
def test_every_layout_computes_what_nn_linear_computes(rows, shape, bias):
    torch.manual_seed(0)
    layer = torch.nn.Linear(*shape, bias=bias)
    x = torch.randn(rows, shape[0])
    reference = layer(x)
    for layout in range(len(LAYOUTS)):
        if prepare(layout, layer.weight) is None:   # oneDNN, where this torch lacks it
            continue
        torch.testing.assert_close(multiply(layout, x, prepare(layout, layer.weight)),
                                   x @ layer.weight.t(), atol=1e-5, rtol=1e-5)
    fast = use_fast_layouts(layer)
    assert type(fast) is LayoutAwareLinear
    torch.testing.assert_close(fast(x), reference, atol=1e-5, rtol=1e-5)
    # a batch of sequences, as transformers passes them: [batch, tokens, features]
    torch.testing.assert_close(fast(x[None]), reference[None], atol=1e-5, rtol=1e-5)


def test_a_row_count_uses_the_next_profiled_one_up_and_a_prefill_uses_the_weight_as_stored():
    times = {rows: [1.0, 2.0, 3.0] for rows in PROFILED_ROWS}
    times[13] = [3.0, 2.0, 1.0]                    # W·xᵀ wins at 13 rows only
    table = fastest(times)
    assert len(table) == MAX_ROWS + 1
    assert table[9] == 0 and table[10] == table[13] == 2 and table[14] == 0
    layer = use_fast_layouts(torch.nn.Linear(8, 4, bias=False))
    layer.layouts = [2] * (MAX_ROWS + 1)            # no row count up to MAX_ROWS takes F.linear...
    x = torch.randn(MAX_ROWS + 1, 8)                 # ...but a prefill longer than that does
    torch.testing.assert_close(layer(x), x @ layer.weight.t(), atol=1e-5, rtol=1e-5)


def test_a_layer_converted_after_its_layouts_were_chosen_multiplies_its_converted_weight():
    # a host may run the embedded set in bfloat16: the copies are taken again from the new weight,
    # and oneDNN's packed copy, timed in float32 only, gives way to the weight as stored
    torch.manual_seed(0)
    layer = use_fast_layouts(torch.nn.Linear(64, 32, bias=False))
    layer.layouts = [1, 1, 2, 3] * 6 + [3, 3]
    take_copies(layer)
    layer.to(torch.bfloat16)
    assert 3 not in layer.layouts and all(c.dtype == torch.bfloat16 for c in layer.prepared.values())
    for rows in (1, 2, 3, 4):
        x = torch.randn(rows, 64, dtype=torch.bfloat16)
        torch.testing.assert_close(layer(x), x @ layer.weight.t(), atol=2e-2, rtol=2e-2)


def test_the_report_leaves_out_a_layout_this_torch_never_timed(monkeypatch):
    """A torch without oneDNN times its packed layout as infinitely slow (time_layouts). Planted for one shape:
    the report gives the three timed layouts' µs and no entry for the fourth. Catches round(inf), which failed
    lesson 7's page on such a host."""
    layer = use_fast_layouts(torch.nn.Linear(8, 4))
    monkeypatch.setitem(PROFILES, (8, 4), {r: [30.4, 90.0, 45.0, float("inf")] for r in PROFILED_ROWS})
    assert report(layer, rows=(1,)) == [{"layer": "8 → 4", "layers": 1, "rows": 1, "as stored, µs": 30,
                                         "Wᵀ copy, µs": 90, "W·xᵀ, µs": 45, "in use": "as stored"}]


def test_a_large_layer_is_left_as_it_is_not_timed_and_not_copied():
    big = torch.nn.Linear(2048, LARGEST // (2048 * 4) + 1, bias=False)   # just over LARGEST in float32
    assert type(use_fast_layouts(big)) is torch.nn.Linear and not hasattr(big, "prepared")


def test_the_embedded_set_uses_them_on_the_cpu(models):
    for model in [models.target, *{id(m): m for m in models.drafter_models.values() if m is not None}.values()]:
        linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
        assert linears and all(type(m) is LayoutAwareLinear for m in linears)
        for layer in linears:
            assert len(layer.layouts) == MAX_ROWS + 1 and set(layer.layouts) <= set(range(len(LAYOUTS)))
            # a copy of W is kept exactly for the layouts some row count multiplies against
            assert set(layer.prepared) == set(layer.layouts) - {0}
            if 1 in layer.layouts:
                assert torch.equal(layer.prepared[1], layer.weight.t())


@pytest.mark.slow   # forty greedy generations, half of them on plain nn.Linear
def test_the_target_writes_the_same_greedy_text_with_and_without_them(models):
    plain = AutoModelForCausalLM.from_pretrained(MODELS_DIR / "target", dtype=torch.float32).eval()
    for prompt in PROMPTS:
        ids, _ = encode_prompt(models, prompt, Settings(max_new_tokens=24))
        x = torch.tensor([ids])
        kw = dict(do_sample=False, max_new_tokens=24, eos_token_id=models.eos_id, pad_token_id=models.eos_id)
        assert models.target.generate(x, **kw).tolist() == plain.generate(x, **kw).tolist(), prompt
