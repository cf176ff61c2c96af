"""AppTest: lesson 7 prices the rounds it measured in two regimes and asks and answers why this
machine's speedup differs from the large-target profile's, both from them.

The measurement is planted: real rounds from the engine, with run times set so that this machine's
profile is known (a step of 10 ms, 1.5 ms a further position checked, 3 ms a drafting stage, 1 ms of
bookkeeping), a round here costs about 1.85 one-token steps against the large-target profile's
1.4, so the answer must say the speedup here is smaller, most of all because of the check.
"""
import json

import pytest

from specviz.generator.settings import Settings
from specviz.lessons import cost, pricing
from tests.app.test_app_pages import open_page, text

GPU = "priced, a hypothetical large target on a GPU"


def planted_measurement(models) -> dict:
    res = cost.measure(models, "The best way to learn is to", Settings.greedy("dspark", 12, k=3), repeats=2)
    shapes = pricing.shapes(res["speculative"]["trace"].rounds)
    n, tokens = len(shapes), res["plain"]["costs"]["tokens"]
    positions, stages = sum(w - 1 for w, _, _ in shapes), sum(s for _, s, _ in shapes)
    plain = {"rounds": tokens, "mean_round_ms": 10.0, "verify_ms": 9.0 * tokens}
    spec = {"rounds": n, "verify_ms": 9.0 * n + 1.5 * positions, "draft_ms": 3.0 * stages, "overhead_ms": 2.0 * n}
    res["plain"]["runs_costs"] = [plain, plain]
    res["speculative"]["runs_costs"] = [spec, spec]
    res.update(prompt="The best way to learn is to", settings=Settings.greedy("dspark", 12, k=3))
    return res


@pytest.fixture(scope="module")
def lesson7(models):
    at = open_page()
    at.session_state["cost_measurement"] = planted_measurement(models)
    at.switch_page("course_pages/cost_per_token.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_lesson7_prices_its_measured_rounds_in_both_regimes_and_labels_both_priced(lesson7):
    at = lesson7
    table = next(t.value for t in at.table if "quantity" in t.value.columns)
    assert list(table.columns) == ["quantity", "priced, this machine (measured)", GPU]
    rows = table.set_index("quantity")
    assert rows.loc["tokens a round"].nunique() == 1                         # the same rounds in both columns
    assert rows.loc["· drafting", "priced, this machine (measured)"] == "0.30"   # 3 ms a stage over a 10 ms step
    assert rows.loc["· drafting", GPU] == "0.20" and rows.loc["· bookkeeping", GPU] == "0.00"
    assert float(rows.loc["round, in steps", "priced, this machine (measured)"]) > float(rows.loc["round, in steps", GPU])
    # the chart of the same comparison names both bars priced, in its axis, its title and its exported image
    chart = next(c for c in at.get("plotly_chart") if "priced" in c.proto.spec)
    figure = json.loads(chart.proto.spec)
    assert figure["data"][0]["x"] == ["priced, this machine (measured)", GPU]
    assert figure["layout"]["title"]["text"] == "a round in one-token steps, priced"
    assert "lesson7-priced-two-regimes" in chart.proto.config


def test_lesson7_answers_why_the_laptops_speedup_is_smaller_from_the_planted_numbers(lesson7):
    at = lesson7
    expected = pricing.why_smaller(cost.regimes(at.session_state["cost_measurement"], pricing.LARGE_GPU))
    asked = pricing.why_question(cost.regimes(at.session_state["cost_measurement"], pricing.LARGE_GPU))
    assert asked == "Why is this machine's speedup smaller than the large-target profile's?"   # as the planted runs came out
    assert f"**{asked}** " + expected in [m.value for m in at.markdown]
    assert "The speedup here is smaller because a round costs more steps here, most of all the check" in expected


def test_lesson7_says_what_free_drafting_would_give_from_the_measurement_on_screen(lesson7):
    """The verdict waits for the worked example's answer, as every other answer does."""
    from tests.app.test_app_pages import predict
    at = predict(lesson7, "cost", "slower")
    p, s = (at.session_state["cost_measurement"][side]["costs"] for side in ("plain", "speculative"))
    said = cost.if_drafting_were_free(p["ms_per_token"], s["verify_ms_per_token"])
    assert any(said in m.value for m in at.markdown)
    assert ("faster than plain decoding" in said) == (p["ms_per_token"] > s["verify_ms_per_token"])


def test_an_edited_large_target_profile_reprices_the_same_rounds_and_says_it_was_edited(lesson7):
    at = lesson7
    at.number_input(key="keep_gpu_stage_ms").set_value(8.0).run()     # drafting dearer than here
    assert not at.exception
    edited = pricing.profile_with(pricing.LARGE_GPU, stage_ms=8.0)
    expected = pricing.why_smaller(cost.regimes(at.session_state["cost_measurement"], edited))
    assert expected in text(at) and "most of all" in expected
    assert any("edited on this page" in c.value for c in at.caption)
    at.number_input(key="keep_gpu_stage_ms").set_value(2.0).run()


def test_lesson6_prices_a_later_stage_in_both_regimes_from_a_planted_sweep(models):
    from specviz.lessons import dloop
    from tests.app.test_app_pages import predict
    res = dloop.threshold_sweep(models, "He said, he said", ["dloop"], [-8.0], k=4, max_stages=3,
                                max_new_tokens=16, repeats=2)
    at = open_page()
    at.session_state["dloop_sweep"] = {**res, "prompt": "He said, he said", "k": 4, "S": 3, "seconds": 1.0}
    at.switch_page("course_pages/dloop.py").run()
    assert "Run the sweep above: both prices come from its rounds." in [i.value for i in at.info]   # held back
    predict(at, "dloop", "more")
    regimes = dloop.stage_in_regimes(res, pricing.LARGE_GPU, "this machine")
    expected = dloop.regime_verdict(regimes, "dloop", "DLoop (DSpark stages, loop-aware training)", "this machine",
                                    "the large-target profile")
    assert expected in [m.value for m in at.markdown]
    table = next(t.value for t in at.table if "pays, priced, large target" in t.value.columns)
    # every priced column names the profile it was priced with: never a bare "priced" beside a measured figure
    assert list(table.columns) == ["g", "a stage adds", "needs, priced, this machine", "pays, priced, this machine",
                                   "needs, priced, large target", "pays, priced, large target"]
    assert list(table["g"]) == ["-8"]


def test_lesson8s_hardware_row_names_the_round_cost_here_and_priced_on_a_large_target(lesson7):
    from specviz.lessons import speedup
    from tests.app.test_app_pages import predict
    at = lesson7
    at.switch_page("course_pages/reading_a_speedup.py").run()
    predict(at, "speedup", "can't tell without measuring")
    said = speedup.steps_compared(cost.regimes(at.session_state["cost_measurement"], pricing.LARGE_GPU))
    hardware = next(t.value for t in at.table if "this app, measured now" in t.value.columns)["this app, measured now"]
    assert hardware["hardware"].endswith(said)
    assert " one-token steps here (measured) against 1." in said and f"{GPU}, for the same" in said
