"""Lesson 6's live measurements of DLoop: a sweep of the threshold g, and whether the stages
the gate adds earn their cost, priced from the sweep's own runs.

Every setting decodes the same prompt greedily through the same engine, under the protocol of
specviz.lessons.protocol: plain decoding, each drafter with one stage a round (the gate shut),
and each drafter at every threshold, alternated, `repeats` counted runs each after a warm-up.

The price of a stage comes from the same runs, so the sweep and the pricing cannot disagree.
With one stage a round a token costs m1 ms (median ms per token) and a check commits A1
tokens; at a threshold g a round drafts s stages on average, commits Ag tokens and costs
mg·Ag ms. Each stage beyond the first then costs (mg·Ag − m1·A1) / (s − 1) ms (run by run, a
difference of two noisy timings, so its range is shown and a range reaching zero is noise) and adds
(Ag − A1) / (s − 1) tokens, and it pays where those tokens, at m1 ms each, are worth more than
it costs: exactly where mg < m1, where looping made a token cheaper. The verdict is read off the
sweep's speedups, run by run, and says "within this machine's noise" where their ranges overlap.

Its tables and verdicts as a learner reads them are built here too (`sweep_rows`, `price_rows`,
`price_verdict`, `paper_rows`, `regime_rows`, `regime_verdict`); the figure and the stage-by-stage
HTML are specviz.viz.stages'.

What it leaves out: medians over many prompts (the benchmark does that); the sweep runs each
setting a few times on one prompt, which keeps a classroom sweep short, and shows each speedup
with its range so that small differences read as the noise they are.
"""
from collections.abc import Callable

from specviz.generator.engine import Generation
from specviz.generator.settings import Settings
from specviz.lessons.cost import repeated_runs
from specviz.lessons.presets import PRESETS
from specviz.lessons.pricing import Profile, measured_profiles, price, shapes
from specviz.lessons.protocol import beats, ratio_spread, spread


# Where lesson 6 opens: a prompt, k and g at which a second stage adds tokens with the shipped drafters.
# Measured (greedy, 32 new tokens, S = 3 against S = 1, the loop-aware drafter, every preset at k = 2, 3, 4
# and g = -2 to -10): on the prose presets a later stage added tokens only at k = 2 and g <= -4 ("It is a
# truth..." 1.88 -> 2.13 tokens a check), never at k = 4; on the Stack preset at k = 2 it did from g = -2
# (1.68 -> 2.13, 2.2 stages a round), and on "def mean" from g = -2 (2.13 -> 2.29, 2.46 from g = -6). The
# reply preset ("Anne asked...") ends after 9 tokens, so its figures count one round. The sweep then says,
# from its own runs, whether those tokens paid for their stages on this machine (stage_prices).
OPENING = {"prompt": PRESETS[6], "k": 2, "g": -2.0, "sweep": [-2.0, -6.0, -12.0]}


def one_round(models, prompt: str, drafter: str, k: int, g: float, stages: int, max_new_tokens: int):
    """One greedy round of `drafter` in DLoop's stages: up to `stages` stages of k proposals, each
    after the first drafted while the last stage's sum of log q clears g; the target checks them all
    at once. Returns the engine's Round (its drafter_info holds the gate's record).

    A drafter that runs no stages (the autoregressive one) drafts k proposals and records no gate.
    """
    settings = Settings.greedy(drafter, max_new_tokens, k=k, loop_threshold=g, max_stages=stages)
    return Generation(models, prompt, settings).step()


