"""Classic two-model drafting: a small causal LM proposes k tokens one after another.

Its cost grows with k (one drafter forward per proposal), which is the seed's point about
autoregressive drafters. The drafter keeps its own KV cache; after verification it is cropped
to the committed prefix, and the next round feeds only the committed tokens it has not seen.
A Llama drafter runs through `LlamaDecoder` (its forward written out, for speed); any other
causal LM through transformers, with the same three calls: feed, crop, length.
"""
import torch
from transformers import DynamicCache

from specviz.generator.drafters.base import Draft, Drafter, Pick
from specviz.generator.drafters.llama_decode import LlamaDecoder, supports


class TransformersDecoder:
    """Any transformers causal LM behind LlamaDecoder's interface (feed, crop, length)."""

    def __init__(self, model):
        self.model, self.cache = model, DynamicCache()

    @property
    def length(self) -> int:
        return self.cache.get_seq_length()

    def crop(self, length: int) -> None:
        if self.length > length:
            self.cache.crop(length - self.length)   # transformers 5: a negative count drops the newest

    def feed(self, ids: list[int]) -> torch.Tensor:
        x = torch.tensor([ids], device=self.model.device)
        return self.model(x, cache=self.cache, use_cache=True, logits_to_keep=1).logits[0, -1]


def decoder_for(model):
    """How the engine runs a drafter model: written out if it is a plain Llama, else transformers."""
    return LlamaDecoder(model) if supports(model) else TransformersDecoder(model)


class AutoregressiveDrafter(Drafter):
    """One generation's drafter (the engine makes a fresh one per generation, then prefills it)."""
    name = "ar"

    def __init__(self, model):
        self.decoder = decoder_for(model)

    def prefill(self, prompt_ids, hidden=None):
        if len(prompt_ids) > 1:
            self.decoder.feed(prompt_ids[:-1])

    def propose(self, committed, k, pick: Pick) -> Draft:
        with torch.no_grad():
            draft = Draft()
            unseen = committed[self.decoder.length:]
            for i in range(k):
                token, q = pick(self.decoder.feed(unseen))
                draft.tokens.append(token)
                draft.q.append(q)
                unseen = [token]
            return draft

    def commit(self, committed, hidden=None):
        # keep cached positions only where they hold committed tokens (at most committed - 1:
        # the newest committed token is fed at the start of the next round)
        self.decoder.crop(len(committed) - 1)
