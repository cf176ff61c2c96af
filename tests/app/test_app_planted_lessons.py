"""AppTest: a planted measurement in session state, and the sentence the page draws from it.

Each test chooses the side of a verdict by what it plants (a measurement the page would otherwise
take live), reruns the page and reads the sentence a learner sees, so the page cannot show a fixed
sentence or a number narrated from anything but what is on screen. Where a page keeps a live
measurement it cannot be handed (lesson 9's remembered figures, lesson 8's own run), the test plants
an edited copy of the live one under the same inputs, so the page draws the planted numbers without
running the models again.
"""
import copy
import json

from appkit import drafter_label
from specviz.lessons import budget, cost, inside, parallel, workloads
from specviz.lessons.protocol import spread
from tests.app.test_app_pages import button, open_page, predict, text

S_INPUTS = "inputs_of_"   # appkit.runtime.remember's prefix: a remembered figure's inputs


def test_lesson3_labels_each_drafting_step_and_answers_from_planted_counts_and_positions():
    """The "against the k before" column (parallel.cost_steps), the answer on its "none" and "a few" sides
    (parallel.answer) and the acceptance-by-position sentence (parallel.decay_note), each from planted numbers."""
    at = predict(open_page("course_pages/parallel_drafting.py"), "parallel", "a few")
    times = {("ar", 1): [1.0, 1.1], ("ar", 2): [1.05, 1.2], ("ar", 4): [4.0, 4.4], ("dspark", 1): [3.0, 3.1],
             ("dspark", 2): [2.0, 2.2]}
    at.session_state["parallel_cost"] = {"rows": [{"drafter": d, "k": k, "draft_ms": spread(ms).median,
                                                   "spread": spread(ms)} for (d, k), ms in times.items()],
                                         "seconds": 1.0}
    at.session_state["parallel_samples"] = {"dflash": {" of course": 90, " no course": 40},
                                            "dspark": {" of course": 95, " of problem": 2}}
    at.session_state["parallel_decay"] = {"rates": {"dflash": [0.9, 0.7, 0.4]}, "seconds": 1.0,
                                          "per_prompt": {"dflash": [[0.9, 0.8, 0.5], [0.8, 0.7, 0.4], [1.0, 0.6, 0.3]]}}
    at.run()
    assert not at.exception
    steps = next(t.value for t in at.table if "against the k before" in t.value.columns)
    # overlapping k = 1 and k = 2 is noise, never "more"; a bigger block measured cheaper is said as measured
    assert list(steps["against the k before"]) == ["–", "within this machine's noise", "more", "–", "less"]
    body = text(at)
    assert "**Answer: none**: DFlash (parallel block) drew “of problem” 0 times in 200 blocks, against 90" in body
    assert "DFlash (parallel block): conditional acceptance fell from position 1 to position 3, beyond the spread " \
           "between the prompts (0.90, 0.80–1.00 over 3 prompts → 0.40, 0.30–0.50): suffix decay in this run." in body
    at.session_state["parallel_samples"] = {"dflash": {" of course": 90, " of problem": 12}, "dspark": {}}
    at.session_state["parallel_decay"]["per_prompt"] = {"dflash": [[0.9, 0.8, 0.85], [0.6, 0.7, 0.5], [0.7, 0.9, 0.7]]}
    at.run()
    body = text(at)
    assert "**Answer: a few**: DFlash (parallel block) drew “of problem” 12 times in 200 blocks" in body
    assert "is within the spread between the prompts: this run shows no decay beyond it." in body
    assert "suffix decay in this run" not in body


