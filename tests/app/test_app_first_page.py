"""A newcomer's first page, in AppTest: the home page and its race button are drawn while the models
still load, and only the race waits for them.

A model set no run has asked for yet (a host config naming the shipped models under a new name, so
that this server process starts a load of its own): the first run must end with the load still
going. The same in a real browser on a freshly started server, with the seconds it takes, is
tests/browser/test_browser_first_page.py.
"""
import pytest
from streamlit.testing.v1 import AppTest

from appkit.opening import measurement
from appkit.runtime import loader
from tests.app.loaded import after_load
from tests.paths import ROOT

APP = str(ROOT / "app.py")


@pytest.mark.slow
def test_the_home_page_and_its_race_button_draw_before_the_models_have_loaded(unloaded_set):
    at = AppTest.from_file(APP, default_timeout=300).run()
    assert not at.exception, [e.value for e in at.exception]
    job = loader(unloaded_set, at.session_state["keep_device"])
    assert not job.done                                   # the run is over, the load is not
    assert "Draft, then verify" in at.title[0].value
    race = next(b for b in at.button if b.label == "Start the race")
    assert race.disabled                                   # only until the prediction is answered
    at.radio(key="keep_predict_home").set_value("yes, token for token").run()
    race = next(b for b in at.button if b.label == "Start the race")
    assert not race.disabled and not job.done              # usable while the models still load
    loading = [c.value for c in at.caption if c.value.startswith("**Loading the models**")]
    assert len(loading) == 2                               # beside the drafter box, and in the sidebar
    assert "a race started now waits for them" in loading[0]
    assert [s.label for s in at.selectbox] == ["Model set", "Device"]   # the drafters come with the models
    after_load(at)                                         # as the browser's page redraws once they are in
    measurement(unloaded_set, at.session_state["keep_device"]).wait()   # which setting wins here (appkit.opening)
    at.run()                                               # as the measuring note's clock redraws the page
    assert [s.label for s in at.selectbox] == ["Drafter", "Model set", "Device"]
    assert any(c.value.startswith("**Model set:** " + unloaded_set) for c in at.sidebar.caption)
    assert not any(c.value.startswith("**Loading the models**") for c in at.caption)


@pytest.mark.slow
def test_a_race_pressed_while_the_models_load_is_kept_and_runs_once_they_arrive(tmp_path, monkeypatch):
    """The press is kept in the session and says it waits, with the seconds so far, instead of waiting
    inside its own run: a run that held it while blocking on the load was lost when another run
    replaced it (a click, the loading note's timer), and a class saw nothing for minutes.

    Planted bug it catches: the race run from the button's one-run value, blocking until the load ends
    (the run holding the press returns before the models have loaded, and a run after it keeps the press)."""
    name = f"pressed_{tmp_path.name}".replace("-", "_")
    config = tmp_path / "specviz.toml"
    config.write_text(f"[limits]\nmax_new_tokens = 8\n[sets.{name}]\nembedded = true\n")
    monkeypatch.setenv("SPECVIZ_CONFIG", str(config))
    at = AppTest.from_file(APP, default_timeout=300).run()
    job = loader(name, at.session_state["keep_device"])
    at.radio(key="keep_predict_home").set_value("yes, token for token").run()
    next(b for b in at.button if b.label == "Start the race").click().run()
    assert not job.done, "the run that got the press waited for the load"
    queued = [i.value for i in at.info if "the race you started is queued" in i.value]
    assert queued and queued[0].startswith("**Loading the models**") and " s so far" in queued[0]
    at.run()   # another run replaces it (the note's timer, a student's click) while the models still load
    assert not job.done and any("queued" in i.value for i in at.info), "the press was lost"
    job.wait()
    measuring = measurement(name, at.session_state["keep_device"])
    at.run()   # the browser's redraw once they are in (the note's timer): the opening is measured first
    if not measuring.done:
        assert "home_race" not in at.session_state and "home_race_asked" in at.session_state
        assert any("the race you started runs then" in i.value for i in at.info)
    measuring.wait()
    at.run()   # the measuring note's timer redraws the page once it is done
    assert not at.exception, [e.value for e in at.exception]
    assert "home_race" in at.session_state and not any("queued" in i.value for i in at.info)
    assert any(m.value.startswith("**Same text:**") for m in at.markdown)
    at.run()
    assert "home_race_asked" not in at.session_state   # run once, not again on every run after
