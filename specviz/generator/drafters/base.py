"""The drafter interface the engine talks to.

A drafter sees the committed token ids and returns a `Draft`: up to k proposed ids and, for
each, the distribution it was really drawn from (the verifier needs q). It picks tokens
through the `pick` callback the engine hands it, so greedy, temperature and top-k/top-p are
decided in one place (the engine) for every drafter.

Drafters that read the target's hidden states (block drafters) list the layers they need in
`target_layers`; the engine then passes those layers' states for every position the target
has just processed and kept, through `prefill` and `commit`.

Life cycle, per generation:
  prefill(prompt_ids, hidden)        after the target's prefill (hidden: prompt_ids[:-1])
  propose(committed, k, pick)        once a round, before verification
  commit(committed, hidden)          after verification (hidden: the positions just kept)
"""
from dataclasses import dataclass, field
from typing import Callable

import torch

# pick(logits) -> (token id, distribution it was drawn from)
Pick = Callable[[torch.Tensor], tuple[int, torch.Tensor]]


@dataclass
class Draft:
    tokens: list[int] = field(default_factory=list)
    q: list[torch.Tensor] = field(default_factory=list)   # one full distribution per token
    info: dict = field(default_factory=dict)              # drafter-specific, JSON-serialisable


class Drafter:
    name = "drafter"
    target_layers: tuple[int, ...] = ()

    def prefill(self, prompt_ids: list[int], hidden: torch.Tensor | None) -> None:
        pass

    def propose(self, committed: list[int], k: int, pick: Pick) -> Draft:
        raise NotImplementedError

    def commit(self, committed: list[int], hidden: torch.Tensor | None) -> None:
        pass
