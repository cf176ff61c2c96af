"""Rolling the target's cache back with DynamicCache.crop gives exactly what a fresh,
uncached forward over the committed tokens gives."""
import torch
from transformers import DynamicCache

from specviz.generator.engine import Generation
from specviz.generator.settings import Settings


@torch.no_grad()
def test_logits_after_a_crop_equal_a_fresh_forward(models):
    t = models.target
    ids = torch.tensor([models.tokenizer.encode(" It is a truth universally acknowledged, that a single man")])
    cache = DynamicCache()
    t(ids[:, :8], cache=cache, use_cache=True)
    t(ids[:, 8:], cache=cache, use_cache=True)           # speculate 4 more positions ...
    cache.crop(-3)                                        # ... and reject the last three
    assert cache.get_seq_length() == ids.size(1) - 3
    nxt = ids[:, -3:-2]
    after_crop = t(nxt, cache=cache, use_cache=True).logits[0, -1]
    fresh = t(ids[:, :-2]).logits[0, -1]
    torch.testing.assert_close(after_crop, fresh, atol=1e-4, rtol=1e-4)


def test_every_round_leaves_the_newest_committed_token_unprocessed(models):
    g = Generation(models, "Elinor was not inclined to", Settings(drafter="ar", k=4, max_new_tokens=30))
    for r in g.run().rounds:
        assert r.processed_after == r.committed_after - 1
        assert r.committed_after - r.committed_before == len(r.emitted)
    assert g.cache.get_seq_length() == len(g.committed) - 1
    assert g.drafter.decoder.length <= len(g.committed) - 1