def threshold_sweep(models, prompt: str, drafters: list[str], thresholds: list[float], k: int = 4,
                    max_stages: int = 3, max_new_tokens: int = 32, repeats: int = 3, progress=None,
                    label=str) -> dict:
    """{"baseline": plain decoding's costs, "one_stage": {drafter: row}, "rows": [row per drafter x
    threshold]}, each row {drafter, threshold, stages_per_round, looped, acceptance_length,
    ms_per_token, ms_per_token_spread, runs_ms_per_token, speedup, speedup_spread, shapes, runs_costs}:
    measured under the protocol of
    specviz.lessons.protocol (alternated, `repeats` runs each, median and range). "looped" is the
    share of rounds that drafted more than one stage; a one-stage row has threshold None. "shapes" are
    the median run's rounds as specviz.lessons.pricing prices them, "runs_costs" each run's totals, and
    "baseline_runs" plain decoding's, so the same rounds can be priced in another regime.
    `progress(done, total, name)` is told before each run, its setting named as `setting_name` does
    with `label` (a page passes its plain label for each drafter)."""
    settings = {("plain", None): Settings.greedy(None, max_new_tokens)}
    for d in drafters:
        settings[d, None] = Settings.greedy(d, max_new_tokens, k=k, max_stages=1)
        settings |= {(d, g): Settings.greedy(d, max_new_tokens, k=k, loop_threshold=g, max_stages=max_stages)
                     for g in thresholds}
    runs = repeated_runs(models, prompt, settings, repeats,
                         progress and (lambda done, total, key: progress(done, total, setting_name(*key, label))))
    base = runs.pop(("plain", None))
    out = {"baseline": base["costs"], "baseline_runs": base["runs_costs"], "one_stage": {}, "rows": []}
    for (d, g), run in runs.items():
        rounds = run["trace"].rounds
        speed = ratio_spread(base["runs_ms_per_token"], run["runs_ms_per_token"])
        row = {"drafter": d, "threshold": g, "stages_per_round": run["costs"]["stages_per_round"],
               "looped": sum(len(r.drafter_info.get("stages", [])) > 1 for r in rounds) / len(rounds),
               "acceptance_length": run["costs"]["acceptance_length"], "ms_per_token": run["ms_per_token"].median,
               "ms_per_token_spread": run["ms_per_token"], "runs_ms_per_token": run["runs_ms_per_token"],
               "speedup": speed.median, "speedup_spread": speed,
               "shapes": shapes(rounds), "runs_costs": run["runs_costs"]}
        if g is None:
            out["one_stage"][d] = row
        else:
            out["rows"].append(row)
    return out


def stages_answer(result: dict, label=str) -> str:
    """Lesson 6's answer to "with a lower g, more stages a round or fewer?", read off a `threshold_sweep`:
    per drafter its stages a round from the highest swept g down, and whether they rose ("more"), held
    ("the same", and where they stayed at 1, that the gate never opened) or fell somewhere ("not always
    more"). Greedy repeats commit the same tokens, so a count of stages is exact, not noisy.

    >>> def row(d, g, s): return {"drafter": d, "threshold": g, "stages_per_round": s}
    >>> print(stages_answer({"rows": [row("dloop", -4.0, 1.0), row("dloop", -8.0, 1.83), row("dloop", -12.0, 2.5)]}))
    **Answer, measured here: more.** dloop: 1.00 → 1.83 → 2.50 stages a round at g = -4, -8, -12 (the gate never opened at g = -4).
    >>> print(stages_answer({"rows": [row("dloop", -4.0, 1.0), row("dloop", -8.0, 1.0)]}))
    **Answer, measured here: the same.** dloop: 1.00 → 1.00 stages a round at g = -4, -8 (the gate never opened at g = -4, -8).
    """
    by = _counts_by_drafter(result)
    if all(len(counts) < 2 for counts, _ in by.values()):
        return ("**Answer, measured here: one g only.** A sweep of a single threshold cannot say whether a lower g "
                "drafts more stages: choose two or more.")
    words, said = [], []
    for d, (counts, gs) in by.items():
        words.append(_direction(counts))
        shut = [f"{g:g}" for g, c in zip(gs, counts) if c <= 1.0]
        said.append(f"{label(d)}: {' → '.join(f'{c:.2f}' for c in counts)} stages a round at g = "
                    + ", ".join(f"{g:g}" for g in gs)
                    + (f" (the gate never opened at g = {', '.join(shut)})" if shut else ""))
    word = words[0] if len(set(words)) == 1 else "it depends on the drafter"
    return f"**Answer, measured here: {word}.** " + "; ".join(said) + "."


def _counts_by_drafter(result: dict) -> dict:
    """{drafter: (stages a round, thresholds)}, each from the highest swept g down.

    >>> _counts_by_drafter({"rows": [{"drafter": "d", "threshold": -8.0, "stages_per_round": 2.0},
    ...                              {"drafter": "d", "threshold": -4.0, "stages_per_round": 1.0}]})
    {'d': ([1.0, 2.0], [-4.0, -8.0])}
    """
    by = {}
    for r in sorted(result["rows"], key=lambda r: -r["threshold"]):
        counts, gs = by.setdefault(r["drafter"], ([], []))
        counts.append(r["stages_per_round"])
        gs.append(r["threshold"])
    return by


