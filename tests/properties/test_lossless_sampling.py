"""Sampled speculative rounds follow the target's law at every position, on the real models.

Setting: the embedded target and AR drafter, PROMPT, temperature 0.8, top-k 24, top-p 0.95 on
both sides. g_1..g_K is the target's greedy path after PROMPT (K = 4), p_i the target's law
after PROMPT g_1..g_i (K + 1 rows) and q_i the real drafter's law at the same history (K rows).

Reaching every position: a round is rejected early with real drafters, so later positions are
rarely reached. To test position n the drafter here (`Scripted`) proposes the greedy tokens
g_1..g_n first, each with a q just below p at that token (p / q >= 1: accepted with probability
one), then x_{n+1} drawn from the real drafter's q_n. Every round reaches position n with the prefix g_1..g_n, and whatever
the prefix's own law, the token emitted at n (x_{n+1} if accepted, else the correction) must
follow p_n exactly: that is the lossless guarantee conditioned on the prefix. Position K is the
bonus after a whole accepted block.

The check: a chi-square test of the counts of the emitted token over BINS = the top 6 tokens of
p_n and one bin for every other token (df 6), at a false-alarm level of 1e-4 per check
(critical value chi2_6(1 - 1e-4) = 27.86; 11 checks here, so about 0.1 % for the file;
the seeds are fixed, so the outcome is the same on every run).

Power calculation. Against a law p' whose binned total variation from p is delta, the statistic
is noncentral chi-square with lambda = N sum_j (p'_j - p_j)^2 / p_j >= 4 N delta^2 (Cauchy-
Schwarz, sum_j |p'_j - p_j| = 2 delta, sum_j p_j = 1). With N = 16000 draws per position,
delta = 0.03 gives lambda >= 57.6 and P(chi2_6(57.6) > 27.86) = 0.997: a TV error of 0.03 at any
position (of the binned law) fails with probability above 99 %. (At N = 10000 that would be 0.88.)

Two levels. The verifiers themselves: `speculative_sampling` over the whole block and the
correction from `residual`, for 16000 draws per position (p and q are the real models' laws at
the scripted prefix, so no model runs per draw), and `target_draw_matching`, with as many rounds
as it takes for 16000 of them to reach each position. Then the engine's own round,
`Generation.step` on the real target with the scripted drafter, 12000 rounds per position, each
with its own verify call (power 0.957 against a TV error of 0.03, stated where N_ENGINE is); the
target's forward of an input it has already seen is replayed, not recomputed (`Replayed`). The
engine's round is also proven exactly, by enumeration, on tiny models in test_lossless_rounds.py.
"""
import copy
import dataclasses
from types import SimpleNamespace

import pytest
import torch
from transformers import DynamicCache

from specviz.generator.drafters.base import Draft, Drafter
from specviz.generator.engine import Generation
from specviz.generator.sampling import SamplingSettings, transform
from specviz.generator.settings import Settings
from specviz.generator.verify import residual, speculative_sampling, target_draw_matching

PROMPT = "Elinor was not inclined to"
SAMPLING = SamplingSettings(temperature=0.8, top_k=24, top_p=0.95)
K = 4
BINS = 6                 # top tokens of p with a bin of their own; the rest share one
CRITICAL = 27.86         # scipy.stats.chi2.ppf(1 - 1e-4, 6)
N_VERIFIER = 16000


def chi_square(counts: torch.Tensor, law: torch.Tensor, bins: int = BINS) -> float:
    """Pearson's statistic of `counts` (per token id) against `law`, top `bins` tokens of `law`
    one bin each and every other token in one bin (a count where `law` is 0 gives inf)."""
    top = torch.topk(law, bins).indices
    rest = torch.ones_like(law, dtype=torch.bool)
    rest[top] = False
    observed = torch.cat([counts[top], counts[rest].sum()[None]]).double()
    expected = torch.cat([law[top], law[rest].sum()[None]]).double() * counts.sum()
    if bool(((expected == 0) & (observed > 0)).any()):
        return float("inf")
    keep = expected > 0
    return float(((observed[keep] - expected[keep]) ** 2 / expected[keep]).sum())