def test_lesson8_says_code_is_ahead_and_what_a_drafter_that_saved_no_round_did(short_runs):
    """workloads.explain's "above" side, and the forward metrics' help (cost.forwards_help) from a planted
    measurement whose rounds saved nothing: the help must not say "fewer target rounds"."""
    at = open_page("course_pages/reading_a_speedup.py")
    planted = copy.copy(at.session_state["cost_measurement"])
    plain = planted["plain"]["costs"]
    planted["speculative"] = dict(planted["speculative"], costs=dict(
        planted["speculative"]["costs"], rounds=plain["rounds"], tokens=plain["rounds"], acceptance_length=1.0))
    at.session_state["cost_measurement"] = planted
    both = {"settings": planted["settings"]}
    for name, speedup, per_forward in (("prose", 1.1, 2.2), ("code", 1.9, 3.4)):
        ms = {"median": 9.0, "low": 8.5, "high": 9.5, "runs": 6}
        both[name] = {"speedup": {"median": speedup, "low": speedup - 0.1, "high": speedup + 0.1, "runs": 6},
                      "spreads": {"per_forward": {"median": per_forward, "low": per_forward - 0.1,
                                                  "high": per_forward + 0.1, "runs": 6},
                                  "draft_ms": {"median": 3.0, "low": 2.5, "high": 3.5, "runs": 6},
                                  "verify_ms": ms, "plain_ms": ms}}
    at.session_state["speedup_workloads"] = both
    at.run()
    assert not at.exception
    body = text(at)
    assert "Code's speedup is above prose's (1.90× against 1.10×)." in body
    assert ("In code's favour: a longer surviving prefix, so fewer target rounds (3.40 tokens per target forward on "
            "code against 2.20 on prose).") in body
    assert workloads.explain(both) in body
    helps = {m.label: m.proto.help for m in at.metric}
    said = cost.forwards_help(plain["rounds"], plain["rounds"], plain["rounds"])
    assert helps["target forwards"] == said["rounds"] and "as many as plain decoding" in said["rounds"]
    assert helps["tokens per target forward"] == said["per_forward"] and "no proposal survived" in said["per_forward"]


def test_lesson9_says_what_planted_attention_shares_and_distances_show():
    """inside.block_attention_note on each side (the block read by some slots, by none) and inside.wrong_q_note
    (a wrong q far from p, and one that lands on p by luck), planted under the live figures' own inputs."""
    at = open_page("course_pages/inside_a_round.py")
    predict(at, "inside", "no, it moves away from p")
    S = at.session_state
    for name, shares, expected in (("reads", [0.9, 0.05, 0.8, 0.1], inside.block_attention_note([0.9, 0.05, 0.8, 0.1])),
                                   ("context", [0.05, 0.02, 0.1, 0.03], inside.block_attention_note([0.05, 0.02, 0.1, 0.03]))):
        view = dict(S["inside_view"], block_share=shares)
        inputs = S[S_INPUTS + "inside_view"]
        S["inside_view"] = view
        S[S_INPUTS + "inside_view"] = inputs
        wq = copy.deepcopy(S["inside_wrong_q"])
        wq["cases"]["raw"]["distance"] = 0.25 if name == "reads" else 0.0
        wq_inputs = S[S_INPUTS + "inside_wrong_q"]
        S["inside_wrong_q"] = wq
        S[S_INPUTS + "inside_wrong_q"] = wq_inputs
        at.run()
        assert not at.exception
        body = text(at)
        assert expected in body, name
        note = inside.wrong_q_note(wq["first"], wq["cases"])
        assert note in body
        if name == "reads":
            assert "Handed the q taken before temperature and top-k, it lies 0.2500 from p" in note
        else:
            assert "handed the q taken before temperature and top-k, it is p here too" in note.lower()
    assert expected != inside.block_attention_note([0.9, 0.05, 0.8, 0.1])   # the two plants are two sides


def test_lesson4_answers_from_a_planted_profile_on_each_side():
    """budget.load_heading, load_answer, load_reason and padding_note from the page's own drafts priced with a
    planted SPS table: flat (every proposal admitted at every load: the same) and one that collapses past five
    slots (request 1 is admitted fewer under load)."""
    at = predict(open_page("course_pages/verification_budget.py"), "budget", "less")
    at.slider(key="keep_budget_R").set_value(3).run()
    button(at, "Draft, profile and allocate").click().run()
    assert not at.exception
    drafted = at.session_state["budget_result"]
    conf = [r.drafter_info["confidence"] for r in drafted["rounds"]]
    width = len(drafted["sps"])
    flat = [100.0] * width
    cliff = [100.0 if b <= 5 else 100.0 / b ** 3 for b in range(1, width + 1)]
    for sps, word in ((flat, "the same"), (cliff, None)):
        at.session_state["budget_result"] = dict(drafted, sps=sps, raw=sps)
        at.run()
        assert not at.exception
        load = budget.by_load(conf, sps)
        body = text(at)
        assert budget.load_heading(load) + " " + budget.load_answer(load) in body
        # the reason and the padding count below the table are this allocation's, not a fixed "usually less"
        assert budget.load_reason(load) + " " + budget.padding_note(load) in [m.value for m in at.markdown]
        if word:
            assert f"**Answer, measured here: {word}.**" in body
        else:   # at most 4 slots left past the anchors under load: request 1 cannot keep all k
            assert "**Answer, measured here: the same.**" not in body


