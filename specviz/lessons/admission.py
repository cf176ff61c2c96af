"""Which drafted tokens enter verification: DSpark's scheduler and the Appendix A counterexample.

From the source (How speculative decoding checks ahead, on DSpark): the scheduler prices expected
committed output against a profiled table of target steps per second (SPS) and stops at the first
non-improving extension; Appendix A's two-token vocabulary has target (A, B) = (0.7, 0.3) and
proposal (0.5, 0.5), and a retrospective policy gives P(A) = 0.5 + 0.5 * 0.7 = 0.85, not 0.7.

This app's notation (Algorithm 1, SPS, tau, Theta; neither source uses these names) and its worked
example, which is not in the sources either: `algorithm1` starts every request with its anchor,
B = R slots, tau = R expected tokens, Theta = tau * SPS(B); candidates (r, j) are taken in
descending prefix survival a_{r,j} (this app's order: the source states none), each adding one
slot and a_{r,j} expected tokens, kept while Theta improves, stopping at the first non-improvement. WORKED_EXAMPLE: R = 1, two
drafted tokens, a_1 = 0.8, SPS = (1.0, 0.5, 0.45): Theta0 = 1.0, Theta1 = 0.9; c_2 = 0.9 gives
Theta2 = 1.134 (admit both), c_2 = 0 gives Theta2 = 0.81 (admit none). A search that skips the
stop looks at c_2, which depends on the sampled x_1, so it admits x_1 = A and not x_1 = B.

Policies (for the first output token of one request, two-token vocabulary {A, B}):
  retrospective      search without the stop: admits the drafted x_1 only when x_1 = A
  non_anticipating   Algorithm 1 with the stop: the decision never depends on x_1
  two_steps_earlier  capacity chosen by the search on confidences from two steps earlier (an
                     older, independent draw); the current candidate fills it: independent of x_1

What it leaves out: many requests with real confidence heads (lesson 4 prices those).
"""
import random
from dataclasses import dataclass

from specviz.generator.verify import accept_probability

APPENDIX_A = {"p": (0.7, 0.3), "q": (0.5, 0.5), "p_a_retrospective": 0.85}   # the source's numbers
# this app's worked example: the source gives none of these; chosen so that a search without the
# stop admits x_1 = A (its continuation looks confident) and not x_1 = B
WORKED_EXAMPLE = {"a1": 0.8, "sps": (1.0, 0.5, 0.45), "c2_after_a": 0.9, "c2_after_b": 0.0}
POLICIES = ("retrospective", "non_anticipating", "two_steps_earlier")


@dataclass
class Step:
    request: int        # r, 0-based
    position: int       # j, 1-based position in the draft
    a: float            # prefix survival a_{r,j}
    B: int              # verification tokens after admitting it
    tau: float          # expected committed tokens after admitting it
    theta: float        # tau * SPS(B)
    improved: bool      # Theta beat the best so far
    kept: bool = False  # inside the admitted prefix of the ranking


def survival(confidences: list[float]) -> list[float]:
    """a_j = c_1 * ... * c_j.

    >>> [round(a, 3) for a in survival([0.8, 0.9])]
    [0.8, 0.72]
    """
    out, a = [], 1.0
    for c in confidences:
        a *= c
        out.append(a)
    return out


def algorithm1(confidences: list[list[float]], sps, stop_at_first_non_improvement: bool = True) -> dict:
    """Admit drafted tokens to verification; returns theta0, the steps tried and lengths.

    `sps[B - 1]` is target steps per second at B verification tokens. With the stop, the scan
    ends at the first candidate that does not raise Theta; without it (the biased search), it
    scans every candidate and keeps the best prefix of the ranking.

    >>> r = algorithm1([[0.8, 0.9]], (1.0, 0.5, 0.45), stop_at_first_non_improvement=False)
    >>> [round(s.theta, 3) for s in r["steps"]], r["lengths"]
    ([0.9, 1.134], [2])
    >>> algorithm1([[0.8, 0.9]], (1.0, 0.5, 0.45))["lengths"]
    [0]
    """
    R = len(confidences)
    if R == 0:
        raise ValueError("need at least one request")
    if len(sps) < R:
        raise ValueError(f"the SPS table must cover at least the {R} anchors")
    cands = sorted(((a, r, j + 1) for r, cs in enumerate(confidences) for j, a in enumerate(survival(cs))),
                   key=lambda c: (-c[0], c[1], c[2]))
    B, tau = R, float(R)
    theta0 = best = tau * sps[B - 1]
    steps, best_len = [], 0
    for a, r, j in cands:
        if B + 1 > len(sps):
            break
        B, tau = B + 1, tau + a
        theta = tau * sps[B - 1]
        improved = theta > best * (1 + 1e-9)   # a tie is no improvement, even when rounding says +1 ulp
        steps.append(Step(r, j, a, B, tau, theta, improved))
        if improved:
            best, best_len = theta, len(steps)
        elif stop_at_first_non_improvement:
            break
    lengths = [0] * R
    for s in steps[:best_len]:
        lengths[s.request] = max(lengths[s.request], s.position)
    for i, s in enumerate(steps):
        s.kept = i < best_len
    return {"theta0": theta0, "steps": steps, "lengths": lengths, "best_theta": best}