def _direction(counts: list[float]) -> str:
    """Stages a round from the highest g down: "not always more" if they fell anywhere, else "more" or "the same".

    >>> _direction([1.0, 1.5]), _direction([2.0, 1.8, 2.5]), _direction([1.0, 1.0])
    ('more', 'not always more', 'the same')
    """
    if any(b < a for a, b in zip(counts, counts[1:])):
        return "not always more"
    return "more" if counts[-1] > counts[0] else "the same"


GATE_RULE = ("By the gate's rule a lower g lets a less confident stage through, so on the same context the loop "
             "continues at least as often, up to S stages.")


def stages_reason(result: dict | None, label=str, max_stages: int | None = None) -> str:
    """Why the sweep's stages a round moved as they did, per drafter, from the same counts as `stages_answer`:
    the gate's rule, then what this sweep shows of it (more stages; a gate shut at every g; every round already
    at S stages; a count that held; or one that fell, which the rule allows only across different contexts).
    With no sweep (None) it is the rule alone. Greedy repeats commit the same tokens, so counts carry no noise.

    >>> def row(g, s): return {"drafter": "dloop", "threshold": g, "stages_per_round": s}
    >>> print(stages_reason({"rows": [row(-4.0, 1.0), row(-8.0, 1.0)]}))  # doctest: +ELLIPSIS
    By the gate's rule ... dloop: no stage cleared even g = -8 here, so each round drafted one stage. ...
    >>> print(stages_reason({"rows": [row(-4.0, 2.0), row(-8.0, 1.5)]}))  # doctest: +ELLIPSIS
    By the gate's rule ... dloop: the count fell at a lower g here. The rule holds on the same context, but ...
    """
    if result is None:
        return GATE_RULE + " Whether more stages pay depends on how much of the extra block survives."
    said = [GATE_RULE]
    for d, (counts, gs) in _counts_by_drafter(result).items():
        if len(counts) < 2:
            continue   # one g: stages_answer already says nothing can be compared
        word, who = _direction(counts), label(d)
        if word == "more":
            said.append(f"{who}: so it went here: {counts[0]:.2f} stages a round at g = {gs[0]:g}, "
                        f"{counts[-1]:.2f} at g = {gs[-1]:g}.")
        elif word == "not always more":
            # the rule compares one context; a round that drafts more stages commits other tokens, so the
            # rounds after it start elsewhere in the text, and a few rounds on one prompt can average fewer
            said.append(f"{who}: the count fell at a lower g here. The rule holds on the same context, but a round "
                        "that drafts more stages commits a different number of tokens, so later rounds start "
                        "elsewhere in the text; over a few rounds on one prompt that can lower the mean.")
        elif max(counts) <= 1.0:
            said.append(f"{who}: no stage cleared even g = {gs[-1]:g} here, so each round drafted one stage.")
        elif max_stages is not None and min(counts) >= max_stages:
            said.append(f"{who}: every round already drafted all S = {max_stages} stages at g = {gs[0]:g}, so a "
                        "lower g had no stage left to let through.")
        else:
            said.append(f"{who}: the count held at {counts[0]:.2f}: no stage's confidence fell between the swept g.")
    return " ".join(said) + " Whether more stages pay depends on how much of the extra block survives."


def setting_name(drafter: str, threshold: float | None, label=str) -> str:
    """How a progress bar names a sweep setting, the drafter as `label(drafter)`.

    >>> setting_name("plain", None), setting_name("dloop", None), setting_name("dloop", -8.0, str.upper)
    ('plain decoding', 'dloop, one stage a round', 'DLOOP, g = -8')
    """
    if drafter == "plain":
        return "plain decoding"
    return f"{label(drafter)}, one stage a round" if threshold is None else f"{label(drafter)}, g = {threshold:g}"


