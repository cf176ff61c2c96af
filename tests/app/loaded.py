"""What a browser does once the models have loaded, for AppTest: the page is drawn again.

A fresh server draws its pages while the models load (appkit.runtime.loader); in a browser the page
then redraws itself (appkit.waiting.loading_note's timer), which AppTest never runs. A test that
reads what only loaded models draw (the home race's drafter box, the sidebar's model status) waits
for the session's load and runs the page again.
"""
from streamlit.testing.v1 import AppTest

from appkit.runtime import loader
from appkit.state import DEVICE, MODEL_SET


def after_load(at: AppTest) -> AppTest:
    """`at` run again once its session's model set has loaded (or failed to: the page then says why),
    if its last run drew the page while they loaded; else `at` as it is (what a run shows once, such as
    a warning about its link, stays readable)."""
    if not any(c.value.startswith("**Loading the models**") for c in at.caption):
        return at
    try:
        loader(at.session_state[MODEL_SET], at.session_state[DEVICE]).wait()
    except Exception:   # a set that fails to load: the page shows the error, which the test reads
        pass
    return at.run()