def tv(a: torch.Tensor, b: torch.Tensor) -> float:
    return 0.5 * float((a - b).abs().sum())


def below_p(p: torch.Tensor, token: int) -> torch.Tensor:
    """A q close to p with q(token) < p(token): the verifier's ratio there is 1."""
    q = p.clone()
    q[token] *= 0.99
    return q / q.sum()


@pytest.fixture(scope="module")
def path(models):
    """(g, p, q): the greedy path g_1..g_K, p at each of its K + 1 histories, q at the first K."""
    ids = [models.eos_id] + models.tokenizer.encode(PROMPT)
    g = []
    with torch.no_grad():
        for _ in range(K):
            g.append(int(models.target(torch.tensor([ids + g])).logits[0, -1].argmax()))
        x = torch.tensor([ids + g])
        p = transform(models.target(x).logits[0, -K - 1:], SAMPLING)
        q = transform(models.drafter_models["ar"](x[:, :-1]).logits[0, -K:], SAMPLING)
    assert models.eos_id not in g
    return g, p, q


def test_the_drafter_is_far_enough_from_p_to_be_rejected(path):
    # the check has something to check: at every position of the round the real drafter's q is
    # more than 0.2 from p in total variation, so it is rejected in a fifth or more of the rounds
    # and the correction carries much of p there
    _, p, q = path
    assert [tv(p[i], q[i]) > 0.2 for i in range(K)] == [True, True, True, True]


@pytest.mark.parametrize("n", range(K))
def test_the_verifier_reproduces_p_at_every_position_of_a_round(path, n):
    g, p, q = path
    gen = torch.Generator().manual_seed(100 + n)
    q_rows = [below_p(p[i], g[i]) for i in range(n)] + [q[n]]
    drawn = torch.multinomial(q[n], N_VERIFIER, replacement=True, generator=gen).tolist()
    uniforms = torch.rand(N_VERIFIER, n + 1, generator=gen).tolist()
    counts, rejected = torch.zeros_like(p[n]), 0
    for x, u in zip(drawn, uniforms):
        accepted, _ = speculative_sampling(g[:n] + [x], p, q_rows, u)
        assert accepted >= n                      # the scripted prefix is always kept
        if accepted == n + 1:
            counts[x] += 1
        else:
            rejected += 1
    corrections = torch.multinomial(residual(p[n], q[n]), rejected, replacement=True, generator=gen)
    counts += torch.bincount(corrections, minlength=len(counts))
    assert chi_square(counts, p[n]) < CRITICAL, (n, chi_square(counts, p[n]))
    # the same counts against the drafter's own law fail: the test can tell q from p
    assert chi_square(counts, q[n]) > CRITICAL


@pytest.mark.parametrize("n", range(K))
def test_target_draw_matching_reproduces_p_at_every_position_of_a_round(path, n):
    # the other sampling verifier: the target draws y_i ~ p_i at each history and the round runs
    # while y_i equals the proposal. Proposing the greedy path g_1..g_K, position n is reached
    # only when y_1..y_n came out as g_1..g_n (probability prod p_i(g_i)), so enough rounds are
    # drawn for N_VERIFIER of them to reach n; the token emitted there (the correction y_n, or
    # the accepted proposal, which then equals y_n) must follow p_n: the same power as above.
    g, p, _ = path
    gen = torch.Generator().manual_seed(200 + n)
    reach = float(torch.prod(torch.stack([p[i][g[i]] for i in range(n)]))) if n else 1.0
    rounds = int(N_VERIFIER / reach) + 1
    draws = torch.stack([torch.multinomial(p[i], rounds, replacement=True, generator=gen) for i in range(K + 1)], 1)
    counts = torch.zeros_like(p[n])
    for y in draws.tolist():
        accepted, _ = target_draw_matching(g, y)
        emitted = y[: accepted + 1]          # the accepted proposals equal their draws; then y_accepted
        if accepted >= n:
            counts[emitted[n]] += 1
        else:                                # stopped before n: at its first draw off the path
            assert y[accepted] != g[accepted] and y[:accepted] == g[:accepted]
    # rounds reaching n: Binomial(rounds, reach), within 6 standard deviations of N_VERIFIER (a
    # verifier that ran past a mismatch would reach n in every round)
    assert abs(float(counts.sum()) - rounds * reach) < 6 * (rounds * reach * (1 - reach)) ** 0.5 + 1
    assert chi_square(counts, p[n]) < CRITICAL, (n, chi_square(counts, p[n]))
    assert chi_square(counts, torch.nn.functional.one_hot(torch.tensor(g[n]), len(p[n])).double() * 0.5
                      + p[n] * 0.5) > CRITICAL   # a law half-way to the greedy token fails