def stage_prices(result: dict) -> list[dict]:
    """Per row of `threshold_sweep`, what each stage beyond the first cost and added, priced from the
    sweep's own runs (see the module docstring): {drafter, threshold, looped, extra_stages,
    stage_ms, stage_ms_spread, stage_in_noise, tokens_added, token_ms, tokens_needed, verdict}.
    A stage's cost is a difference of two noisy timings, so it is priced run by run (the row's i-th
    run against the one-stage i-th run, alternated together): "stage_ms" is the median and
    "stage_in_noise" says whether the range reaches zero or below, where the cost is no finding
    (a stage never really costs less than nothing). The verdict compares the row's
    speedup with the drafter's one-stage speedup (specviz.lessons.protocol.beats): "pays",
    "does not pay", "within this machine's noise", or "gate never opened" (then it is the
    one-stage round, and the other fields are None).

    >>> from specviz.lessons.protocol import spread
    >>> one = {"acceptance_length": 2.0, "ms_per_token": 10.0, "runs_ms_per_token": [9.9, 10.0, 10.1],
    ...        "speedup_spread": spread([1.0, 1.1, 1.2])}
    >>> row = {"drafter": "dloop", "threshold": -8.0, "looped": 0.5, "stages_per_round": 1.5, "acceptance_length": 2.5,
    ...        "ms_per_token": 9.0, "runs_ms_per_token": [8.8, 9.0, 9.2], "speedup_spread": spread([1.3, 1.4, 1.5])}
    >>> p = stage_prices({"one_stage": {"dloop": one}, "rows": [row]})[0]
    >>> round(p["stage_ms"], 6), p["stage_in_noise"], p["tokens_added"], round(p["tokens_needed"], 6), p["verdict"]
    (5.0, False, 1.0, 0.5, 'pays')
    >>> row["runs_ms_per_token"] = [7.0, 9.0, 10.0]        # one run 3 ms cheaper a token: the range reaches zero
    >>> stage_prices({"one_stage": {"dloop": one}, "rows": [row]})[0]["stage_in_noise"]
    True
    """
    out = []
    for row in result["rows"]:
        one = result["one_stage"][row["drafter"]]
        extra = row["stages_per_round"] - 1
        price = {"drafter": row["drafter"], "threshold": row["threshold"], "looped": row["looped"],
                 "extra_stages": extra, "token_ms": one["ms_per_token"], "stage_ms": None, "stage_ms_spread": None,
                 "stage_in_noise": None, "tokens_added": None, "tokens_needed": None, "verdict": "gate never opened"}
        if extra > 0:
            stage = spread([(looped * row["acceptance_length"] - single * one["acceptance_length"]) / extra
                            for looped, single in zip(row["runs_ms_per_token"], one["runs_ms_per_token"])])
            compared = beats(row["speedup_spread"], one["speedup_spread"])
            price.update(stage_ms=stage.median, stage_ms_spread=stage, stage_in_noise=stage.low <= 0,
                         tokens_added=(row["acceptance_length"] - one["acceptance_length"]) / extra,
                         tokens_needed=stage.median / one["ms_per_token"],
                         verdict={"above": "pays", "below": "does not pay"}.get(compared, compared))
        out.append(price)
    return out


