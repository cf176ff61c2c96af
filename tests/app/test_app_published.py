"""Lessons 3, 4 and 6 on a host's model set: they use whichever block drafters the set has,
named by kind, and say plainly when it has none.

The sets are written here: the published-layout set of test_published_hosting (a chat target
with a z-lab DFlash and a DeepSpec DSpark drafter) and a set with the target alone.
"""
from streamlit.testing.v1 import AppTest

from tests.app.test_app_pages import APP, button
from tests.unit.hosting.test_published_hosting import host  # noqa: F401  (the fixture: the host's folders)

LESSONS = ["course_pages/parallel_drafting.py", "course_pages/verification_budget.py", "course_pages/dloop.py"]


def open_set(monkeypatch, host, set_name: str, page: str) -> AppTest:  # noqa: F811
    """The app with the host's config, `set_name` chosen in the sidebar, on `page`."""
    config = host / "lessons.toml"
    config.write_text((host / "specviz.toml").read_text().split("[sets.bad]")[0]
                      + '[sets.alone]\nlabel = "target alone"\ntarget = "./target"\ndevice = "cpu"\n')
    monkeypatch.setenv("SPECVIZ_CONFIG", str(config))
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["keep_set"] = set_name
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_lesson3_samples_the_sets_own_block_drafters(monkeypatch, host):  # noqa: F811
    at = open_set(monkeypatch, host, "chat", LESSONS[0])
    at.button(key="predict_reveal_parallel").click().run()
    button(at, "Sample").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert set(at.session_state["parallel_samples"]) == {"zlab", "spark"}
    shown = "\n".join(m.value for m in at.markdown)
    assert "DSpark's backbone alone" in shown and "DFlash has no Markov head" in shown


def test_lesson4_allocates_with_the_drafter_that_has_a_confidence_head(monkeypatch, host):  # noqa: F811
    at = open_set(monkeypatch, host, "chat", LESSONS[1])
    at.slider(key="keep_budget_R").set_value(2).run()
    button(at, "Draft, profile and allocate").click().run()
    at.button(key="predict_reveal_budget").click().run()
    assert not at.exception, [e.value for e in at.exception]
    load = at.table[1].value
    assert list(load["requests"]) == [1, 2]


def test_lesson6_loops_the_sets_looping_drafters(monkeypatch, host):  # noqa: F811
    at = open_set(monkeypatch, host, "chat", LESSONS[2])
    assert at.selectbox(key="keep_dloop_drafter").options == ["zlab-dloop", "spark-dloop"]   # the host's own names


def test_a_set_without_block_drafters_says_so_on_each_block_lesson(monkeypatch, host):  # noqa: F811
    for page in LESSONS:
        at = open_set(monkeypatch, host, "alone", page)
        said = " ".join(i.value for i in at.info)
        assert said.startswith("This model set has no") and "lesson" in said, page
