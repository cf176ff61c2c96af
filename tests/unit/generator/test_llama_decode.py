"""The drafter's written-out Llama forward gives transformers' logits, through feeds and crops."""
import torch
from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM

from specviz.generator.drafters.autoregressive import TransformersDecoder
from specviz.generator.drafters.llama_decode import LlamaDecoder, supports
from specviz.generator.models import MODELS_DIR


def reference_logits(model, ids):
    """transformers' uncached forward over the whole sequence: next-token logits after it."""
    with torch.no_grad():
        return model(torch.tensor([ids])).logits[0, -1]


def test_logits_equal_transformers_through_prefill_steps_crops_and_a_long_feed(models):
    model = models.drafter_models["ar"]
    assert supports(model)
    d = LlamaDecoder(model)
    ids = models.tokenizer.encode("It is a truth universally acknowledged, that a single man")
    with torch.no_grad():
        torch.testing.assert_close(d.feed(ids), reference_logits(model, ids), atol=1e-4, rtol=1e-4)
        for t in [11, 12, 13]:                       # one token at a time, as a drafter proposes
            ids = ids + [t]
            torch.testing.assert_close(d.feed([t]), reference_logits(model, ids), atol=1e-4, rtol=1e-4)
        d.crop(len(ids) - 2)                         # two proposals rejected
        ids = ids[:-2] + [40, 41]                    # the correction and the next one, fed together
        torch.testing.assert_close(d.feed([40, 41]), reference_logits(model, ids), atol=1e-4, rtol=1e-4)
        assert d.length == len(ids)
        more = list(range(100, 250))                 # past the first cache allocation (64)
        ids += more
        torch.testing.assert_close(d.feed(more), reference_logits(model, ids), atol=1e-4, rtol=1e-4)


def test_a_context_past_max_position_embeddings_still_matches(models):
    # transformers computes rotary angles for any position; the decoder's tables grow the same way
    model = models.drafter_models["ar"]
    ids = [(7 * i) % 4000 + 2 for i in range(model.config.max_position_embeddings + 8)]
    d = LlamaDecoder(model)
    with torch.no_grad():
        d.feed(ids[:-1])
        torch.testing.assert_close(d.feed(ids[-1:]), reference_logits(model, ids), atol=1e-4, rtol=1e-4)


def test_crop_never_grows_the_cache(models):
    d = LlamaDecoder(models.drafter_models["ar"])
    with torch.no_grad():
        d.feed([0, 5, 6])
    d.crop(10)
    assert d.length == 3


def test_the_transformers_decoder_keeps_the_same_contract(models):
    model = models.drafter_models["ar"]
    ours, theirs = LlamaDecoder(model), TransformersDecoder(model)
    with torch.no_grad():
        for step in ([0, 5, 6, 7], [8], [9]):
            torch.testing.assert_close(ours.feed(step), theirs.feed(step), atol=1e-4, rtol=1e-4)
        ours.crop(4), theirs.crop(4)
        assert ours.length == theirs.length == 4
        torch.testing.assert_close(ours.feed([30]), theirs.feed([30]), atol=1e-4, rtol=1e-4)


def test_architectures_it_does_not_reproduce_go_through_transformers():
    small = dict(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                 num_attention_heads=2, num_key_value_heads=1)
    assert supports(LlamaForCausalLM(LlamaConfig(**small)))
    assert not supports(LlamaForCausalLM(LlamaConfig(**small, attention_bias=True)))
    assert not supports(LlamaForCausalLM(LlamaConfig(**small, rope_parameters={"rope_type": "linear", "factor": 2.0,
                                                                               "rope_theta": 10000.0})))
    assert supports(AutoModelForCausalLM.from_pretrained(MODELS_DIR / "drafter-ar"))