def training_note(result: dict, threshold: float, aware: str = "dloop", plain: str = "dloop-plain") -> str:
    """Lesson 6's one statement on loop-aware training at `threshold`: whether this sweep reproduces
    the paper's ordering (more tokens a check, and faster), and where the tokens a check that the
    training changed came from: the first stage (each drafter run one stage a round) or the stages
    the gate added (tokens a check at g beyond that). Every token figure is per check, so no two
    figures in it use different units. Greedy repeats commit the same tokens, so these carry no
    timing noise; a part that moved by less than 0.005 tokens did not move. The speed comparison
    is read off the runs' spreads (specviz.lessons.protocol.beats).

    The two drafters are not the paper's pair: the loop-aware one is the other's weights trained
    further with loop-aware steps, so it also had more training, and the statement says so.

    >>> from specviz.lessons.protocol import spread
    >>> def row(d, g, acc, s): return {"drafter": d, "threshold": g, "acceptance_length": acc, "speedup_spread": spread(s)}
    >>> res = {"one_stage": {"dloop": row("dloop", None, 2.67, [1.2]), "dloop-plain": row("dloop-plain", None, 2.13, [1.2])},
    ...        "rows": [row("dloop", -8.0, 2.83, [0.8, 0.9]), row("dloop-plain", -8.0, 2.33, [0.85, 0.95])]}
    >>> print(training_note(res, -8.0))  # doctest: +NORMALIZE_WHITESPACE
    At g = -8 loop-aware training gave more tokens a check, as in the paper, but not more speed: a check
    committed 2.83 tokens with the training against 2.33 without, and the speed difference is within this
    machine's noise. The gain came from the first stage (2.67 against 2.13 tokens a check with one stage a
    round), not from the stages the gate added (0.16 tokens a check with the training, 0.20 without). The
    loop-aware drafter is the other's weights trained further with loop-aware steps, so it also had more
    training: this is not the paper's comparison, where only loop-aware training differs.
    """
    rows = {(r["drafter"], r["threshold"]): r for r in result["rows"]}
    first = (result["one_stage"][aware]["acceptance_length"], result["one_stage"][plain]["acceptance_length"])
    total = (rows[aware, threshold]["acceptance_length"], rows[plain, threshold]["acceptance_length"])
    later = (total[0] - first[0], total[1] - first[1])
    speed = beats(rows[aware, threshold]["speedup_spread"], rows[plain, threshold]["speedup_spread"])
    gap, gap_first, gap_later = total[0] - total[1], first[0] - first[1], later[0] - later[1]
    if gap >= 0.005 and speed == "above":
        head = "this sweep reproduces the paper's ordering"
    elif gap >= 0.005:
        head = "loop-aware training gave more tokens a check, as in the paper, but not more speed"
    else:
        head = "this small model does not reproduce the paper's ordering"
    pace = ("the speed difference is within this machine's noise" if speed == "within this machine's noise" else
            f"its speedup was {speed} the other's, beyond the range of the runs")
    said = (f"At g = {threshold:g} {head}: a check committed {total[0]:.2f} tokens with the training against "
            f"{total[1]:.2f} without, and {pace}.")
    firsts = f"the first stage ({first[0]:.2f} against {first[1]:.2f} tokens a check with one stage a round)"
    laters = f"the stages the gate added ({later[0]:.2f} tokens a check with the training, {later[1]:.2f} without)"
    if abs(gap) < 0.005:
        said += f" Loop-aware training changed nothing here: {firsts}; {laters}."
    else:
        word = "gain" if gap > 0 else "loss"
        # the part that moved in the direction of the whole difference, and moved most that way
        parts = sorted([(gap_first, firsts), (gap_later, laters)], key=lambda p: p[0] * gap, reverse=True)
        said += f" The {word} came from {parts[0][1]}, "
        said += (f"not from {parts[1][1]}." if parts[1][0] * gap <= 0.005 * abs(gap)
                 else f"and also from {parts[1][1]}.")
    return (said + " The loop-aware drafter is the other's weights trained further with loop-aware steps, so it "
            "also had more training: this is not the paper's comparison, where only loop-aware training differs.")


def bonus_bound(stages: int, k: int) -> dict:
    """Most tokens one check of S stages of k proposals can commit, against S separate checks.

    >>> bonus_bound(3, 4)
    {'one_check': 13, 'separate_checks': 15, 'target_passes_saved': 2}
    """
    if stages < 1 or k < 1:
        raise ValueError("need at least one stage of at least one proposal")
    return {"one_check": stages * k + 1, "separate_checks": stages * (k + 1), "target_passes_saved": stages - 1}


def _stage_priced(one_shapes, row_shapes, extra: float, profile: Profile) -> tuple[float, bool]:
    """(tokens a later stage must add to pay for itself, whether the looping rounds' token is cheaper),
    both rounds priced under `profile`: a stage costs the longer round spread over the extra stages,
    and it needs that cost's worth of one-stage tokens. It pays exactly where the token is cheaper."""
    one, looped = price(one_shapes, profile), price(row_shapes, profile)
    stage_ms = (looped.total_ms / looped.rounds - one.total_ms / one.rounds) / extra
    return stage_ms / one.ms_per_token, looped.ms_per_token < one.ms_per_token


