"""The speculative generator: prefill, then one round per `step()`: draft -> verify -> commit.

Cache bookkeeping (the invariant every round keeps): the target has processed every committed
token except the newest one. A round feeds [newest committed token, x_1..x_k] to the target in
one forward, which yields k+1 next-token distributions (after H, H x_1, ..., H x_1..x_k). After
acceptance the cache is cropped back to the committed prefix minus its newest token, which is
the correction or bonus just emitted: committed, not yet processed.

A round drafts `settings.k` proposals (k; specviz.generator.settings says how it
relates to DFlash's block size).

Plain decoding is the same loop with no drafter (k = 0): one target forward, one token.

Timing: each round marks four moments (start, drafted, verified, recorded) with a
`specviz.generator.clock.Stopwatch`, which uses CUDA events on a GPU, so queued GPU work is timed where
it runs. Prefill is timed separately and is never part of a round.

What it leaves out: batching several requests into one target forward (the scheduler lesson
prices that separately), tree drafts.
"""

import torch
from transformers import DynamicCache

from specviz.generator.clock import Stopwatch
from specviz.generator.drafters.base import Draft
from specviz.generator.models import ModelSet
from specviz.generator.sampling import sample, transform
from specviz.generator.settings import Settings, check_prompt
from specviz.generator.trace import Round, Trace
from specviz.generator.verify import greedy_matches, residual, speculative_sampling, target_draw_matching

TOP = 5  # how many entries of p and q each round records
CHAT_NOTICE = "This target has a chat template: the prompt went in as one user turn, thinking off."


def encode_prompt(models: ModelSet, prompt: str, settings: Settings) -> tuple[list[int], list[str]]:
    """Token ids of the prompt, led by the end-of-text token as a start marker.

    An empty or whitespace-only prompt is an error. A prompt too long for the context is cut
    from the left (the most recent text is what the continuation depends on), with a notice.
    A target with a chat template gets the prompt as one user turn through it instead
    (`ModelSet.chat_ids`); a templated prompt too long for the context is refused.
    """
    check_prompt(prompt)
    room = models.max_context - settings.max_new_tokens - settings.k - 1
    if room < 2:
        raise ValueError(f"max new tokens ({settings.max_new_tokens}) plus block size leave no room "
                         f"for a prompt in the model's context of {models.max_context} tokens.")
    if models.chat:
        ids = models.chat_ids(prompt)
        if len(ids) > room:
            raise ValueError(f"The prompt is {len(ids)} tokens in the chat template; this context of "
                             f"{models.max_context} tokens leaves room for {room}.")
        return ids, [CHAT_NOTICE]
    ids = models.tokenizer.encode(prompt)
    notices = []
    if len(ids) + 1 > room:
        notices.append(f"The prompt was {len(ids)} tokens; only its last {room - 1} were kept "
                       f"(context {models.max_context} tokens, {settings.max_new_tokens} reserved for the answer).")
        ids = ids[-(room - 1):]
    return [models.eos_id] + ids, notices


def _top(probs: torch.Tensor, texts: list[str]) -> list[list]:
    """[[id, text, prob], ...] for the TOP most likely tokens of each row (zeros left out)."""
    vals, idx = torch.topk(probs, TOP, dim=-1)
    return [[[i, texts[i], round(v, 5)] for i, v in zip(ri, rv) if v > 0] for ri, rv in zip(idx.tolist(), vals.tolist())]


