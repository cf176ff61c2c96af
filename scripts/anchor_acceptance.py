"""Greedy acceptance of a round started at every position of the target's own greedy text, read
teacher-forced. A measurement, not a recipe stage: where a drafter loses, with less noise than the cards.

Run from the repository root after `python -m specviz train corpus` (the prompts come from data/):

    python -m scripts.anchor_acceptance                                 # the shipped models/
    python -m scripts.anchor_acceptance --checkpoint runs/block-mix.pt  # a block run in progress

For each of the cards' held-out prompts (12 a workload, 24 tokens; `specviz.training.cards.heldout_prompts`)
the target writes 48 greedy tokens. At every anchor j of that continuation each drafter drafts k = 4
from the text before j: the block drafters one block from the target's features of positions < j,
the autoregressive drafter its next-token guesses. A round's acceptance is the number of leading
proposals equal to the target's greedy tokens, plus the target's own token. Greedy verification keeps
a proposal only when every one before it was kept, and then the drafter's input is the target's own
text, so each count is exact for a round that starts at j.

It prints one JSON line per workload and drafter: the mean over every anchor (540 a workload, where the
cards' generations run about 300 rounds) and over the anchors where the drafter's own first guess
for token j missed: a round after a correction, as 86-95% of the block drafters' rounds are; and how
often the first guess is the target's token (position 1's acceptance, which every round starts from).

What it leaves out: sampling, other block sizes, DLoop's later stages, speed.
"""
import argparse
import json
from pathlib import Path

import torch

from specviz.generator.drafters.block_model import BlockDrafterModel
from specviz.generator.models import load_embedded
from specviz.training.block import block_mask
from specviz.training.cards import heldout_prompts
from specviz.training.recipe import HELDOUT

from scripts.drafter_profile import load_run

K, NEW_TOKENS = 4, 48


def leading(hits: torch.Tensor) -> torch.Tensor:
    """Tokens a round commits, from its proposals' hits [rounds, k]: the kept prefix plus the target's own.

    >>> leading(torch.tensor([[True, True, False, True], [False, True, True, True], [True] * 4])).tolist()
    [3, 1, 5]
    """
    return hits.long().cumprod(1).sum(1) + 1


@torch.no_grad()
def guesses(models, name: str, ids: torch.Tensor, hidden, anchors: torch.Tensor) -> torch.Tensor:
    """The drafter's k proposals [len(anchors), k] from each anchor, teacher-forced on `ids`."""
    m = models.drafter_models[name]
    if not isinstance(m, BlockDrafterModel):     # autoregressive: its guess at each position, read k ahead
        nxt = m(ids[None]).logits[0].argmax(-1)
        return torch.stack([nxt[anchors + i] for i in range(K)], 1)
    L, M = len(ids), len(anchors)
    feats = torch.cat([hidden[i + 1][0] for i in m.config.target_layers], -1)
    kv = m.context_kv(m.context_features(feats), torch.arange(L))
    pos = (anchors[:, None] + torch.arange(K)[None]).reshape(-1)
    block = torch.full((M, K), m.config.mask_token_id)
    block[:, 0] = ids[anchors]
    h = m.forward_block(block.reshape(-1), pos, kv, block_mask(anchors, L, K, 0))
    logits = m.lm_head(h).float()
    if m.config.markov_rank:     # the token before each proposal is the target's own, as in a kept prefix
        logits = logits + m.markov_bias(ids[pos]).float()
    return logits.argmax(-1).reshape(M, K)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--checkpoint", type=Path,
                    help="a block run's checkpoint (runs/*.pt) or carry (checkpoints/NAME) to read the drafters from")
    ap.add_argument("--drafters", default="ar,dflash,dspark")
    args = ap.parse_args()
    models = load_embedded()
    if args.checkpoint:
        load_run(models, args.checkpoint)
    names = args.drafters.split(",")
    for workload, txt in HELDOUT.items():
        every, after_miss, first = {n: [] for n in names}, {n: [] for n in names}, {n: [] for n in names}
        for prompt in heldout_prompts(txt, models.tokenizer):
            start = torch.tensor(models.tokenizer(prompt)["input_ids"])[None]
            with torch.no_grad():
                ids = models.target.generate(start, max_new_tokens=NEW_TOKENS, do_sample=False, pad_token_id=0)[0]
                hidden = models.target(ids[None], output_hidden_states=True).hidden_states
            anchors = torch.arange(start.size(1) - 1, len(ids) - K)     # the first sits on the prompt's last token
            for n in names:
                hits = guesses(models, n, ids, hidden, anchors) == ids[anchors[:, None] + 1 + torch.arange(K)[None]]
                first_missed = torch.zeros(len(ids), dtype=torch.bool)   # whether the first guess for each token missed
                first_missed[anchors + 1] = ~hits[:, 0]                   # (the prompt's tokens had none)
                tokens = leading(hits)
                every[n] += tokens.tolist()
                first[n] += hits[:, 0].tolist()
                after_miss[n] += tokens[first_missed[anchors]].tolist()
        for n in names:
            print(json.dumps({"workload": workload, "drafter": n,
                              "every anchor": round(sum(every[n]) / len(every[n]), 3),
                              "after a miss": round(sum(after_miss[n]) / len(after_miss[n]), 3),
                              "first guess": round(sum(first[n]) / len(first[n]), 3),
                              "anchors": [len(every[n]), len(after_miss[n])]}), flush=True)


if __name__ == "__main__":
    main()