def stage_in_regimes(result: dict, there: Profile, here_name: str) -> list[dict]:
    """Per row of `threshold_sweep`: DLoop's later stage priced from the sweep's own rounds in two
    regimes: on this machine (a profile per run, measured from plain decoding's runs and the
    drafter's one-stage runs, specviz.lessons.pricing.measured_profiles) and under `there`.
    {drafter, threshold, tokens_added, here_needed (Spread over the runs), here, there_needed, there};
    "here" and "there" are "pays", "does not pay", "within this machine's noise" (here only: the runs
    disagree) or "gate never opened" (then the rest is None). tokens_added is what each extra stage
    added (greedy repeats commit the same tokens, so it is exact); a stage pays exactly where it adds
    more than it needs.

    >>> from specviz.lessons.pricing import LARGE_GPU
    >>> plain = [{"rounds": 10, "mean_round_ms": 10.0, "verify_ms": 90.0}]
    >>> one = {"acceptance_length": 2.0, "shapes": [(5, 1, 2)] * 5,
    ...        "runs_costs": [{"rounds": 5, "verify_ms": 65.0, "draft_ms": 30.0, "overhead_ms": 5.0}]}
    >>> row = {"drafter": "dloop", "threshold": -8.0, "stages_per_round": 2.0, "acceptance_length": 2.75,
    ...        "shapes": [(9, 2, 3)] * 3 + [(9, 2, 2)]}
    >>> p = stage_in_regimes({"baseline_runs": plain, "one_stage": {"dloop": one}, "rows": [row]}, LARGE_GPU, "here")[0]
    >>> p["tokens_added"], p["here_needed"].median, p["here"], p["there_needed"], p["there"]
    (0.75, 1.0, 'does not pay', 0.5714285714285714, 'pays')
    """
    out = []
    for row in result["rows"]:
        one = result["one_stage"][row["drafter"]]
        extra = row["stages_per_round"] - 1
        p = {"drafter": row["drafter"], "threshold": row["threshold"], "tokens_added": None,
             "here_needed": None, "here": "gate never opened", "there_needed": None, "there": "gate never opened"}
        if extra > 0:
            here = measured_profiles(result["baseline_runs"], one["runs_costs"], one["shapes"], here_name)
            runs = [_stage_priced(one["shapes"], row["shapes"], extra, prof) for prof in here]
            needed, pays = _stage_priced(one["shapes"], row["shapes"], extra, there)
            verdicts = {paid for _, paid in runs}
            p.update(tokens_added=(row["acceptance_length"] - one["acceptance_length"]) / extra,
                     here_needed=spread([n for n, _ in runs]),
                     here="within this machine's noise" if len(verdicts) > 1 else "pays" if True in verdicts
                     else "does not pay",
                     there_needed=needed, there="pays" if pays else "does not pay")
        out.append(p)
    return out


SHORT = {"pays": "pays", "does not pay": "no", "within this machine's noise": "noise", "gate never opened": "–"}


def _tokens(x: float) -> str:
    """A positive need in tokens to two decimals, never rounded down to a free "0.00".

    >>> _tokens(0.654), _tokens(0.004)
    ('0.65', '<0.01')
    """
    return f"{x:.2f}" if round(x, 2) > 0 else "<0.01"


def regime_rows(prices: list[dict], drafter: str) -> list[dict]:
    """`drafter`'s rows of `stage_in_regimes` as a narrow table (one per drafter: six short columns, each
    priced one naming its profile, fit a projector's content column): per g, the tokens a later stage added and, in each regime, the tokens it
    needs to pay and whether it does ("noise" where this machine's runs disagree, and for a need whose runs
    reach zero: a stage never costs less than nothing, so such a range is noise, not a finding). Both are priced.

    >>> p = {"drafter": "d", "threshold": -8.0, "tokens_added": 0.5, "here_needed": spread([0.9, 1.1]),
    ...      "here": "does not pay", "there_needed": 0.3, "there": "pays"}
    >>> regime_rows([p, dict(p, drafter="e")], "d")   # doctest: +NORMALIZE_WHITESPACE
    [{'g': '-8', 'a stage adds': '0.50', 'needs, priced, this machine': '0.90–1.10', 'pays, priced, this machine': 'no',
      'needs, priced, large target': '0.30', 'pays, priced, large target': 'pays'}]
    """
    out = []
    for p in prices:
        if p["drafter"] != drafter:
            continue
        opened = p["tokens_added"] is not None
        need = p["here_needed"]
        out.append({"g": f"{p['threshold']:g}", "a stage adds": f"{p['tokens_added']:.2f}" if opened else "–",
                    "needs, priced, this machine": ("–" if not opened else "noise" if need.low <= 0   # never below nothing
                                                    else _tokens(need.median) if _tokens(need.low) == _tokens(need.high)
                                                    else f"{_tokens(need.low)}–{_tokens(need.high)}"),
                    "pays, priced, this machine": SHORT[p["here"]],
                    "needs, priced, large target": f"{p['there_needed']:.2f}" if opened else "–",
                    "pays, priced, large target": SHORT[p["there"]]})
    return out