def _check(p: tuple, q: tuple):
    for name, d in (("p", p), ("q", q)):
        if len(d) != 2 or min(d) < 0 or abs(sum(d) - 1) > 1e-9:
            raise ValueError(f"{name} must be two probabilities that sum to 1, got {d}")
    if q[0] == 0:
        raise ValueError("the proposal never drafts A (q(A) = 0): nothing to admit")


def exact_p_a(policy: str, p=(0.7, 0.3), q=(0.5, 0.5)) -> float:
    """Probability that the first output token is A under a policy, exactly.

    If x_1 is admitted it is verified by speculative sampling: A survives with probability
    min(1, p(A)/q(A)) (a rejected A is replaced from the residual, which holds no A because
    p(A) < q(A) there). If it is not admitted the target draws afresh: A with probability p(A).

    >>> exact_p_a("retrospective")       # 0.5 * 1 + 0.5 * 0.7
    0.85
    >>> exact_p_a("non_anticipating")
    0.7
    """
    _check(p, q)
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}")
    if policy == "retrospective":
        return round(q[0] * accept_probability(p[0], q[0]) + q[1] * p[0], 12)
    return p[0]   # admission independent of x_1: both branches give the target's own p(A)


def retrospective_terms(p=(0.7, 0.3), q=(0.5, 0.5)) -> dict:
    """The terms of the retrospective P(A), in the order the lesson writes them:
    q(A) · min(1, p(A)/q(A)) + q(B) · p(A).

    >>> retrospective_terms()
    {'q_a': 0.5, 'kept': 1.0, 'q_b': 0.5, 'p_a': 0.7, 'p_of_a': 0.85}
    """
    _check(p, q)
    return {"q_a": q[0], "kept": accept_probability(p[0], q[0]), "q_b": q[1], "p_a": p[0],
            "p_of_a": exact_p_a("retrospective", p, q)}


def bias(p_of_a: float, target: float) -> float | None:
    """How far a policy's P(A) sits from the target's p(A); None where it equals it (to 1e-9, the
    rounding exact_p_a leaves), so the page draws no delta for an unbiased policy.

    >>> bias(0.85, 0.7) > 0, bias(0.7, 0.7)
    (True, None)
    """
    return None if abs(p_of_a - target) <= 1e-9 else p_of_a - target


def _admits(policy: str, x1: int, older_x1: int, setup: dict) -> bool:
    """Whether drafted x_1 (0 = A, 1 = B) enters verification under `policy`."""
    def c2(x):
        return setup["c2_after_a"] if x == 0 else setup["c2_after_b"]
    if policy == "non_anticipating":
        return algorithm1([[setup["a1"], c2(x1)]], setup["sps"])["lengths"][0] > 0
    looked_at = x1 if policy == "retrospective" else older_x1
    return algorithm1([[setup["a1"], c2(looked_at)]], setup["sps"], stop_at_first_non_improvement=False)["lengths"][0] > 0


def simulate(policy: str, n: int, p=(0.7, 0.3), q=(0.5, 0.5), seed: int = 0, setup: dict = WORKED_EXAMPLE) -> list[int]:
    """n independent rounds of the Appendix A setup (the scheduler numbers: this app's worked
    example); the first output token of each (0 = A).

    Each round drafts x_1 ~ q (and, for two_steps_earlier, the older draw whose confidences
    set the capacity), asks the policy, then verifies x_1 with the speculative-sampling rule or
    lets the target draw afresh.

    >>> round(running_frequency(simulate("retrospective", 20000, seed=1))[-1], 2)
    0.85
    """
    _check(p, q)
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        x1 = 0 if rng.random() < q[0] else 1
        older = 0 if rng.random() < q[0] else 1
        if _admits(policy, x1, older, setup):
            keep = rng.random() < accept_probability(p[x1], q[x1])
            if keep:
                out.append(x1)
                continue
            resid = [max(0.0, p[i] - q[i]) for i in range(2)]
            out.append(0 if rng.random() < resid[0] / sum(resid) else 1)
        else:
            out.append(0 if rng.random() < p[0] else 1)
    return out


def running_frequency(outcomes: list[int], token: int = 0) -> list[float]:
    """Fraction of outcomes equal to `token` after each draw.

    >>> running_frequency([0, 1, 0, 0])
    [1.0, 0.5, 0.6666666666666666, 0.75]
    """
    freq, hits = [], 0
    for i, o in enumerate(outcomes, 1):
        hits += o == token
        freq.append(hits / i)
    return freq
