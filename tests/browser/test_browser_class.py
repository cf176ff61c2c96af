"""A class in real browsers: one presenter and three followers (separate browser contexts, so
separate sessions), on one server, and on two server processes sharing a real redis-server.

The followers open the presenter's page and round, vote once each, the presenter sees the three
votes and reveals, and the reveal reaches every follower; a follower's own clicks move only its
own screen.
"""
import re

from tests.browser.chromium import settle, streamlit_server, sync_api

expect = sync_api.expect


def start_class(browser, url: str):
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(f"{url}/draft_and_verify?presenter=1")
    settle(page)
    page.get_by_role("button", name="Start a class").click()
    settle(page)
    expect(page.get_by_text(re.compile(r"Class [A-Z2-9]{8}:"))).to_be_visible()
    code = re.search(r"Class ([A-Z2-9]{8}):", page.get_by_text(re.compile(r"Class [A-Z2-9]{8}:")).inner_text())[1]
    return page, code


def run_class(browser, teacher_url: str, student_url: str):
    teacher, code = start_class(browser, teacher_url)
    students = []
    for _ in range(3):
        s = browser.new_context(viewport={"width": 1024, "height": 768}).new_page()
        s.goto(f"{student_url}/?class={code}")
        students.append(s)
    for s in students:   # each follows to the presenter's lesson
        expect(s.locator("h1").first).to_contain_text("Draft and verify", timeout=120_000)
    teacher.get_by_role("button", name="Next phase").click()
    settle(teacher)
    for s in students:   # within the two-second poll (and a busy machine's margin), round 1's draft
        expect(s.get_by_text("round 1", exact=False).first).to_be_visible(timeout=60_000)
        expect(s.get_by_text("how many of these proposals will the target keep?").last).to_be_visible(timeout=60_000)
        assert s.get_by_role("button", name="Reveal").count() == 0
    for s, choice in zip(students, ["1", "1", "2"]):
        s.get_by_role("radiogroup").get_by_text(choice, exact=True).click()
        expect(s.get_by_text(f"You answered {choice}. Your answer is counted").last).to_be_visible(timeout=60_000)
        expect(s.get_by_role("radio", name="0", exact=True).last).to_be_disabled()   # no second vote
    expect(teacher.get_by_text("3 of 3 following students have answered.").last).to_be_visible(timeout=60_000)
    assert teacher.get_by_text(re.compile(r"The class answered")).count() == 0   # the spread waits for the reveal
    # (no settle() from here: a page that polls its class every two seconds is never quiet)
    students[0].get_by_role("button", name="◀ Back").last.click()        # a follower steps only itself
    expect(students[0].get_by_text("Ready", exact=False).first).to_be_visible(timeout=60_000)
    expect(students[1].get_by_text("how many of these proposals will the target keep?").last).to_be_visible()
    teacher.get_by_role("button", name="Reveal").last.click()
    expect(teacher.get_by_text(re.compile(r"The class answered \(3 votes\)")).last).to_be_visible(timeout=60_000)
    for s in students:
        expect(s.get_by_text(re.compile(r"The class answered \(3 votes\)")).last).to_be_visible(timeout=60_000)
        expect(s.get_by_text("the target kept", exact=False).first).to_be_visible(timeout=60_000)
    expect(teacher.get_by_text(re.compile(r"round 1\b")).last).to_be_visible()   # still the teacher's own round


def test_a_class_on_one_server(browser):
    with streamlit_server() as url:
        run_class(browser, url, url)


def test_a_class_across_two_server_processes_sharing_redis(browser, redis_url, tmp_path):  # noqa: F811
    config = tmp_path / "specviz.toml"
    config.write_text(f'[classes]\nstore = "{redis_url}"\n[sets.embedded]\nembedded = true\n')
    env = {"SPECVIZ_CONFIG": str(config)}
    with streamlit_server(env) as teacher_url, streamlit_server(env) as student_url:
        run_class(browser, teacher_url, student_url)