def pays_from(prices: list[dict], drafter: str, regime: str) -> float | None:
    """The highest swept g (the first, coming down from 0, where the gate lets more stages through) at
    which `drafter`'s later stage pays in `regime` ("here" or "there"); None where it pays at none.

    >>> prices = [{"drafter": "d", "threshold": g, "here": v} for g, v in [(-4.0, "does not pay"), (-8.0, "pays"),
    ...                                                                  (-12.0, "pays")]]
    >>> pays_from(prices, "d", "here"), pays_from(prices, "e", "here")
    (-8.0, None)
    """
    paid = [p["threshold"] for p in prices if p["drafter"] == drafter and p[regime] == "pays"]
    return max(paid) if paid else None


def regime_verdict(prices: list[dict], drafter: str, name: str, here_name: str, there_name: str) -> str:
    """One sentence for `drafter` (called `name`): from which g a later stage pays for itself on this
    machine and on the other profile, with what it adds and needs there, all from `stage_in_regimes`.

    >>> def p(g, added, here_needed, here, there_needed, there):
    ...     return {"drafter": "d", "threshold": g, "tokens_added": added, "here_needed": spread([here_needed]),
    ...             "here": here, "there_needed": there_needed, "there": there}
    >>> prices = [p(-4.0, 0.2, 0.9, "does not pay", 0.3, "does not pay"), p(-8.0, 0.5, 0.9, "does not pay", 0.3, "pays")]
    >>> print(regime_verdict(prices, "d", "DLoop", "this machine", "the large-target profile"))
    ... # doctest: +NORMALIZE_WHITESPACE
    DLoop: on this machine a later stage pays at none of the swept g (at g = -8 it adds 0.50 tokens and needs
    0.90); priced on the large-target profile it starts to pay at g = -8, where it adds 0.50 tokens and needs 0.30.
    """
    mine = [q for q in prices if q["drafter"] == drafter and q["tokens_added"] is not None]
    if not mine:
        return f"{name}: the gate never opened at the swept g, so no later stage was drafted to price."

    def part(regime: str, where: str) -> str:
        need = (lambda q: q["here_needed"].median) if regime == "here" else (lambda q: q["there_needed"])
        g = pays_from(mine, drafter, regime)
        if g is not None:
            q = next(q for q in mine if q["threshold"] == g)
            return (f"{where} it starts to pay at g = {g:g}, where it adds {q['tokens_added']:.2f} tokens and needs "
                    f"{need(q):.2f}")
        noisy = [q for q in mine if q[regime] == "within this machine's noise"]
        if len(noisy) == len(mine):
            return (f"{where} whether a later stage pays is within this machine's noise at every swept g (its runs "
                    "disagree)")
        q = min((q for q in mine if q not in noisy), key=lambda q: need(q) - q["tokens_added"])   # closest to paying
        disagree = ", ".join(f"{n['threshold']:g}" for n in noisy)
        return (f"{where} a later stage pays at none of the swept g (at g = {q['threshold']:g} it adds "
                f"{q['tokens_added']:.2f} tokens and needs {need(q):.2f})"
                + (f"; at g = {disagree} its runs disagree, within this machine's noise" if noisy else ""))

    return f"{name}: {part('here', f'on {here_name}')}; {part('there', f'priced on {there_name}')}."


# --- the sweep's tables and verdicts as a learner reads them --------------------------------------
def sweep_rows(result: dict, label: Callable[[str], str]) -> list[dict]:
    """The sweep as a learner reads it: one-stage rows first, then each threshold, each drafter by `label`.

    >>> from specviz.lessons.protocol import spread
    >>> row = {"drafter": "dloop", "threshold": -8.0, "stages_per_round": 2.125, "looped": 0.67,
    ...        "acceptance_length": 2.5, "speedup_spread": spread([0.9, 1.0, 1.2])}
    >>> sweep_rows({"one_stage": {}, "rows": [row]}, {"dloop": "DLoop"}.get)[0]
    {'drafter': 'DLoop', 'g': '-8', 'stages per round': '2.12', 'rounds that drafted again': '67%', \
'tokens per check': '2.50', 'speedup': '1.00× (0.90–1.20× over 3 runs)'}
    """
    rows = list(result["one_stage"].values()) + result["rows"]
    return [{"drafter": label(r["drafter"]), "g": "one stage" if r["threshold"] is None else f"{r['threshold']:g}",
             "stages per round": f"{r['stages_per_round']:.2f}", "rounds that drafted again": f"{r['looped']:.0%}",
             "tokens per check": f"{r['acceptance_length']:.2f}", "speedup": r["speedup_spread"].label(unit="×")}
            for r in rows]


