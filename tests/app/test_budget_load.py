"""Lesson 4's promise: with the same drafts, a request never gets more of its draft verified
because more requests share the target. It holds when Algorithm 1 prices with the fitted cost
line, and a staircase cost (or raw noisy points) can break it: both are shown here."""
from hypothesis import given, settings
from hypothesis import strategies as st

from specviz.lessons.budget import by_load
from specviz.lessons.protocol import cost_line

from tests.app.test_app_pages import button, open_page


def admissions_never_grow(load: list[dict]) -> bool:
    """Each request's admitted tokens with R + 1 requests at most what it got with R."""
    return all(later <= earlier
               for before, after in zip(load, load[1:])
               for earlier, later in zip(before["lengths"], after["lengths"]))


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_with_the_fitted_line_more_load_never_admits_more(data):
    R = data.draw(st.integers(2, 5), label="requests")
    k = data.draw(st.integers(1, 6), label="proposals")
    conf = data.draw(st.lists(st.lists(st.floats(0.0, 1.0), min_size=k, max_size=k), min_size=R, max_size=R))
    widths = list(range(1, R * (k + 1) + 1))
    measured = data.draw(st.lists(st.floats(1.0, 50.0), min_size=len(widths), max_size=len(widths)), label="ms")
    sps = [1000.0 / ms for ms in cost_line(widths, measured)]
    assert admissions_never_grow(by_load(conf, sps))


def test_a_staircase_cost_would_hand_a_request_more_under_more_load():
    # the jump from 1 to 2 tokens stops request 1 alone (Θ would fall from 153.8 to 146.2),
    # but two requests have paid that jump with their anchors, and the flat stretch makes every
    # proposal free: what a noisy profile can do, and why lesson 4 prices with the fitted line
    staircase = [1000.0 / ms for ms in (6.5, 13.0, 13.0, 13.0, 13.0, 13.0)]
    load = by_load([[0.9, 0.9], [0.9, 0.9]], staircase)
    assert [x["lengths"] for x in load] == [[0], [2, 2]]
    assert not admissions_never_grow(load)


def test_lesson4_live_admissions_shrink_with_load():
    at = open_page("course_pages/verification_budget.py")
    at.slider(key="keep_budget_R").set_value(4).run()
    button(at, "Draft, profile and allocate").click().run()
    at.button(key="predict_reveal_budget").click().run()   # the load table is the prediction's answer
    assert not at.exception
    load = at.table[1].value
    assert list(load["requests"]) == [1, 2, 3, 4]
    assert admissions_never_grow([{"lengths": list(x)} for x in load["admitted per request"]])
