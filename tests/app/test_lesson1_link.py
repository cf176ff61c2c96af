"""Lesson settings from a shared link: valid values restore, bad ones fall back with a message."""
from appkit.course import most_k
from appkit.links import LessonSettings, from_params, to_params
from specviz.hosting.config import Limits
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
    assert "block size k must be between 1 and 12, got 99" in errors
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


def test_a_link_accepts_k_exactly_as_far_as_each_pages_slider_goes():
    """One bound per page (appkit.course.most_k), read by the slider and by the link. Planted bug it catches:
    lesson 1's slider stopping at 12 while its link took 16, so a shared link with k = 14 opened on 12."""
    assert from_params({"k": "12"}, DRAFTERS)[0].k == 12
    s, errors = from_params({"k": "14"}, DRAFTERS)
    assert s.k == LessonSettings().k and errors == ["block size k must be between 1 and 12, got 14"]
    assert from_params({"k": "12"}, DRAFTERS, limits=Limits(max_k=8))[1] == [
        "block size k must be between 1 and 8, got 12"]            # a host's lower limit still wins
    assert {page: most_k(page) for page in ("draft", "home", "budget", "dloop", "cost", "inside")} == {
        "draft": 12, "home": 8, "budget": 6, "dloop": 8, "cost": 12, "inside": 8}
