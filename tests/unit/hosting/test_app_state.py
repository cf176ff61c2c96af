"""Lesson settings from a shared link: valid values restore, bad ones fall back with a message."""
from specviz.hosting.app_state import LessonSettings, from_params, to_params
from specviz.lessons.cursor import Cursor

DRAFTERS = ["ar", "lookup"]


def test_a_link_round_trips_the_settings():
    s = LessonSettings(prompt="Hello <there>", drafter="lookup", verifier="match", k=6, temperature=0.7, seed=3,
                       max_new=20)
    back, errors = from_params(to_params(s), DRAFTERS)
    assert back == s and errors == []


def test_out_of_range_values_fall_back_with_a_readable_message():
    s, errors = from_params({"k": "99", "temperature": "hot", "drafter": "oracle", "prompt": "  "}, DRAFTERS)
    assert (s.k, s.temperature, s.drafter, s.prompt) == (4, 1.0, "ar", LessonSettings().prompt)
    assert "block size k must be between 1 and 16, got 99" in errors
    assert "temperature must be a number, got 'hot'" in errors
    assert any("drafter must be one of ar, lookup" in e for e in errors)
    assert any("prompt must be" in e for e in errors)


def test_a_model_set_without_the_default_drafter_falls_back_to_its_first():
    s, _ = from_params({}, ["lookup"])
    assert s.drafter == "lookup"


def test_greedy_lessons_decode_at_temperature_zero():
    assert LessonSettings(verifier="greedy", temperature=1.3).engine_settings().sampling.temperature == 0
    assert LessonSettings(verifier="sampling", temperature=1.3).engine_settings().sampling.temperature == 1.3


def test_the_cursor_reveals_each_round_in_three_phases():
    c = Cursor()
    seen = []
    for _ in range(6):
        c = c.forward()
        seen.append((c.shown, c.phase))
    assert seen == [(1, "draft"), (1, "verify"), (1, "commit"), (2, "draft"), (2, "verify"), (2, "commit")]
    assert Cursor(1, "draft").back() == Cursor(0, "commit") and Cursor().back() == Cursor()
