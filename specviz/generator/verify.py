"""The three verifiers: which drafted tokens the target keeps, and what it adds.

Every function here is pure. Random decisions take their uniform draws or samples as
arguments (the engine draws them), so a test can enumerate every outcome exactly.

Inputs, for a block of k proposals x_1..x_k:
  p_rows[i]  target distribution after history H x_1..x_i   (k+1 rows: i = 0..k)
  q_rows[i]  drafter distribution x_{i+1} was drawn from      (k rows)

Each verifier returns (n_accepted, decisions); the engine then emits x_1..x_n plus one
target token: the correction at the first rejection or the bonus after all k.

What it leaves out: tree verification (many candidate branches per round).
"""
import torch


def greedy_matches(proposed: list[int], target_choice: list[int], hit_stop: bool) -> dict:
    """Transformers v4.46 greedy rule: count matches before the first mismatch.

    `target_choice` holds the target's argmax at every candidate history (k+1 entries).
    n_matches = sum(cumsum(mismatch) < 1). If the block hit a stop condition (end-of-text
    among the proposals, or the length limit) and every proposal matched, drop one match so
    the target supplies that last token itself and nothing is generated past the stop.

    >>> greedy_matches([5, 7, 9], [5, 7, 4, 2], hit_stop=False)["n_matches"]
    2
    >>> greedy_matches([5, 7], [5, 7, 3], hit_stop=True)["n_matches"]
    1
    """
    mismatch = [int(x != y) for x, y in zip(proposed, target_choice)]
    cumsum, total = [], 0
    for m in mismatch:
        total += m
        cumsum.append(total)
    n = sum(c < 1 for c in cumsum)
    stop_rule = hit_stop and n == len(proposed) and n > 0
    if stop_rule:
        n -= 1
    return {"mismatch": mismatch, "cumsum": cumsum, "n_matches": n, "stop_rule_applied": stop_rule}


def accept_probability(p_x: float, q_x: float) -> float:
    """Speculative sampling keeps a proposal x ~ q with probability min(1, p(x)/q(x)).

    >>> accept_probability(0.2, 0.4)   # the seed's example: accept half of those proposals
    0.5
    """
    return 1.0 if p_x >= q_x else p_x / q_x


def residual(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """normalize(max(0, p - q)): where a rejected proposal's replacement is drawn from.

    Accepted proposals supply min(p, q) of every token's mass; the residual supplies the rest.
    If p == q nothing is ever rejected; return p so the function is total.

    >>> residual(torch.tensor([0.2, 0.8]), torch.tensor([0.4, 0.6])).tolist()
    [0.0, 1.0]
    """
    r = (p - q).clamp_min(0)
    s = r.sum()
    return r / s if s > 0 else p


def speculative_sampling(proposed: list[int], p_rows, q_rows, uniforms: list[float]) -> tuple[int, list[dict]]:
    """Leviathan/Chen rule: accept x_i while u_i < min(1, p_i(x_i) / q_i(x_i)).

    >>> p = [torch.tensor([0.2, 0.8])] * 2; q = [torch.tensor([0.4, 0.6])]
    >>> speculative_sampling([0], p, q, [0.7])[0]   # ratio 0.5, draw 0.7: rejected
    0
    """
    decisions = []
    for i, x in enumerate(proposed):
        p_x, q_x = float(p_rows[i][x]), float(q_rows[i][x])
        ratio = accept_probability(p_x, q_x)
        ok = uniforms[i] < ratio
        decisions.append({"p": p_x, "q": q_x, "ratio": ratio, "u": uniforms[i], "accepted": ok})
        if not ok:
            return i, decisions
    return len(proposed), decisions


def target_draw_matching(proposed: list[int], draws: list[int]) -> tuple[int, list[dict]]:
    """Sample y_i ~ p_i at each candidate history; continue while y_i equals x_i.

    At the first mismatch the target's own draw y_i is emitted, so every emitted token is a
    target sample either way; only how far the round runs depends on the proposals.

    >>> target_draw_matching([3, 4, 5], [3, 9, 5, 1])[0]
    1
    """
    decisions = []
    for i, x in enumerate(proposed):
        ok = draws[i] == x
        decisions.append({"target_draw": draws[i], "accepted": ok})
        if not ok:
            return i, decisions
    return len(proposed), decisions
