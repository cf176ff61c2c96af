"""The verification budget on live requests: DSpark confidences, a profiled SPS table, and
Algorithm 1 (specviz.lessons.admission) deciding how much of each draft the target checks.

Each request runs one real round with the DSpark drafter, so its confidence head's prefix
survival a_{r,j} sits beside how many proposals the target then actually accepted.

SPS(B) here is profiled as one target forward over B tokens of a single sequence: this engine
does not batch requests, so the table stands in for a batched verification of B tokens. The
pricing logic (Theta = tau * SPS(B)) is the same either way.

What it leaves out: executing the allocation (the requests are not re-verified at the admitted
widths); asynchronous two-steps-earlier capacity (lesson 5 shows why it matters).
"""
from specviz.generator.engine import Generation, encode_prompt
from specviz.generator.settings import Settings
from specviz.lessons.admission import algorithm1
from specviz.lessons.glossary import CHECKS_AHEAD
from specviz.lessons.cost import verification_cost_by_width


def draft_requests(models, prompts: list[str], drafter: str = "dspark", k: int = 4, progress=None) -> list:
    """One real round per prompt; the Rounds (drafter_info holds confidence and survival).
    `progress(done, total)` is told before each request is drafted."""
    rounds = []
    for i, p in enumerate(prompts):
        if progress:
            progress(i, len(prompts))
        g = Generation(models, p, Settings.greedy(drafter, k + 1, k=k))
        r = g.step()
        if not r.drafter_info.get("confidence"):
            raise ValueError(f"drafter {drafter!r} has no confidence head")
        rounds.append(r)
    return rounds


def requests_and_profile(models, prompts: list[str], drafter: str, k: int, width: int, repeats: int,
                         drafting=None, profiling=None) -> tuple[list, dict]:
    """What lesson 4 measures in one go: each prompt's drafted round (`draft_requests`) and the target's
    profile from 1 to `width` positions on the first prompt (`sps_table`)."""
    return (draft_requests(models, prompts, drafter, k, progress=drafting),
            sps_table(models, prompts[0], width, repeats=repeats, progress=profiling))


def sps_table(models, prompt: str, max_tokens: int, repeats: int = 5, progress=None) -> dict:
    """Target steps per second at B = 1..max_tokens verification tokens, profiled now:
    {"sps": from the fitted cost line, which Algorithm 1 prices with, so that noise cannot flip
    an admission; "raw": from each width's fastest call, for drawing beside it}.
    `progress(done, total)` is told before each pass over the widths (the first warms up).
    """
    ids, _ = encode_prompt(models, prompt, Settings(max_new_tokens=1))
    rows = verification_cost_by_width(models, list(range(1, max_tokens + 1)), ids, repeats=repeats,
                                      progress=progress)
    return {"sps": [1000.0 / r["fitted_ms"] for r in rows], "raw": [1000.0 / r["ms"] for r in rows]}


def padding(lengths: list[int], k: int) -> dict:
    """Verification slots: ragged (each request its anchor + admitted prefix) vs padded back to the original
    width (its anchor + all k proposals drafted). What padding wastes is every slot the scheduler saved.

    >>> padding([3, 0, 1], 4)
    {'ragged': 7, 'padded': 15, 'wasted': 8}
    >>> padding([1, 1, 0], 4)      # no request admitted its whole draft: the widest admitted would waste 1
    {'ragged': 5, 'padded': 15, 'wasted': 10}
    """
    ragged = sum(n + 1 for n in lengths)
    padded = len(lengths) * (k + 1)
    return {"ragged": ragged, "padded": padded, "wasted": padded - ragged}


def by_load(confidences: list[list[float]], sps: list[float]) -> list[dict]:
    """Algorithm 1 with the first R requests, for R = 1..len(confidences); every draft has k proposals."""
    out = []
    k = max(len(c) for c in confidences)
    for R in range(1, len(confidences) + 1):
        res = algorithm1(confidences[:R], sps)
        out.append({"requests": R, "lengths": res["lengths"], "admitted": sum(res["lengths"]),
                    "theta": res["best_theta"], "k": k, **padding(res["lengths"], k)})
    return out


