"""AppTest for predict, then reveal (appkit.predict) on every page, and for the words a student reads.

Every page asks one question whose label begins with "Predict". Until the student picks an option
or presses Reveal, no element that carries the answer is on the page; afterwards it is, and the
choice survives a page switch. A second test reads every page's visible text (markdown, captions,
headings, alerts, metric labels, tables and dataframes, chart titles, legends and notes, widget labels and
options) for names a student should not meet: the source files' numbers, snake_case identifiers, module
paths, drafter keys; on lessons 3 and 6 after pressing the buttons that run their measurements too.
"""
import json
import re

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import (AlertBase, Button, Dataframe, Expander, HeadingBase, Markdown, Metric,
                                               PageLink, Table, Widget)

from specviz.lessons import inside
from tests.app.test_app_pages import open_page as open_app_page


def open_page(path: str | None = None) -> AppTest:
    return open_app_page(path, timeout=180)    # every page, revealed: the slowest pages need longer


def run(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def choose(at: AppTest, key: str, option) -> AppTest:
    return run(at.radio(key="keep_predict_" + key).set_value(option).run())


def reveal(at: AppTest, key: str) -> AppTest:
    return run(at.button(key="predict_reveal_" + key).click().run())


def press(at: AppTest, label: str) -> AppTest:
    return run(next(b for b in at.button if b.label.startswith(label)).click().run())


def body(at: AppTest) -> str:
    return "\n".join([m.value for m in at.markdown] + [f"{m.label} {m.value}" for m in at.metric])


def html(at: AppTest) -> str:
    return "\n".join(h.value for h in at.get("html"))


def charts(at: AppTest) -> int:
    return len(at.get("plotly_chart"))


def columns(at: AppTest) -> list[str]:
    return [c for d in list(at.dataframe) + list(at.table) for c in d.value.columns]


def metric(at: AppTest, label: str) -> str | None:
    return next((m.value for m in at.metric if m.label == label), None)


# page -> (prediction key, an option, what to do first, whether the answer is on the page)
PAGES = {
    "course_pages/home.py": ("home", "no, different texts", None,
                      lambda at: "decisions stay identical" in body(at)
                      and not next(b for b in at.button if b.label == "Start the race").disabled),
    "course_pages/sampling_lossless.py": ("sampling", "q (the drafter)", None,
                                   lambda at: charts(at) == 3 and "distance from p (total variation)" in columns(at)
                                   and "**Answer: p.**" in body(at) and "acceptance rate" in body(at)),
    "course_pages/parallel_drafting.py": ("parallel", "none", None,
                                   lambda at: charts(at) == 2 and body(at).count("P(“of problem”)") == 2),
    "course_pages/verification_budget.py": ("budget", "more", "Draft, profile and allocate",
                                     lambda at: "padded slots" in columns(at) and "**Answer, measured here: " in body(at)),
    "course_pages/biased_admission.py": ("admission", "exactly p(A)", None,
                                  lambda at: metric(at, "retrospective (search without the stop)") == "P(A) = 0.85"
                                  and "0.85" in body(at) and charts(at) == 3),
    "course_pages/dloop.py": ("dloop", "fewer", None, lambda at: "**Answer: more.**" in body(at)),
    "course_pages/cost_per_token.py": ("cost", "faster", None,
                                lambda at: metric(at, "break-even, tokens a round") == "1.40"
                                and "**Answer: slower (0.71×).** Committing one token" in body(at)
                                and "round time ÷ plain ms per token" in body(at)),
    "course_pages/reading_a_speedup.py": ("speedup", "no, it would be lower", None,
                                   lambda at: len(at.table) == 4 and "**Answer: can't tell" in body(at)),
    "course_pages/inside_a_round.py": ("inside", "yes, the ratio rule corrects any q", None,
                                lambda at: metric(at, "true q (Markov head, after temperature and top-k)") is not None
                                and inside.wrong_q_answer(at.session_state["inside_wrong_q"]["cases"]["marginal"]
                                                          ["distance"]) in body(at)),
}


@pytest.mark.parametrize("page", list(PAGES))
def test_the_answer_appears_only_after_a_choice(page):
    key, option, first, answered = PAGES[page]
    at = open_page(None if page == "course_pages/home.py" else page)
    if first:
        press(at, first)
    question = at.radio(key="keep_predict_" + key)
    assert question.label.startswith("**Predict:**") and question.value is None
    assert not answered(at)
    choose(at, key, option)
    assert answered(at)
    assert not [b for b in at.button if b.key == "predict_reveal_" + key]   # nothing left to reveal


def test_reveal_shows_the_answer_without_a_choice_and_both_survive_a_page_switch():
    at = open_page("course_pages/cost_per_token.py")
    assert metric(at, "break-even, tokens a round") is None
    reveal(at, "cost")
    assert metric(at, "break-even, tokens a round") == "1.40" and at.radio(key="keep_predict_cost").value is None
    at.switch_page("course_pages/biased_admission.py").run()
    assert "0.85" not in body(at)
    choose(at, "admission", "more than p(A)")
    run(at.switch_page("course_pages/cost_per_token.py").run())
    assert metric(at, "break-even, tokens a round") == "1.40"          # the reveal was kept
    run(at.switch_page("course_pages/biased_admission.py").run())
    assert at.radio(key="keep_predict_admission").value == "more than p(A)"   # and so was the choice
    assert metric(at, "retrospective (search without the stop)") == "P(A) = 0.85"


# the measured verdict's own words (cost.speedup_sentence, cost.if_drafting_were_free): the priced table below
# may say "within this machine's noise" of two round costs, which answers nothing of the question
VERDICTS = ("than plain decoding in every run", "faster or slower is **within this machine's noise**",
            "If drafting and bookkeeping cost nothing", "Even if drafting and bookkeeping cost nothing")


def test_lesson7s_measured_verdict_waits_for_the_worked_examples_answer(short_runs):
    """The worked example asks whether speculation is faster or slower; the live measurement's verdict on
    the same question is an answer too, and waits for the class's. Planted bug it catches: "slower than
    plain decoding in every run" (and what free drafting would give) drawn beside an unanswered question."""
    at = open_page("course_pages/cost_per_token.py")
    assert "Speedup over the runs:" not in body(at) and not any(v in body(at) for v in VERDICTS)
    assert any("once the question above is answered" in c.value for c in at.caption)
    choose(at, "cost", "faster")
    assert "Speedup over the runs:" in body(at) and any(v in body(at) for v in VERDICTS[:2])
    assert any(v in body(at) for v in VERDICTS[2:])
    assert not any("once the question above is answered" in c.value for c in at.caption)


def test_in_presenter_mode_the_key_a_reveals():
    at = open_page("course_pages/biased_admission.py")
    assert at.button(key="predict_reveal_admission").proto.shortcut == ""
    run(at.toggle(key="keep_presenter").set_value(True).run())
    assert at.button(key="predict_reveal_admission").proto.shortcut.upper() == "A"


def test_lesson1_holds_the_round_back_until_the_prediction():
    at = open_page("course_pages/draft_and_verify.py")
    press(at, "Next phase")                                  # round 1, draft phase
    assert at.radio(key="keep_predict_draft_0").label.startswith("**Predict:**")
    assert "not computed yet" in html(at) and "You predicted" not in body(at)
    assert len(at.table[0].value) == 0                       # the round log shows no verdict yet
    reveal(at, "draft_0")                                       # Reveal steps to the target's verdicts
    assert 'sv-phase on">2. verify' in html(at) and "The target kept **" in body(at)
    assert len(at.table[0].value) == 1
    press(at, "Start with these settings")                   # a new generation asks again
    press(at, "Next phase")
    assert at.radio(key="keep_predict_draft_0").value is None and at.button(key="predict_reveal_draft_0")


# --- words ---------------------------------------------------------------------------------------------
SNAKE = re.compile(r"\b[a-z]+_[a-z_]+\b")
CODE_NAMES = {"course_pages/draft_and_verify.py": {"n_matches"},   # lesson 1 shows transformers' code, explained
              "course_pages/glossary.py": {"n_matches"}}           # and the glossary defines it
FORBIDDEN = [re.compile(p) for p in (r"seed 0\d\d", r"(?i)the seed's", r"(?i)in the seed\b", r"specviz/",
                                     r"\b(ar|dflash|dspark|dloop|dloop-plain)\b")]   # drafter keys


def chart_text(spec: str) -> list[str]:
    """What a plotly chart writes on screen: its title, axis titles, legend and notes."""
    fig = json.loads(spec)
    layout = fig.get("layout", {})
    titles = [layout.get(part, {}).get("title", {}) for part in ("xaxis", "yaxis")] + [layout.get("title", {})]
    return ([t.get("text", "") for t in titles] + [trace.get("name", "") for trace in fig.get("data", [])]
            + [note.get("text", "") for note in layout.get("annotations", [])])


def visible_text(at: AppTest) -> list[str]:
    """What a student can read, outside expanders about the code."""
    out = []

    def walk(node):
        for child in node.children.values():
            if isinstance(child, Expander):
                if child.label.startswith("About the code"):
                    continue
                out.append(child.label)
            elif isinstance(child, (Markdown, HeadingBase, AlertBase)):
                out.append(child.value)
            elif isinstance(child, Metric):
                out.append(child.label)
            elif isinstance(child, (Dataframe, Table)):
                out.extend(str(c) for c in child.value.columns)
                out.extend(v for v in child.value.to_numpy().ravel() if isinstance(v, str))
            elif child.type == "plotly_chart":
                out.extend(chart_text(child.proto.spec))
            elif isinstance(child, PageLink):
                out.append(child.proto.label)
            elif isinstance(child, (Widget, Button)):
                out.append(child.label)
                out.extend(str(o) for o in getattr(child, "options", []))
            if getattr(child, "children", None):
                walk(child)
    walk(at.main)
    walk(at.sidebar)
    return out



def short_sweep(at: AppTest) -> AppTest:
    """Lesson 6's sweep at one threshold, its default g: every table and sentence, in less time."""
    return run(at.multiselect(key="keep_dloop_sweep").set_value([at.session_state["keep_dloop_g"]]).run())


# pages whose measurements write text of their own: (what to set first, the buttons that run them)
MEASURED = {"course_pages/parallel_drafting.py": (None, ["Sample 200", "Measure conditional acceptance", "Time drafting"]),
            "course_pages/dloop.py": (short_sweep, ["Draft and check one round", "Run the sweep"])}


@pytest.mark.slow
def test_no_page_shows_file_numbers_snake_case_module_paths_or_drafter_keys(short_runs):
    at = open_page()
    found = {}
    for page, (key, option, first, _) in {"course_pages/home.py": PAGES["course_pages/home.py"], **PAGES,
                                          "course_pages/draft_and_verify.py": ("draft_1", 0, None, None),
                                          "course_pages/glossary.py": (None, None, None, None)}.items():
        run(at.switch_page(page).run())
        if page == "course_pages/draft_and_verify.py":       # into a round, with its tables and verdicts
            press(at, "Next round")
            press(at, "Next phase")
            press(at, "Next phase")
        elif key:
            if first:
                press(at, first)
            choose(at, key, option)
        setup, buttons = MEASURED.get(page, (None, []))
        if setup:
            setup(at)
        for label in buttons:
            press(at, label)
        for text in visible_text(at):
            words = set(SNAKE.findall(text)) - CODE_NAMES.get(page, set())
            bad = sorted(words) + [p.pattern for p in FORBIDDEN if p.search(text)]
            if bad:
                found.setdefault(page, []).append((bad, text[:120]))
    assert found == {}