def test_lesson7_says_the_side_every_planted_run_fell_on_and_why_a_cheaper_round_here_is_larger(models):
    """cost.speedup_sentence on its faster, noise and slower sides, and pricing.why_question / why_smaller on the
    "larger" side: real rounds whose run times are planted so that a round here costs fewer one-token steps (a
    step of 10 ms, 0.1 ms a further position, 0.5 ms a stage) than on the large-target profile (1.4 steps)."""
    from specviz.lessons import pricing
    from tests.app.test_app_pricing import planted_measurement
    res = planted_measurement(models)
    shapes = pricing.shapes(res["speculative"]["trace"].rounds)
    n, positions, stages = len(shapes), sum(w - 1 for w, _, _ in shapes), sum(s for _, s, _ in shapes)
    cheap = {"rounds": n, "verify_ms": 9.0 * n + 0.1 * positions, "draft_ms": 0.5 * stages, "overhead_ms": 0.1 * n}
    res["speculative"]["runs_costs"] = [cheap, cheap]
    at = open_page()
    at.session_state["cost_measurement"] = res
    at.switch_page("course_pages/cost_per_token.py").run()
    predict(at, "cost", "slower")   # the measured verdict waits for the answer
    assert not at.exception, [e.value for e in at.exception]
    c = cost.regimes(res, pricing.LARGE_GPU)
    asked = pricing.why_question(c)
    assert asked == "Why is this machine's speedup larger than the large-target profile's?"
    assert f"**{asked}** " + pricing.why_smaller(c) in [m.value for m in at.markdown]
    for runs, side in (([1.21, 1.30, 1.42], "faster than plain decoding in every run"),
                       ([0.91, 1.10, 1.33], "within this machine's noise"),
                       ([0.62, 0.71, 0.83], "slower than plain decoding in every run")):
        at.session_state["cost_measurement"] = dict(res, speedup_spread=spread(runs))
        at.run()
        assert not at.exception
        said = cost.speedup_sentence(spread(runs))
        assert side in said and said in [m.value for m in at.markdown], runs


def test_lesson6_answers_from_the_planted_sweep_s_stages_a_round_on_each_side():
    """sweep.stages_answer below the sweep: a planted sweep whose gate never opened at g = -4 and drafted 2
    stages a round at g = -8 answers "more"; one whose gate opened at neither answers "the same", never a fixed
    "more"; the reason after it is the one dloop.stages_reason gives that sweep."""
    from specviz.lessons import dloop
    from tests.app.test_app_pages import planted_sweep
    at = predict(open_page("course_pages/dloop.py"), "dloop", "fewer")
    opened = planted_sweep()
    shut = [dict(r, threshold=-4.0, stages_per_round=1.0, looped=0.0) for r in opened["rows"]]
    opened["rows"] = shut + opened["rows"]
    never = dict(opened, rows=shut + [dict(r, threshold=-8.0) for r in shut])
    for planted, word in ((opened, "more"), (never, "the same")):
        at.session_state["dloop_sweep"] = planted
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        said = dloop.stages_answer(planted, drafter_label)
        assert said.startswith(f"**Answer, measured here: {word}.**")
        # and the reason after it is this sweep's own (dloop.stages_reason), not a fixed "at least as often"
        reason = dloop.stages_reason(planted, drafter_label, planted.get("S"))
        assert said + " " + reason in [m.value for m in at.markdown]
        assert "**Answer: more.**" not in text(at)


def test_lesson6_says_where_a_later_stage_paid_from_the_planted_runs_on_each_side():
    """dloop.price_verdict below the price table, from dloop.stage_prices of a planted sweep: runs at g = -8
    all cheaper a token than one stage a round pay, all dearer do not, and runs on both sides are noise.
    Catches a verdict written in advance, or one read from the wrong drafter's rows."""
    from tests.app.test_app_pages import planted_sweep
    at = predict(open_page("course_pages/dloop.py"), "dloop", "fewer")
    for runs_g, verdict in (((8.0, 8.5, 9.0), "the stages it added paid for themselves"),
                            ((13.0, 14.0, 15.0), "the stages it added cost more than their tokens were worth"),
                            ((9.0, 10.5, 12.0), "the difference from one stage a round is within this machine's noise")):
        at.session_state["dloop_sweep"] = planted_sweep(runs_one=(10.0, 10.5, 11.0), runs_g=runs_g)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        said = [m.value for m in at.markdown if m.value.startswith(("DLoop (DSpark stages", "DLoop without"))
                and "at g = -8" in m.value and "pays at" not in m.value]
        assert said == [f"{drafter_label(d)}: at g = -8 {verdict}." for d in ("dloop", "dloop-plain")], runs_g


