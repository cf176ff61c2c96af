"""DFlash, DSpark and DLoop drafting with a `BlockDrafterModel`, behind the drafter interface.

Per round (anchor = newest committed token, at position n = number of processed tokens):
  DFlash   one forward over [anchor, mask x (k-1)] -> k base distributions, each position
           picked independently
  DSpark   the same forward, then left to right: logits_i = base_i + W2 W1[x_{i-1}], pick x_i
           from that corrected distribution (the q handed to the verifier); the confidence
           head gives c_i and prefix survival a_i = c_1 ... c_i
  DLoop    after each stage, sum the log-probabilities of that stage's proposals; while the sum
           is >= g and fewer than S stages ran, draft another stage whose anchor is the last
           proposal and whose extra context is the drafter's own final hidden states
           (provisional features: the target has not processed those positions)

The drafter caches the keys/values of context features and adds only the positions the target has
just processed and kept; nothing is re-encoded. `commit` only holds those positions' hidden states:
they are projected into the cache when the drafter next reads it (`ctx_kv`), at the start of the
next round's drafting, as the autoregressive drafter feeds its newly committed tokens then. Both
are the drafter's work for its next proposals, so the engine times them as drafting, not as the
round's bookkeeping.

Read-out: k proposals come from a block of k + s slots, s = the model's `read_from_slot`: 0 for
DSpark's convention (and the embedded drafters), 1 for DFlash's, whose anchor slot predicts
nothing. The engine always asks for the full block: a bidirectional block drafted at another
width drafts other tokens.

What it leaves out: DSpark's scheduler (specviz.lessons.admission, lesson 4), tree drafting.
"""
import torch

from specviz.generator.drafters.base import Draft, Drafter, Pick


class BlockDrafter(Drafter):
    """`name` is dflash, dspark or dloop; DLoop is set by `max_stages` > 1."""

    def __init__(self, model, name: str, loop_threshold: float = -2.0, max_stages: int = 1):
        if loop_threshold > 0:
            raise ValueError(f"the loop threshold g is a log-probability, so g <= 0; got {loop_threshold}")
        if max_stages < 1:
            raise ValueError(f"max stages must be at least 1, got {max_stages}")
        self.model, self.name = model, name
        self.g, self.max_stages = loop_threshold, max_stages
        self.target_layers = tuple(model.config.target_layers)
        self.mask_id = model.config.mask_token_id
        self.markov = bool(model.config.markov_rank)
        self.slot = model.config.read_from_slot   # the block slot proposal 1 is read from
        self._kv = None      # per layer: (keys, values) of every processed position projected so far
        self._n = 0
        self._kept = []      # hidden states the target kept since, not yet projected (see `commit`)

    @property
    def ctx_kv(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Per layer: (keys, values) of every position the target has processed and kept."""
        self._project_kept()
        return self._kv

    @property
    def n_ctx(self) -> int:
        self._project_kept()
        return self._n

    def _project_kept(self):
        kept, self._kept = self._kept, []
        with torch.no_grad():
            for hidden in kept:
                pos = torch.arange(self._n, self._n + len(hidden), device=hidden.device)
                new = self.model.context_kv(self.model.context_features(hidden), pos)
                self._kv = [(torch.cat([k, nk], 1), torch.cat([v, nv], 1)) for (k, v), (nk, nv) in zip(self._kv, new)]
                self._n += len(hidden)

    def prefill(self, prompt_ids, hidden):
        c = self.model.config
        empty = torch.zeros(c.num_kv_heads, 0, c.head_dim, device=self.model.device, dtype=self.model.dtype)
        self._kv, self._n, self._kept = [(empty, empty) for _ in self.model.layers], 0, []
        self.commit(prompt_ids, hidden)

    def commit(self, committed, hidden):
        if hidden is not None and len(hidden):
            self._kept.append(hidden)

    def score(self, committed: list[int], tokens: list[int]) -> dict:
        """Probabilities this drafter gives a forced continuation `tokens` after `committed`.

        marginal[i]   P_i(tokens[i]) from the parallel pass alone: the DFlash view, each
                      position blind to the others; their product is the "product of marginals"
        sequential[i] P_i(tokens[i] | tokens[i-1]) with the Markov head (equals marginal
                      when there is no head)

        >>> d.score(ids, [of, problem])   # doctest: +SKIP
        {'marginal': [0.48, 0.41], 'sequential': [0.48, 0.02], ...}
        """
        with torch.no_grad():
            m, device = self.model, self.model.device
            k = len(tokens)
            pos = torch.arange(self.n_ctx, self.n_ctx + k + self.slot, device=device)
            block = torch.tensor([committed[-1]] + [self.mask_id] * (k + self.slot - 1), device=device)
            base = m.lm_head(m.forward_block(block, pos, self.ctx_kv)[self.slot:]).float()
            prev = torch.tensor([committed[-1]] + tokens[:-1], device=device)
            corrected = base + m.markov_bias(prev).float() if self.markov else base
            idx = torch.arange(k)
            return {"marginal": torch.softmax(base, -1)[idx, tokens].tolist(),
                    "sequential": torch.softmax(corrected, -1)[idx, tokens].tolist(),
                    "marginal_dists": torch.softmax(base, -1), "sequential_dists": torch.softmax(corrected, -1)}

    def propose(self, committed, k, pick: Pick) -> Draft:
        with torch.no_grad():
            assert self.n_ctx == len(committed) - 1, "drafter context out of step with the target"
            m, device = self.model, self.model.device
            draft = Draft(info={"stages": [], "threshold": self.g if self.max_stages > 1 else None,
                                "max_stages": self.max_stages})
            ctx = self.ctx_kv
            anchor, start = committed[-1], self.n_ctx
            conf_logits = []
            while True:
                pos = torch.arange(start, start + k + self.slot, device=device)
                block = torch.tensor([anchor] + [self.mask_id] * (k + self.slot - 1), device=device)
                slots = m.forward_block(block, pos, ctx)
                h = slots[self.slot:]
                base = m.lm_head(h)
                prev = [anchor]   # the token before each proposal: the anchor, then the proposals
                for i in range(k):
                    token, q = pick(base[i] + m.markov_bias(prev[-1]) if self.markov else base[i])
                    draft.tokens.append(token)
                    draft.q.append(q)
                    prev.append(token)
                stage = torch.stack(draft.q[-k:])
                logprob = sum(stage[torch.arange(k), prev[1:]].clamp_min(1e-30).log().tolist())
                if m.config.confidence_head:   # it reads what the loop chose, so it runs once, after it
                    conf_logits += m.confidence_logit(h, torch.tensor(prev[:-1], device=device)).tolist()
                go_on = len(draft.info["stages"]) + 1 < self.max_stages and logprob >= self.g
                draft.info["stages"].append({"start": len(draft.tokens) - k, "end": len(draft.tokens),
                                             "logprob_sum": logprob, "continue": go_on})
                if not go_on:
                    break
                # provisional context: this stage's own hidden states stand in for target features
                # at the positions from its anchor on (the next anchor, its last proposal, sits at start + k)
                prov = m.context_kv(slots[:k], pos[:k])
                ctx = [(torch.cat([ck, pk], 1), torch.cat([cv, pv], 1)) for (ck, cv), (pk, pv) in zip(ctx, prov)]
                anchor, start = draft.tokens[-1], start + k
            if conf_logits:
                confidence = [m.confidence_prob(c, i) for i, c in enumerate(conf_logits)]
                survival, a = [], 1.0
                for c in confidence:
                    a *= c
                    survival.append(a)
                draft.info.update(confidence=confidence, survival=survival, confidence_logit=conf_logits)
            return draft
