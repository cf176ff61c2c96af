"""A newcomer's first page, in AppTest: the home page and its race button are drawn while the models
still load, and only the race waits for them.

A model set no run has asked for yet (a host config naming the shipped models under a new name, so
that this server process starts a load of its own): the first run must end with the load still
going. The same in a real browser on a freshly started server, with the seconds it takes, is
tests/browser/test_browser_first_page.py.
"""
import pytest
from streamlit.testing.v1 import AppTest

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
    assert [s.label for s in at.selectbox] == ["Drafter", "Model set", "Device"]
    assert any(c.value.startswith("**Model set:** " + unloaded_set) for c in at.sidebar.caption)
    assert not any(c.value.startswith("**Loading the models**") for c in at.caption)