def load_heading(load: list[dict]) -> str:
    """The prediction's answer as this allocation gives it, from the same numbers as `load_answer`: request 1's
    admitted proposals as load grows fell ("less"), held ("the same") or rose somewhere ("not always less").

    >>> load_heading([{"requests": 1, "lengths": [3]}, {"requests": 2, "lengths": [2, 1]}])
    '**Answer, measured here: less.**'
    >>> load_heading([{"requests": 1, "lengths": [2]}, {"requests": 2, "lengths": [2, 2]}])
    '**Answer, measured here: the same.**'
    >>> load_heading([{"requests": 1, "lengths": [1]}, {"requests": 2, "lengths": [2, 0]}])
    '**Answer, measured here: not always less.**'
    """
    word = {"rose": "not always less", "fell": "less", "held": "the same"}[_moved(load)]
    return f"**Answer, measured here: {word}.**"


def _moved(load: list[dict]) -> str:
    """Request 1's admitted proposals across a by_load result: "rose" at some load, else "fell" overall, else "held"."""
    first = [row["lengths"][0] for row in load]
    if any(b > a for a, b in zip(first, first[1:])):
        return "rose"
    return "fell" if first[-1] < first[0] else "held"


def load_answer(load: list[dict]) -> str:
    """What a by_load result shows about the first request, which every row includes: its admitted
    proposals as the requests sharing the target grow, and whether they fell, held or rose.

    >>> load_answer([{"requests": 1, "lengths": [3]}, {"requests": 2, "lengths": [2, 1]},
    ...              {"requests": 3, "lengths": [1, 1, 0]}])
    'Measured here: request 1 had 3 → 2 → 1 proposals admitted as 1 to 3 requests shared the target: less under load.'
    >>> load_answer([{"requests": 1, "lengths": [2]}, {"requests": 2, "lengths": [2, 2]}])
    'Measured here: request 1 had 2 → 2 proposals admitted as 1 to 2 requests shared the target: the same at every load here.'
    """
    seq = " → ".join(str(row["lengths"][0]) for row in load)
    verdict = {"rose": "not always less: it rose at some load, which a noisy profile can cause",
               "fell": "less under load", "held": "the same at every load here"}[_moved(load)]
    return (f"Measured here: request 1 had {seq} proposals admitted as 1 to {load[-1]['requests']} requests shared "
            f"the target: {verdict}.")


def per_request(load: list[dict]) -> list[float]:
    """Admitted proposals per request at each load of a by_load result: the mean over that row's requests.

    >>> per_request([{"requests": 1, "lengths": [3]}, {"requests": 2, "lengths": [2, 1]}])
    [3.0, 1.5]
    """
    return [sum(row["lengths"]) / len(row["lengths"]) for row in load]


def load_reason(load: list[dict]) -> str:
    """Why the allocation under load came out as it did, from the table itself: the per-request mean admitted as
    the requests grow, and the mechanism that made it fall, or, where it did not fall here, why it can elsewhere.

    >>> print(load_reason([{"requests": 1, "lengths": [3]}, {"requests": 2, "lengths": [2, 1]}]))  # doctest: +ELLIPSIS
    Admitted per request fell here, 3 → 1.5 as 1 to 2 requests shared it: Θ = τ · SPS(B) prices the whole batch...
    >>> print(load_reason([{"requests": 1, "lengths": [1]}, {"requests": 2, "lengths": [2, 2]}]))  # doctest: +ELLIPSIS
    Admitted per request did not fall here (1 → 2 from 1 to 2 requests): it falls only where...
    """
    means = per_request(load)
    if len(means) < 2:   # one row: there is no load to compare, and saying "fell" or "held" would be invented
        return "With one live request there is no load to compare: add requests to see whether each gets less."
    seq = " → ".join(f"{round(x, 2):g}" for x in means)
    span = f"1 to {load[-1]['requests']} requests"
    if means[-1] < means[0]:
        return (f"Admitted per request fell here, {seq} as {span} shared it: Θ = τ · SPS(B) prices the whole "
                "batch, so the added anchors already fill the target's cheap slots and a doubtful proposal buys "
                "less Θ than it costs.")
    # a fixed "usually gives less" would contradict this table; say what can make the other side happen
    return (f"Admitted per request did not fall here ({seq} from {span}): it falls only where the added anchors push "
            "B into widths at which SPS(B) drops faster than a proposal adds τ. A flat SPS table at these widths, "
            "or added requests with confident drafts, keeps it level or raises it.")


