"""Calibrate DSpark's confidence head: sequential temperature scaling, one temperature per
block position.

c_k estimates P(position k survives | positions 1..k-1 survived). So T_k is fitted only on
rounds where positions 1..k-1 did survive (that is the "sequential" part), by minimising the
binary cross-entropy of sigmoid(logit / T_k) against whether position k survived. Greedy
verification on held-out prompts supplies the outcomes.

What it leaves out: vector or Platt scaling (one scalar per position is enough here).
"""
import math

from specviz.generator.engine import Generation
from specviz.generator.settings import Settings

TEMPERATURES = [0.25 * 1.1 ** i for i in range(40)]   # 0.25 .. ~10, geometric grid


def outcomes(models, name: str, prompts: list[str], k: int = 8, new_tokens: int = 48) -> list[list[tuple[float, bool]]]:
    """Per block position: (confidence logit, survived) for rounds where all earlier survived."""
    per_pos = [[] for _ in range(k)]
    for p in prompts:
        for r in Generation(models, p, Settings(drafter=name, k=k, max_new_tokens=new_tokens)).run().rounds:
            for i, logit in enumerate(r.drafter_info.get("confidence_logit", [])[:len(r.proposed)]):
                per_pos[i].append((logit, r.accepted > i))
                if r.accepted <= i:
                    break
    return per_pos


def bce(pairs: list[tuple[float, bool]], t: float) -> float:
    total = 0.0
    for logit, y in pairs:
        c = min(max(1 / (1 + math.exp(-logit / t)), 1e-6), 1 - 1e-6)
        total -= math.log(c) if y else math.log(1 - c)
    return total / len(pairs)


def fit_temperatures(per_pos: list[list[tuple[float, bool]]]) -> list[float]:
    """Best grid temperature per position (1.0 where a position has no data).

    >>> fit_temperatures([[(2.0, True)] * 3 + [(2.0, False)]])   # says 0.88, right 3 times in 4
    [1.85]
    """
    return [round(min(TEMPERATURES, key=lambda t: bce(pairs, t)), 2) if pairs else 1.0 for pairs in per_pos]