# --- the same law through the engine's own round -----------------------------------------------
# The tests above run the verifier functions on the real models' p and q. Here the whole round runs
# through `Generation.step` on the real target: its verify forward, speculative sampling with the
# engine's uniforms, the correction from the residual or the bonus from p, and the commit. Only the
# drafter is built in the test (`Scripted`, as the edge-case tests build theirs): it forces the
# greedy prefix g_1..g_n as above and then draws x_{n+1} from the real drafter's q_n. Rounds are
# ENGINE_K = 2 proposals long, so positions 0, 1 and the bonus 2 are checked.
#
# The power, as for the verifiers above: N_ENGINE = 12000 rounds per position gives lambda >=
# 4 * 12000 * 0.03^2 = 43.2 and P(chi2_6(43.2) > 27.86) = 0.957, so a binned TV error of 0.03 at
# any of the three positions fails with probability above 95 %; a plumbing fault such as the
# correction from residual(p_n, q_0), TV 0.06 on a two-position example, fails all but surely
# (lambda >= 172.8). Cost: a round is one verify call, and the target's forward runs once per
# distinct input (`Replayed`: at most 49 of them), so a round costs a few milliseconds of sampling
# and bookkeeping, not a forward of about 10 ms; fewer rounds would lose power (8000: 0.71).
ENGINE_K = 2
N_ENGINE = 12000


class Scripted(Drafter):
    """Proposes g_1..g_n with q just below p (accepted for sure), then, if n < k, one token drawn
    from the real drafter's q_n (`gen`), reporting that q."""

    def __init__(self, g, p, q, n: int, gen: torch.Generator):
        self.g, self.p, self.q, self.n, self.gen = g, p, q, n, gen

    def propose(self, committed, k, pick):
        tokens, qs = list(self.g[:self.n]), [below_p(self.p[i], self.g[i]) for i in range(self.n)]
        if self.n < k:
            tokens.append(int(torch.multinomial(self.q[self.n], 1, generator=self.gen)))
            qs.append(self.q[self.n])
        return Draft(tokens, qs)


class Replayed:
    """The real target, whose forward runs once per distinct input and is replayed after that.

    Every fork starts from a copy of the same prefilled cache, so a round's verify forward is fixed
    by its input ids, and the scripted drafter gives few of them (the greedy prefix and one token of
    q_n's support: at most 49 inputs for 36,000 rounds). The first time an input comes, the real
    target runs on the fork's cache, and its logits and the keys and values it appended are kept;
    after that the same keys and values are appended to the fork's cache (`cache.update`, as the
    model's attention layers do) and the same logits returned. So the engine's round still runs end
    to end on the real model's outputs, its own verify call, transform, verifier, correction or bonus,
    commit and crop; only the matrix products of an input already seen are not redone (a forward of
    the same input on the same cache gives the same output).
    `test_a_fork_runs_the_round_a_fresh_generation_runs` holds a replayed fork to a fresh Generation
    on the real target, round by round.
    """

    def __init__(self, target, prefix: int):
        self.target, self.config, self.prefix, self.seen = target, target.config, prefix, {}

    def __call__(self, x, cache, use_cache, output_hidden_states):
        assert use_cache and not output_hidden_states and cache.get_seq_length() == self.prefix
        key = tuple(x[0].tolist())
        if key not in self.seen:
            logits = self.target(x, cache=cache, use_cache=True).logits
            added = [(layer.keys[:, :, self.prefix:], layer.values[:, :, self.prefix:]) for layer in cache.layers]
            self.seen[key] = logits, [(keys.clone(), values.clone()) for keys, values in added]
        else:
            for i, (keys, values) in enumerate(self.seen[key][1]):
                cache.update(keys, values, i)
        return SimpleNamespace(logits=self.seen[key][0].clone(), hidden_states=None)


