"""The CPU's faster weight layouts change the speed of a linear layer, never its result."""
import pytest
import torch
from transformers import AutoModelForCausalLM

from specviz.cpu_linear import LayoutAwareLinear, use_fast_layouts
from specviz.engine import Settings, encode_prompt
from specviz.models import MODELS_DIR
from tests.prompts import PROMPTS


@pytest.mark.parametrize("rows", [1, 2, 5, 33])
@pytest.mark.parametrize("shape", [(384, 1024), (1024, 384), (256, 256), (384, 4096)])
@pytest.mark.parametrize("bias", [False, True])
def test_every_layout_computes_what_nn_linear_computes(rows, shape, bias):
    torch.manual_seed(0)
    layer = torch.nn.Linear(*shape, bias=bias)
    x = torch.randn(rows, shape[0])
    reference = layer(x)
    fast = use_fast_layouts(layer)
    assert type(fast) is LayoutAwareLinear
    torch.testing.assert_close(fast(x), reference, atol=1e-5, rtol=1e-5)
    # a batch of sequences, as transformers passes them: [batch, tokens, features]
    torch.testing.assert_close(fast(x[None]), reference[None], atol=1e-5, rtol=1e-5)


def test_the_embedded_set_uses_them_on_the_cpu(models):
    linears = [m for m in models.target.modules() if isinstance(m, torch.nn.Linear)]
    assert linears and all(type(m) is LayoutAwareLinear for m in linears)
    # the tied LM head (4096 x 384) widens, so it keeps a contiguous copy of its transpose
    head = models.target.get_output_embeddings()
    assert torch.equal(head.weight_t, head.weight.t())


def test_the_target_writes_the_same_greedy_text_with_and_without_them(models):
    plain = AutoModelForCausalLM.from_pretrained(MODELS_DIR / "target", dtype=torch.float32).eval()
    for prompt in PROMPTS:
        ids, _ = encode_prompt(models, prompt, Settings(max_new_tokens=24))
        x = torch.tensor([ids])
        kw = dict(do_sample=False, max_new_tokens=24, eos_token_id=models.eos_id, pad_token_id=models.eos_id)
        assert models.target.generate(x, **kw).tolist() == plain.generate(x, **kw).tolist(), prompt