def test_lesson9_states_each_dloop_stage_s_gate_from_its_planted_numbers():
    """inside.gate_reason in lesson 9's DLoop table, from a planted copy of the live round under its own inputs:
    a stage above g drafts another, one below g stops, a confident stage at the limit S stops and says why.
    Catches a gate column read from the drafter's flag, or from anything but Σ log q, g and S on screen."""
    at = open_page("course_pages/inside_a_round.py")
    predict(at, "inside", "no, it moves away from p")
    S = at.session_state
    inputs = S[S_INPUTS + "inside_dloop"]
    for sums, gates in (((-3.0, -2.5, -1.0), ["draft another stage: Σ log q = −3.00 ≥ g = −8",
                                              "draft another stage: Σ log q = −2.50 ≥ g = −8",
                                              "check now: Σ log q = −1.00 ≥ g = −8 would open the gate, but S = 3 "
                                              "stages is the limit"]),
                        ((-9.5,), ["check now: Σ log q = −9.50 < g = −8"])):
        loop = copy.deepcopy(S["inside_dloop"])
        stage = loop["stages"][0]
        loop.update(threshold=-8.0, max_stages=3,
                    stages=[dict(stage, stage=i + 1, logprob_sum=lp) for i, lp in enumerate(sums)])
        S["inside_dloop"], S[S_INPUTS + "inside_dloop"] = loop, inputs
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        table = next(t.value for t in at.table if "gate" in t.value.columns)
        assert list(table["gate"]) == gates


def rescaled(side: dict, factors: list[float]) -> dict:
    """A side of a live measurement with its i-th run's times multiplied by factors[i] (same rounds and tokens)."""
    timed = ("decode_ms", "ms_per_token", "mean_round_ms", "verify_ms", "draft_ms", "overhead_ms", "mean_verify_ms",
             "verify_ms_per_token")
    runs = [{**run, "costs": {k: v * f if k in timed else v for k, v in run["costs"].items()}}
            for run, f in zip(side["runs"], factors)]
    return cost.taken_apart(runs, 0)


def test_lesson7_and_8_print_a_speedup_that_is_the_division_of_the_times_beside_it(short_runs):
    """Runs whose times disagree side by side (plain's median run is not the speculative median run's partner):
    the printed speedup is plain ÷ speculative as printed, the priced table's ms per token is the headline's, and
    the break-even chart's tokens a round are the table's round in steps. Planted bugs: the median of ratios beside
    the medians of each side (18.79 / 23.26 printed beside 0.76×), a table priced on another run pair."""
    at = predict(open_page("course_pages/cost_per_token.py"), "cost", "slower")
    live = at.session_state["cost_measurement"]
    sides = {"plain": rescaled(live["plain"], [1.0, 1.3, 0.8]), "speculative": rescaled(live["speculative"], [1.25, 0.9, 1.0])}
    at.session_state["cost_measurement"] = {**live, **cost.pair_up(sides)}
    at.run()
    assert not at.exception
    shown = {m.label: m.value for m in at.metric}
    plain, spec = (float(shown[label].split()[0]) for label in ("plain decoding, per token", "speculative, per token"))
    assert abs(float(shown["measured speedup"].rstrip("×")) - plain / spec) <= 0.006
    table = next(t.value for t in at.table if "quantity" in t.value.columns).set_index("quantity")
    here = table.columns[0]
    assert float(table.loc["ms per token", here]) == spec
    notes = [a.get("text", "") for c in at.get("plotly_chart") for a in json.loads(c.proto.spec)["layout"].get("annotations", [])]
    assert f"break-even {table.loc['round, in steps', here]} tokens/round" in notes

    at8 = open_page("course_pages/reading_a_speedup.py")
    at8.session_state["cost_measurement"] = at.session_state["cost_measurement"]
    predict(at8, "speedup", "can't tell without measuring")
    result = at8.table[0].value["this app, measured now"]["result"]
    head = result.split(" ms/token")[0]
    before, after = (float(x) for x in head.split(" → "))
    ratio = float(result.split("speedup ")[1].split("×")[0])
    assert abs(ratio - before / after) <= 0.006, result
