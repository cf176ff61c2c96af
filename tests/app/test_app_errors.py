"""No traceback reaches a browser: lesson 1 answers a bad trace file in words and keeps what it
showed; an error no page expected becomes an apology whose id is in the server's log."""
import json
import re

import pytest
from streamlit.testing.v1 import AppTest

import appkit
from specviz.generator.engine import Generation
from specviz.generator.settings import Settings
from tests.paths import ROOT

APP = str(ROOT / "app.py")


def page_that_fails():
    import appkit

    with appkit.apology():
        raise RuntimeError("boom in /srv/specviz/secret.py")


def page_that_stops():
    import streamlit as st

    import appkit

    with appkit.apology():
        st.write("before the stop")
        st.stop()
        st.write("never drawn")


def test_an_unexpected_error_shows_an_apology_with_an_id_the_log_holds(caplog):
    at = AppTest.from_function(page_that_fails, default_timeout=60).run()
    assert not at.exception
    [shown] = [e.value for e in at.error]
    incident = re.fullmatch(r"Sorry, this page hit an error it did not expect\. If reloading does not help, "
                            r"tell the host error id \*\*([0-9a-f]{8})\*\*: it is in the server's log\.", shown)
    assert incident, shown
    assert "boom" not in shown and "secret" not in shown
    [logged] = [r for r in caplog.records if r.name == "specviz"]
    assert logged.getMessage() == f"unexpected error {incident.group(1)}"
    assert "RuntimeError: boom in /srv/specviz/secret.py" in caplog.text   # the traceback, for the host


def test_st_stop_inside_the_apology_is_not_an_error():
    at = AppTest.from_function(page_that_stops, default_timeout=60).run()
    assert not at.exception and not at.error
    assert [m.value for m in at.markdown] == ["before the stop"]


@pytest.fixture(scope="module")
def saved(models) -> dict:
    return json.loads(Generation(models, "The best way to learn is to", Settings.greedy("ar", 16, k=4))
                      .run().to_json())


def bad_files(saved: dict) -> list[tuple[str, bytes, str]]:
    """Three hand-edited traces, as a curious student makes them, with the sentence each must get."""
    text = json.loads(json.dumps(saved))
    text["rounds"][0]["p_top"][1][0][2] = "abc"
    accepted = json.loads(json.dumps(saved))
    accepted["rounds"][2]["accepted"] = 99
    ids = json.loads(json.dumps(saved))
    ids["rounds"][1]["proposed"][0] = 10**12
    return [("text-probability.json", json.dumps(text).encode(),
             "round 1: p_top[1][0][2] should be a valid number, not 'abc'"),
            ("accepted-99.json", json.dumps(accepted).encode(), "round 3: accepted 99 exceeds the 4 proposals"),
            ("huge-id.json", json.dumps(ids).encode(),
             "round 2: a token id 1000000000000 is outside the vocabulary of 6144 tokens")]


def test_lesson1_refuses_bad_trace_files_with_a_sentence_and_keeps_its_own_trace(saved):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run().switch_page("course_pages/draft_and_verify.py").run()
    live = at.session_state["draft_state"]["stepper"].trace
    for name, content, reason in bad_files(saved):
        at.file_uploader(key="draft_upload").set_value((name, content, "application/json")).run()
        assert not at.exception
        assert [e.value for e in at.error] == [f"Could not load {name}: {appkit.plain(reason)}"]
        assert at.session_state["draft_state"]["stepper"].trace is live and not at.session_state["draft_state"]["stepper"].replay


def test_a_file_name_of_markup_is_shown_as_text(saved):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run().switch_page("course_pages/draft_and_verify.py").run()
    at.file_uploader(key="draft_upload").set_value(("![x](http://example.com/p).json", b"{", "application/json")).run()
    [shown] = [e.value for e in at.error]
    assert shown.startswith(r"Could not load \!\[x\](http://example.com/p).json: not a specviz trace")