def fork(base: Generation, drafter: Drafter, gen: torch.Generator) -> Generation:
    """`base` (just prefilled) at the same point with its own cache, committed ids, trace, drafter
    and random generator: a fresh Generation without the prefill forward.
    `test_a_fork_runs_the_round_a_fresh_generation_runs` holds it to that."""
    g = copy.copy(base)
    g.committed, g.trace = list(base.committed), copy.deepcopy(base.trace)
    g.cache = DynamicCache()   # the same keys and values, copied (update concatenates; faster than deepcopy)
    for i, layer in enumerate(base.cache.layers):
        g.cache.update(layer.keys, layer.values, i)
    g.drafter, g.gen = drafter, gen
    return g


@pytest.fixture(scope="module")
def prefilled(models):
    settings = Settings(drafter="lookup", verifier="sampling", k=ENGINE_K, max_new_tokens=8,
                        sampling=SAMPLING)
    g = Generation(models, PROMPT, settings)
    g.m = dataclasses.replace(models, target=Replayed(models.target, g.cache.get_seq_length()))
    return g   # its forks verify on the replayed target (`Replayed`)


def fresh(models, settings: Settings, drafter: Drafter, gen: torch.Generator) -> Generation:
    """A new Generation (with its own prefill) that drafts with `drafter` and draws from `gen`."""
    g = Generation(models, PROMPT, settings)
    g.drafter, g.gen = drafter, gen
    return g


def test_a_fork_runs_the_round_a_fresh_generation_runs(models, path, prefilled):
    g, p, q = path
    rounds = []
    for make in (lambda d, gen: fork(prefilled, d, gen), lambda d, gen: fresh(models, prefilled.s, d, gen)):
        gen = torch.Generator().manual_seed(7)
        rounds.append([make(Scripted(g, p, q, 1, gen), gen).step() for _ in range(20)])
    seen = [[(r.proposed, r.emitted, r.p_top, r.processed_after) for r in rs] for rs in rounds]
    assert seen[0] == seen[1]
    assert len({str(r.emitted) for r in rounds[0]}) > 1       # the 20 rounds drew different tokens
    assert len(prefilled.m.target.seen) < 20                   # and some of the fork's were replayed
    # forking leaves the prefilled generation as it was
    assert prefilled.trace.rounds == [] and prefilled.cache.get_seq_length() == len(prefilled.committed) - 1


@pytest.fixture
def one_thread():
    """One torch thread while the rounds run. With the forward replayed, a round is small-tensor work
    (the transform of three 4096-token rows, a few draws), as fast on one thread as on two; on a CPU
    shared with other work, two threads wait at every kernel's barrier for a busy core
    (specviz.generator.threads), which made the same rounds several times slower."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.slow
@pytest.mark.parametrize("n", range(ENGINE_K + 1))
def test_the_engine_round_reproduces_p_at_every_position(path, prefilled, one_thread, n):
    g, p, q = path
    gen = torch.Generator().manual_seed(300 + n)
    drafter = Scripted(g, p, q, n, gen)
    counts = torch.zeros_like(p[n])
    for _ in range(N_ENGINE):
        r = fork(prefilled, drafter, gen).step()
        assert r.accepted >= n                  # the scripted prefix is always kept
        counts[r.emitted[n]["id"]] += 1
    assert chi_square(counts, p[n]) < CRITICAL, (n, chi_square(counts, p[n]))
    # the counts tell p_n from the law the emitted token would have if the round were wrong there:
    # the drafter's own q_n (no verification), or, at the bonus, half-way to the greedy token
    wrong = q[n] if n < ENGINE_K else 0.5 * p[n] + 0.5 * torch.nn.functional.one_hot(
        torch.tensor(g[n]), len(p[n])).double()
    assert chi_square(counts, wrong) > CRITICAL