class Generation:
    """One prompt being continued. `step()` runs a round and returns its `Round`.

    >>> g = Generation(load_embedded(), "The best way to learn is to", Settings())  # doctest: +SKIP
    >>> r = g.step(); r.accepted, [e["kind"] for e in r.emitted]                    # doctest: +SKIP
    (2, ['accepted', 'accepted', 'correction'])
    """

    def __init__(self, models: ModelSet, prompt: str, settings: Settings):
        self.m, self.s = models, settings
        ids, notices = encode_prompt(models, prompt, settings)
        self.committed = list(ids)
        self.gen = torch.Generator().manual_seed(settings.seed)
        self.drafter = models.drafter(settings.drafter, settings.loop_threshold,
                                      settings.max_stages) if settings.drafter else None
        self.layers = self.drafter.target_layers if self.drafter else ()
        self.cache = DynamicCache()
        self.trace = Trace(prompt=prompt, settings=settings, prompt_ids=list(ids), prefill_ms=0.0,
                           vocab_size=len(models.token_text), top_k=TOP,
                           prompt_tokens=[models.token_text[i] for i in ids], notices=notices)
        with torch.no_grad():
            watch = Stopwatch(models.device)
            watch.mark()
            hidden = self._target(ids[:-1])[1] if len(ids) > 1 else None
            if self.drafter:
                self.drafter.prefill(ids, hidden)
            watch.mark()
        self.trace.prefill_ms = watch.laps()[0]

    @property
    def new_ids(self) -> list[int]:
        return self.committed[len(self.trace.prompt_ids):]

    @property
    def done(self) -> bool:
        return len(self.new_ids) >= self.s.max_new_tokens or (
            len(self.new_ids) > 0 and self.committed[-1] == self.m.eos_id)

    def _target(self, ids: list[int]):
        """Forward `ids` through the target on top of its cache: (logits, hidden or None)."""
        x = torch.tensor([ids], device=self.m.device)
        out = self.m.target(x, cache=self.cache, use_cache=True, output_hidden_states=bool(self.layers))
        hidden = torch.cat([out.hidden_states[i + 1] for i in self.layers], -1)[0] if self.layers else None
        return out.logits[0], hidden

    def peek(self) -> torch.Tensor:
        """The target's logits for the next token; the cache is left as it was."""
        with torch.no_grad():
            logits, _ = self._target([self.committed[-1]])
            self.cache.crop(-1)
            return logits[-1]

    def _pick(self, logits: torch.Tensor) -> tuple[int, torch.Tensor]:
        """How a drafter chooses: argmax under the greedy verifier, else a draw from q."""
        if self.s.verifier == "greedy":
            return int(logits.argmax()), torch.softmax(logits.float(), -1)
        q = transform(logits, self.s.sampling)
        return sample(q, self.gen), q

    def step(self) -> Round | None:
        """Run one round; None if the generation has finished."""
        with torch.no_grad():
            if self.done:
                self.trace.finished = True
                return None
            s, eos = self.s, self.m.eos_id
            remaining = s.max_new_tokens - len(self.new_ids)
            processed_before, committed_before = self.cache.get_seq_length(), len(self.committed)
            watch = Stopwatch(self.m.device)   # marks: start, drafted, verified, recorded
            watch.mark()

            # 1. draft: k proposals per stage (DLoop may run several), then cut at end-of-text and the limit.
            # Always the full block: a bidirectional block drafted narrower would draft other tokens.
            k = s.k if self.drafter else 0
            draft = self.drafter.propose(self.committed, k, self._pick) if k else Draft()
            cut = min(remaining, draft.tokens.index(eos) + 1 if eos in draft.tokens else remaining)
            draft.tokens, draft.q = draft.tokens[:cut], draft.q[:cut]
            x, qs = draft.tokens, draft.q
            watch.mark()

            # 2. verify: one target forward over [newest committed token, x_1..x_k]
            logits, hidden = self._target([self.committed[-1]] + x)
            watch.mark()

            # 3. accept
            choice = logits.argmax(-1).tolist()
            greedy = None
            if s.verifier == "greedy":
                p = torch.softmax(logits.float(), -1)
                hit_stop = eos in x or len(self.new_ids) + len(x) >= s.max_new_tokens
                greedy = greedy_matches(x, choice, hit_stop)
                n, decisions = greedy["n_matches"], [{"accepted": i < greedy["n_matches"]} for i in range(len(x))]
                last = choice[n]
            elif s.verifier == "sampling":
                p = transform(logits, s.sampling)
                qs = [q.to(p.device) for q in qs]
                uniforms = torch.rand(len(x), generator=self.gen).tolist()
                n, decisions = speculative_sampling(x, p, qs, uniforms)
                last = sample(residual(p[n], qs[n]) if n < len(x) else p[n], self.gen)
            else:
                p = transform(logits, s.sampling)
                draws = [sample(p[i], self.gen) for i in range(len(x) + 1)]
                n, decisions = target_draw_matching(x, draws)
                last = draws[n]
            # the stop rule's token is the target's own choice, which equals the proposal it replaces:
            # neither a correction (nothing was wrong) nor a bonus (no proposal was left)
            stopped = bool(greedy and greedy["stop_rule_applied"])
            kinds = ["accepted"] * n + ["stop" if stopped else "bonus" if n == len(x) else "correction"]
            emitted = list(zip(x[:n] + [last], kinds))
            if eos in [t for t, _ in emitted]:   # nothing is generated after end-of-text
                emitted = emitted[:[t for t, _ in emitted].index(eos) + 1]
            emitted = emitted[:remaining]

            # 4. commit, then crop both caches back to the committed prefix minus its newest token
            self.committed += [t for t, _ in emitted]
            extra = self.cache.get_seq_length() - (len(self.committed) - 1)
            if extra > 0:
                self.cache.crop(-extra)
            if self.drafter:
                kept = hidden[:len(self.committed) - 1 - processed_before] if hidden is not None else None
                self.drafter.commit(self.committed, kept)
            texts = self.m.token_text
            rnd = Round(
                index=len(self.trace.rounds), proposed=list(x), proposed_tokens=[texts[t] for t in x],
                q=[float(qs[i][t]) for i, t in enumerate(x)], q_top=_top(torch.stack(qs), texts) if qs else [],
                p_top=_top(p, texts), p_proposed=[float(p[i][t]) for i, t in enumerate(x)], target_choice=choice,
                decisions=decisions, greedy=greedy, accepted=n,
                emitted=[{"id": t, "text": texts[t], "kind": kind} for t, kind in emitted],
                processed_before=processed_before, processed_after=self.cache.get_seq_length(),
                committed_before=committed_before, committed_after=len(self.committed),
                draft_ms=0.0, verify_ms=0.0, overhead_ms=0.0, total_ms=0.0, drafter_info=draft.info)
            watch.mark()
            rnd.draft_ms, rnd.verify_ms, recording_ms = watch.laps()
            rnd.total_ms = rnd.draft_ms + rnd.verify_ms + recording_ms
            rnd.overhead_ms = recording_ms
            self.trace.record(rnd)   # checked against the rounds before it (trace_schema)
            self.trace.finished = self.done
            return rnd

    def run(self) -> Trace:
        while self.step() is not None:
            pass
        return self.trace

    def text(self) -> str:
        return self.m.tokenizer.decode(self.new_ids)


def generate(models: ModelSet, prompt: str, settings: Settings) -> Trace:
    """Run a whole generation and return its trace."""
    return Generation(models, prompt, settings).run()
