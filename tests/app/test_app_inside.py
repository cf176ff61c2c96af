"""AppTest for lesson 9 (inside a round) and the glossary: every section renders its computed values."""
import re

from streamlit.testing.v1 import AppTest

from specviz.lessons.presets import PRESETS
from specviz.lessons import glossary, inside
from specviz.lessons.markup import md_token
from tests.paths import ROOT

APP = str(ROOT / "app.py")


def open_page(path: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.switch_page(path).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [f"{m.label} {m.value}" for m in at.metric] + [c.value for c in at.caption]
    return "\n".join(parts)


def test_lesson9_renders_every_section_with_its_computed_values():
    at = open_page("course_pages/inside_a_round.py")
    at.radio(key="keep_predict_inside").set_value("no, it moves away from p").run()   # section 2 waits for it
    assert at.title[0].value == "9 · Inside a round"
    assert [h.value for h in at.subheader] == [title for title, _ in inside.SECTIONS]
    body = text(at)
    # 1: the live round names the target layers, the anchor plus masks and the block-size translation
    assert "target layers **1, 4, 6**" in body and md_token("[mask]") in body   # token text shown as text
    assert "**This round:** 4 inputs, read DSpark's way" in body and "the **k = 4** proposals" in body
    assert "**block size 5**" in body
    # 1: what the measured attention shows is said, from the shares the caption's figure drew
    assert re.search(r"Measured: .*attention on the block.*[Ii]n this round .* mostly the", body)
    # 2: the heading above the prediction does not answer it; the reveal says what the distances show
    assert "true" not in at.subheader[1].value and at.subheader[1].value.endswith("?")
    assert "Measured after the first proposal" in body and "with the true q the emitted distribution is p exactly" in body
    # 2: the true q is lossless, both wrong ones are not
    metrics = {m.label: float(m.value) for m in at.metric if m.label.startswith(("true q", "q before", "backbone"))}
    assert abs(metrics["true q (Markov head, after temperature and top-k)"]) < 1e-6
    assert metrics["q before temperature and top-k"] > 0 and metrics["backbone marginal (no Markov head), transformed"] > 0
    # 4 and 5: the worked examples, computed
    assert "admits **3** tokens of the strong request and **0** of the doubtful one" in body
    assert "**5.6 ms/token**" in body and "say 8.75 ms/token" in body and "the round took **13 ms**" in body
    assert "**117.6 tok/s**" in body
    assert "time to first token" in body and "whole request" in body
    # 6: a live DLoop round, each later anchor the previous stage's last proposal
    stages = at.table[0].value
    assert len(stages) >= 1 and all(g.startswith(("draft another stage: Σ log q", "check now: Σ log q"))
                                    for g in stages["gate"])
    assert stages["gate"][len(stages) - 1].startswith("check now")   # the last stage drawn is the one that stopped
    for i in range(1, len(stages)):   # proposals are the stage's token texts joined by spaces
        assert stages["proposals"][i - 1].endswith(stages["anchor"][i])
    assert "loop-aware steps with 3 stages unrolled took" in body
    # every lesson header links the glossary
    assert "glossary" in [p.proto.page for p in at.get("page_link")]


def test_lesson9_wrong_q_follows_the_temperature_slider():
    at = open_page("course_pages/inside_a_round.py")
    at.radio(key="keep_predict_inside").set_value("no, it moves away from p").run()
    at.slider(key="keep_inside_temp").set_value(1.0).run()
    at.slider(key="keep_inside_topk").set_value(0).run()
    assert not at.exception
    metrics = {m.label: float(m.value) for m in at.metric if m.label.startswith(("true q", "q before"))}
    assert abs(metrics["true q (Markov head, after temperature and top-k)"]) < 1e-6
    assert metrics["q before temperature and top-k"] < 1e-6   # at temperature 1 with no top-k, raw q is the true q


def test_lesson9_searches_the_presets_for_a_greedy_token_that_numerics_flip(short_runs):
    at = open_page("course_pages/inside_a_round.py")
    next(b for b in at.button if b.label.startswith("Search the presets")).click().run()
    assert not at.exception
    body = text(at)
    found = re.search(r"differ on \*\*(\d+) of (\d+)\*\* prompts", body)
    assert found and int(found.group(2)) == len(PRESETS)
    if int(found.group(1)):
        assert "parts at new token" in body and "float32 logits of the two tokens chosen there differ by **" in body
    else:
        assert "No prompt here shows a flipped greedy token" in body
    assert f"equals plain float32 greedy decoding on **{len(PRESETS)} of {len(PRESETS)}** prompts" in body
    assert "not a guarantee: the check is one forward over k + 1 tokens, a different computation graph" in body


def test_glossary_lists_every_entry_and_filters():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("course_pages/glossary.py").run()
    assert not at.exception and at.title[0].value == "Glossary"
    entries = [m.value for m in at.markdown if m.value.startswith("**")]
    assert len(entries) == len(glossary.ENTRIES)
    at.text_input(key="glossary_query").set_value("D-Loop").run()
    entries = [m.value for m in at.markdown if m.value.startswith("**")]
    assert entries and entries[0].startswith("**D-Loop**")
    at.text_input(key="glossary_query").set_value("zzz no such").run()
    assert "No term or definition mentions" in at.info[0].value


def test_lesson9_runs_the_models_again_only_when_a_figures_inputs_change():
    at = open_page("course_pages/inside_a_round.py")
    at.radio(key="keep_predict_inside").set_value("no, it moves away from p").run()
    view, wrong = at.session_state["inside_view"], at.session_state["inside_wrong_q"]
    at.slider(key="keep_inside_temp").set_value(1.0).run()     # section 2's input: only its figure is computed again
    assert at.session_state["inside_view"] is view and at.session_state["inside_wrong_q"] is not wrong
    at.slider(key="keep_inside_k").set_value(3).run()           # section 1's input
    assert at.session_state["inside_view"] is not view and at.session_state["inside_view"]["k"] == 3