def padding_note(load: list[dict]) -> str:
    """What padding back to the original width costs at the heaviest load, counted from its row.

    >>> print(padding_note([{"requests": 2, "lengths": [3, 0], "k": 4, "padded": 10, "wasted": 5}]))
    ... # doctest: +ELLIPSIS
    Padding every shortened request back to the original width, 5 slots (its anchor and all 4 proposals), would spend 5 of 10 slots at 2 requests on nothing: ...
    >>> print(padding_note([{"requests": 2, "lengths": [4, 4], "k": 4, "padded": 10, "wasted": 0}]))
    Padding wasted no slot at 2 requests here: the scheduler admitted every request its whole draft.
    """
    last = load[-1]
    if last["wasted"] == 0:   # nothing to save: claiming padding spends slots would be false for this table
        return (f"Padding wasted no slot at {last['requests']} requests here: the scheduler admitted every request "
                "its whole draft.")
    return (f"Padding every shortened request back to the original width, {last['k'] + 1} slots (its anchor and "
            f"all {last['k']} proposals), would spend {last['wasted']} of {last['padded']} slots at "
            f"{last['requests']} requests on nothing: every slot the scheduler saved, which the last columns count "
            f"(*{CHECKS_AHEAD}*: “Padding every shortened request back to the original width can spend the slots "
            "the scheduler intended to save”).")


MISJUDGED = 1.5   # tokens between what the head expects to survive and what the target kept that a page points out


def head_versus_check(confidences: list[list[float]], accepted: list[int], admitted: list[int]) -> str:
    """The confidence head's expectation beside what the target then kept, request by request: the expected
    survivors of a draft are the sum of its prefix survivals a_j = c_1 · … · c_j. Algorithm 1 admits on the
    expectation alone, so where the two part by MISJUDGED tokens or more, the page says what that cost.

    >>> print(head_versus_check([[0.96, 1.0, 0.99, 1.0], [0.6, 0.5]], [0, 1], [4, 1]))  # doctest: +NORMALIZE_WHITESPACE
    The confidence head is a prediction; the check is what happened. Request 1: the head expected **3.82** of its
    4 proposals to survive (confidences 0.96–1.00), the target kept **0**, and Algorithm 1, which sees only the
    head, admitted **4** of them. A head this sure of a draft the target rejects spends the slots the budget was
    meant to save.
    >>> print(head_versus_check([[0.9, 0.8]], [2], [2]))
    The confidence head is a prediction; the check is what happened. Here they agree within 1.5 tokens for every request (expected against kept: request 1 1.62 against 2).
    """
    said = "The confidence head is a prediction; the check is what happened."
    expected = []
    for c in confidences:
        a, total = 1.0, 0.0
        for x in c:
            a *= x
            total += a
        expected.append(total)
    off = [i for i, (e, n) in enumerate(zip(expected, accepted)) if abs(e - n) >= MISJUDGED]
    if not off:
        pairs = ", ".join(f"request {i + 1} {e:.2f} against {n}" for i, (e, n) in enumerate(zip(expected, accepted)))
        return f"{said} Here they agree within {MISJUDGED:g} tokens for every request (expected against kept: {pairs})."
    parts = []
    for i in off:
        c = confidences[i]
        parts.append(f"Request {i + 1}: the head expected **{expected[i]:.2f}** of its {len(c)} proposals to survive "
                     f"(confidences {min(c):.2f}–{max(c):.2f}), the target kept **{accepted[i]}**, and Algorithm 1, "
                     f"which sees only the head, admitted **{admitted[i]}** of them.")
    over = any(expected[i] > accepted[i] for i in off)
    return (f"{said} " + " ".join(parts) + (" A head this sure of a draft the target rejects spends the slots the "
                                            "budget was meant to save." if over else
                                            " A head this unsure of a draft the target keeps leaves out tokens that "
                                            "would have survived."))
