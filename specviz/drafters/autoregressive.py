"""Classic two-model drafting: a small causal LM proposes k tokens one after another.

Its cost grows with k (one drafter forward per proposal), which is the seed's point about
autoregressive drafters. The drafter keeps its own KV cache; after verification it is cropped
to the committed prefix, and the next round feeds only the committed tokens it has not seen.
"""
import torch
from transformers import DynamicCache

from specviz.drafters.base import Draft, Drafter, Pick


class AutoregressiveDrafter(Drafter):
    name = "ar"

    def __init__(self, model):
        self.model = model
        self.cache = DynamicCache()

    def _forward(self, ids: list[int]) -> torch.Tensor:
        x = torch.tensor([ids], device=self.model.device)
        return self.model(x, cache=self.cache, use_cache=True, logits_to_keep=1).logits[0, -1]

    def prefill(self, prompt_ids, hidden=None):
        self.cache = DynamicCache()
        if len(prompt_ids) > 1:
            self._forward(prompt_ids[:-1])

    @torch.no_grad()
    def propose(self, committed, k, pick: Pick) -> Draft:
        draft = Draft()
        unseen = committed[self.cache.get_seq_length():]
        for i in range(k):
            logits = self._forward(unseen)
            token, q = pick(logits)
            draft.tokens.append(token)
            draft.q.append(q)
            unseen = [token]
        return draft

    def commit(self, committed, hidden=None):
        # keep cached positions only where they hold committed tokens (at most committed - 1:
        # the newest committed token is fed at the start of the next round)
        extra = self.cache.get_seq_length() - (len(committed) - 1)
        if extra > 0:
            self.cache.crop(-extra)