def price_rows(prices: list[dict], label: Callable[[str], str]) -> list[dict]:
    """The rows of specviz.lessons.dloop.stage_prices as a learner reads them, each drafter by `label`;
    '–' where the gate never opened, and a stage's cost whose runs' range reaches zero said to be
    within the noise, never shown as a number (a negative cost above all).

    >>> price_rows([{"drafter": "dloop", "threshold": -8.0, "looped": 0.5, "extra_stages": 0.5, "token_ms": 10.0,
    ...              "stage_ms": 5.0, "stage_in_noise": False, "tokens_added": 0.25, "tokens_needed": 0.5,
    ...              "verdict": "does not pay"}], {"dloop": "DLoop"}.get)[0]
    {'drafter': 'DLoop', 'g': '-8', 'rounds that drafted again': '50%', 'a later stage costs': '5.0 ms', \
'it added': '0.25 tokens', 'worth': '2.5 ms (at 10.0 ms a token)', 'pays for itself': 'does not pay'}
    """
    out = []
    for p in prices:
        opened = p["stage_ms"] is not None
        out.append({"drafter": label(p["drafter"]), "g": f"{p['threshold']:g}",
                    "rounds that drafted again": f"{p['looped']:.0%}",
                    "a later stage costs": "–" if not opened else "within this machine's noise"
                    if p["stage_in_noise"] else f"{p['stage_ms']:.1f} ms",
                    "it added": f"{p['tokens_added']:.2f} tokens" if opened else "–",
                    "worth": f"{p['tokens_added'] * p['token_ms']:.1f} ms (at {p['token_ms']:.1f} ms a token)"
                    if opened else "–",
                    "pays for itself": p["verdict"]})
    return out


def price_verdict(prices: list[dict], drafter: str, name: str) -> str:
    """One sentence for `drafter`, called `name` in it: where the stages the gate added repaid their cost.

    >>> p = {"drafter": "dloop", "stage_ms": 5.0, "tokens_added": 0.25, "tokens_needed": 0.5}
    >>> print(price_verdict([dict(p, threshold=-4.0, verdict="gate never opened"),
    ...                      dict(p, threshold=-8.0, verdict="does not pay"),
    ...                      dict(p, threshold=-12.0, verdict="within this machine's noise")], "dloop", "DLoop"))
    ... # doctest: +NORMALIZE_WHITESPACE
    DLoop: at g = -8 the stages it added cost more than their tokens were worth; at g = -12 the difference
    from one stage a round is within this machine's noise; at g = -4 the gate never opened.
    """
    said = {"pays": "the stages it added paid for themselves", "does not pay":
            "the stages it added cost more than their tokens were worth",
            "within this machine's noise": "the difference from one stage a round is within this machine's noise",
            "gate never opened": "the gate never opened"}
    parts = []
    for verdict, text in said.items():
        gs = [f"{p['threshold']:g}" for p in prices if p["drafter"] == drafter and p["verdict"] == verdict]
        if gs:
            parts.append(f"at g = {', '.join(gs)} {text}")
    return f"{name}: " + "; ".join(parts) + "."


def paper_rows(result: dict, threshold: float, aware: str = "dloop", plain: str = "dloop-plain") -> list[dict]:
    """Table 2's three rows, measured in this sweep at `threshold` ("no loop": the plain drafter, one
    stage a round, the DSpark drafter's weights).

    >>> from specviz.lessons.protocol import spread
    >>> def row(d, g, acc):
    ...     return {"drafter": d, "threshold": g, "acceptance_length": acc, "speedup_spread": spread([1.0])}
    >>> res = {"one_stage": {"dloop-plain": row("dloop-plain", None, 2.46)},
    ...        "rows": [row("dloop-plain", -8.0, 2.46), row("dloop", -8.0, 2.13)]}
    >>> [r["tokens per check"] for r in paper_rows(res, -8.0)]
    ['2.46', '2.46', '2.13']
    """
    rows = {(r["drafter"], r["threshold"]): r for r in result["rows"]}
    measured = [("no loop", result["one_stage"][plain]), ("loop, no loop-aware training", rows[plain, threshold]),
                ("loop with loop-aware training", rows[aware, threshold])]
    return [{"configuration (this machine, g = " + f"{threshold:g})": name,
             "tokens per check": f"{r['acceptance_length']:.2f}", "speedup": r["speedup_spread"].label(unit="×")}
            for name, r in measured]
