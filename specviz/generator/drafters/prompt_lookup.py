"""Prompt lookup: propose what followed the last time the current n-gram appeared.

No model at all: find the most recent earlier occurrence of the last `max_ngram` committed
tokens (falling back to shorter n-grams) and copy the tokens that came after it. Proposals are
deterministic, so q is one-hot on each proposal: speculative sampling then accepts x with
probability p(x) and otherwise resamples from p with x removed, which is still exact.
"""
import torch

from specviz.generator.drafters.base import Draft, Drafter


def lookup(ids: list[int], k: int, max_ngram: int = 3, min_ngram: int = 1) -> list[int]:
    """Continuation of the latest earlier match of the longest suffix n-gram.

    >>> lookup([1, 2, 3, 4, 1, 2], k=2)
    [3, 4]
    >>> lookup([1, 2, 3], k=2)
    []
    """
    for n in range(min(max_ngram, len(ids) - 1), min_ngram - 1, -1):
        suffix = ids[-n:]
        for start in range(len(ids) - n - 1, -1, -1):
            if ids[start:start + n] == suffix:
                return ids[start + n:start + n + k]
    return []


class PromptLookupDrafter(Drafter):
    name = "lookup"

    def __init__(self, vocab_size: int):
        self.vocab_size = vocab_size

    def propose(self, committed, k, pick) -> Draft:
        tokens = lookup(committed, k)
        q = [torch.nn.functional.one_hot(torch.tensor(t), self.vocab_size).float() for t in tokens]
        return Draft(tokens=tokens, q=q)
