"""Lesson 1's controller (specviz.lessons.draft.Stepper) on the embedded models: moving forward
runs the engine only for a round not yet recorded, back and reset never call a model, a saved
trace replays without one, and the end of a generation or a trace is said, not crashed into."""
from specviz.generator.settings import Settings
from specviz.lessons.cursor import Cursor
from specviz.lessons.draft import AHEAD, ENDED_LIVE, ENDED_REPLAY, Stepper

PROMPT = "The best way to learn is to"


class CountingCalls:
    """The app's measure (appkit.measure) stand-in: makes the call and counts how often the stepper asked
    for the models."""

    def __init__(self):
        self.entered = 0

    def __call__(self, f, *args):
        self.entered += 1
        return f(*args)


def started(models, max_new_tokens=8, lock=None) -> Stepper:
    s = Stepper(measure=lock) if lock else Stepper()
    assert s.start(models, PROMPT, Settings.greedy("ar", max_new_tokens, k=3))
    return s


def test_start_prefills_without_running_a_round(models):
    s = started(models)
    assert s.trace is not None and s.trace.rounds == [] and s.cursor == Cursor(0, "commit")
    assert not s.replay and s.error is None


def test_forward_runs_one_round_then_reveals_it_phase_by_phase(models):
    lock = CountingCalls()
    s = started(models, lock=lock)
    after_start = lock.entered
    assert s.move("forward") is None and s.cursor == Cursor(1, "draft") and len(s.trace.rounds) == 1
    assert lock.entered == after_start + 1                      # one engine call for round 1
    s.move("forward"), s.move("forward")
    assert s.cursor == Cursor(1, "commit") and lock.entered == after_start + 1   # verify, commit: no model


def test_back_and_reset_never_call_a_model(models):
    lock = CountingCalls()
    s = started(models, lock=lock)
    s.move("round"), s.move("round")
    calls = lock.entered
    assert s.move("back") is None and s.cursor == Cursor(1, "commit")
    s.move("reset")
    assert s.cursor == Cursor() and lock.entered == calls and len(s.trace.rounds) == 2
    s.move("round"), s.move("round")
    assert s.cursor == Cursor(2, "draft") and lock.entered == calls   # recorded rounds are replayed


def test_next_round_stops_at_the_next_rounds_question(models):
    """From any phase, Next round shows the next round's draft phase, where the page asks how many
    proposals the target will keep. Planted bug it catches: Next round showing the next round whole
    (its verdict on screen before its question)."""
    s = started(models)
    assert s.move("round") is None and s.cursor == Cursor(1, "draft")
    s.move("forward")
    assert s.move("round") is None and s.cursor == Cursor(2, "draft")   # from verify: not round 1's commit
    s.move("forward"), s.move("forward")
    assert s.move("round") is None and s.cursor == Cursor(3, "draft")   # from commit: not round 3 whole


def test_the_end_of_a_live_generation_is_said_and_stops_play(models):
    s = started(models, max_new_tokens=2)
    s.toggle_play()
    said = [s.move("round") for _ in range(4)]
    assert said[-1] == ENDED_LIVE and not s.playing
    assert s.cursor.shown == len(s.trace.rounds)


def test_a_saved_trace_replays_without_a_model_and_ends_as_a_replay(models):
    live = started(models)
    live.move("round"), live.move("round")
    s = Stepper(measure=None)   # any model call would fail: None is not callable
    assert s.load(live.trace.to_json(), "saved.json")
    assert s.replay and s.gen is None and s.cursor == Cursor()
    assert [s.move("round") for _ in range(3)] == [None, None, ENDED_REPLAY]
    assert s.cursor == Cursor(2, "draft")


def test_a_bad_file_is_named_and_keeps_what_was_on_screen(models):
    s = started(models)
    s.move("round")
    trace, cursor = s.trace, s.cursor
    assert not s.load('{"rounds": "no"}', "bad.json")
    assert s.error.startswith("Could not load bad.json: ") and s.trace is trace and s.cursor == cursor
    assert not s.replay


def test_a_linked_cursor_runs_the_rounds_up_to_it_or_says_the_generation_ended(models):
    s = started(models, max_new_tokens=6)
    assert s.go_to(Cursor(2, "verify")) is None and s.cursor == Cursor(2, "verify")
    missed = started(models, max_new_tokens=2).go_to(Cursor(30, "commit"))
    assert missed.startswith("round 30 was never reached: the generation ended after round ")


def test_following_the_class_shows_the_presenters_cursor_unless_it_is_past_the_rounds(models):
    live = started(models)
    live.move("round"), live.move("round")
    s = Stepper()
    assert s.follow(live.trace.to_json(), Cursor(2, "verify")) and s.cursor == Cursor(2, "verify")
    assert s.follow(live.trace.to_json(), Cursor(9, "draft")) and s.cursor == Cursor()
    assert s.follow(started(models).trace.to_json(), Cursor()) and s.trace.rounds == []   # a class just started
    assert not Stepper().load(started(models).trace.to_json())                           # a saved file must hold rounds


def test_a_follower_never_steps_past_what_the_presenter_has_shown(models):
    """The presenter's recorded trace holds rounds it has not shown: a follower's own Next phase
    would reveal which proposals the target kept while the room still answers the question."""
    live = started(models)
    live.move("round"), live.move("round"), live.move("round")
    s = Stepper()
    s.follow(live.trace.to_json(), Cursor(2, "draft"))
    assert s.move("forward") == AHEAD and s.cursor == Cursor(2, "draft")     # the verify result waits
    assert s.move("round") == AHEAD and s.cursor == Cursor(2, "draft")
    assert s.move("back") is None and s.cursor == Cursor(1, "commit")         # back, and forward again
    assert s.move("forward") is None and s.cursor == Cursor(2, "draft")
    s.follow(live.trace.to_json(), Cursor(3, "commit"))                      # the presenter moved on
    assert s.move("back") is None and s.move("forward") is None and s.cursor == Cursor(3, "commit")
    assert s.move("round") == AHEAD and s.cursor == Cursor(3, "commit")      # round 4 is not shown yet
    s.load(live.trace.to_json())                                             # a saved file: no presenter
    assert s.move("round") is None and s.move("round") is None and s.cursor == Cursor(2, "draft")
