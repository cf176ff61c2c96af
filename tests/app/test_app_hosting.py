"""AppTest for what the host's config file does to the app: the sets the sidebar offers, a set
that fails to load, a link that names a set, and the limits of one run."""

import pytest
from streamlit.testing.v1 import AppTest
from tests.app.loaded import after_load
from tests.paths import ROOT

APP = str(ROOT / "app.py")
LESSON1 = "course_pages/draft_and_verify.py"
TWO_SETS = """
[limits]
max_new_tokens = 8
max_prompt_chars = 40
max_k = 3

[sets.embedded]
embedded = true

[sets.broken]
label = "A set whose files are missing"
target = "./no-such-model"
"""


@pytest.fixture
def host_config(tmp_path, monkeypatch):
    path = tmp_path / "specviz.toml"
    path.write_text(TWO_SETS)
    monkeypatch.setenv("SPECVIZ_CONFIG", str(path))
    return path


def open_app(page: str | None = None, loaded: bool = True, **query) -> AppTest:
    """The app opened on `page` (home if None); on the home page, with `loaded`, run again once the models
    have loaded (the home page draws while they load); without, as its first run left it."""
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    if page:
        at.switch_page(page).run()
    elif loaded:
        after_load(at)
    assert not at.exception, [e.value for e in at.exception]
    return at


def model_set_box(at: AppTest):
    return next(s for s in at.sidebar.selectbox if s.label == "Model set")


def errors(at: AppTest) -> str:
    return "\n".join(e.value for e in at.error)


def test_sidebar_offers_exactly_the_configured_sets(host_config):
    box = model_set_box(open_app())
    assert box.options == ["Embedded models (trained here, small enough for a CPU)", "A set whose files are missing"]


def test_a_set_that_fails_to_load_is_explained_and_the_other_set_still_works(host_config):
    at = open_app(LESSON1)
    model_set_box(at).set_value("broken").run()
    assert not at.exception
    shown = errors(at)
    assert "model set 'broken': target: no model at" in shown and "no-such-model" in shown
    assert "Choose another model set in the sidebar" in shown
    model_set_box(at).set_value("embedded").run()
    assert not at.exception and not at.error
    assert "Model set:** embedded" in " ".join(c.value for c in at.sidebar.caption)


@pytest.mark.parametrize("requested", ["/etc/passwd", "../models/target", "Qwen/Qwen2.5-0.5B"])
def test_a_link_can_name_only_a_configured_set(host_config, requested):
    at = open_app(set=requested, loaded=False)   # the link is read, and warned about, on the first run
    warnings = " ".join(w.value for w in at.sidebar.warning)
    assert "there is no model set" in warnings and "choose one of: embedded, broken" in warnings
    assert model_set_box(at).value == "embedded"


def test_a_link_naming_a_configured_set_opens_it(host_config):
    at = open_app(set="broken")
    assert model_set_box(at).value == "broken"
    assert "model set 'broken'" in " ".join(e.value for e in at.sidebar.error)


def test_the_host_limits_bound_lesson_1(host_config):
    at = open_app(LESSON1, k="6", max_new="50")
    warnings = " ".join(w.value for w in at.warning)
    assert "block size k must be between 1 and 3, got 6" in warnings
    assert "max new tokens must be between 1 and 8, got 50" in warnings
    assert next(s for s in at.slider if s.label.startswith("Block size")).max == 3
    at.text_area[0].set_value("A prompt well over forty characters long, typed by a student.").run()
    next(b for b in at.button if b.label.startswith("Start")).click().run()
    assert not at.exception
    assert "The prompt is 61 characters; this server accepts at most 40." in errors(at)


def test_a_bad_config_file_is_named_and_the_built_in_set_is_used(tmp_path, monkeypatch):
    path = tmp_path / "specviz.toml"
    path.write_text("[limits]\nmax_new_token = 8\n")
    monkeypatch.setenv("SPECVIZ_CONFIG", str(path))
    at = open_app()
    shown = " ".join(e.value for e in at.sidebar.error)
    assert "The server's config file was not used" in shown and "unknown key limits.max_new_token" in shown
    assert "Model set:** embedded" in " ".join(c.value for c in at.sidebar.caption)
