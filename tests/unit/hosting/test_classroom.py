"""A class's rules, on both stores: in this process, and on a real redis-server started here.

Every rule is checked the same way on each store, because a page cannot tell them apart.
"""
import re
import time

import pytest

from specviz.hosting.classroom import (ALPHABET, CLASS_POLLS_PER_S, CODE_LENGTH, POLL_MAX_S, POLL_S, ClassError, Classroom,
                                      MemoryStore, RedisStore, new_token)


class Clock:
    """Time that a test moves by hand (the memory store's expiry); Redis's own expiry is not waited for."""
    now = 0.0

    def __call__(self):
        return self.now


@pytest.fixture(params=["memory", "redis"])
def make(request):
    def build(max_classes=3, max_followers=3, idle_seconds=3600, clock=None):
        if request.param == "memory":
            store = MemoryStore(clock or time.monotonic)
        else:
            store = RedisStore(request.getfixturevalue("redis_url"), namespace=f"t{time.monotonic_ns()}:")
        return Classroom(store, max_classes=max_classes, max_followers=max_followers, idle_seconds=idle_seconds)
    return build


def test_a_follower_sees_what_the_presenter_shows(make):
    room = make()
    code, key = room.start()
    assert re.fullmatch(f"[{ALPHABET}]{{{CODE_LENGTH}}}", code) and len(set(ALPHABET)) == 32
    room.show(code, key, {"page": "draft_and_verify", "params": {"draft_round": "3", "draft_phase": "verify"}})
    seen = room.follow(code.lower(), new_token())     # typed in lower case, still the class
    assert seen["view"] == {"page": "draft_and_verify", "params": {"draft_round": "3", "draft_phase": "verify"}}
    assert seen["step"] == 1


def test_votes_are_counted_once_per_follower_and_live_only_for_the_presenter(make):
    room = make()
    code, key = room.start()
    room.ask(code, key, "draft_round_2", ["0", "1", "2", "3"])
    a, b, c = new_token(), new_token(), new_token()
    for token, option in [(a, "2"), (b, "2"), (c, "0")]:
        room.vote(code, token, "draft_round_2", option)
    with pytest.raises(ClassError, match="already voted"):
        room.vote(code, a, "draft_round_2", "3")
    assert room.tally(code, key)["votes"] == {"0": 1, "1": 0, "2": 2, "3": 0}
    assert room.follow(code, a)["votes"]["votes"] is None         # followers see counts only after the reveal
    room.reveal(code, key, "draft_round_2")
    assert room.follow(code, b)["votes"]["votes"] == {"0": 1, "1": 0, "2": 2, "3": 0}
    with pytest.raises(ClassError, match="votes are closed"):
        room.vote(code, new_token(), "draft_round_2", "1")


def test_a_follower_learns_whether_its_token_answered_the_open_question_never_what(make):
    """A reload keeps the token (in the browser's own address): its screen then shows the answer as
    counted, and the class still refuses a second vote."""
    room = make()
    code, key = room.start()
    a, b = new_token(), new_token()
    assert room.follow(code, a)["voted"] is False                   # no question open
    room.ask(code, key, "draft_round_2", ["0", "1", "2"])
    room.vote(code, a, "draft_round_2", "1")
    assert room.follow(code, a)["voted"] is True and room.follow(code, b)["voted"] is False
    assert room.follow(code, a)["votes"]["votes"] is None            # what it chose stays unsaid
    with pytest.raises(ClassError, match="already voted"):
        room.vote(code, a, "draft_round_2", "2")
    assert room.tally(code, key)["votes"] == {"0": 0, "1": 1, "2": 0}
    room.ask(code, key, "draft_round_3", ["0", "1"])                 # the next question: not answered yet
    assert room.follow(code, a)["voted"] is False


def test_asking_the_same_question_again_keeps_its_votes_and_a_new_one_starts_at_zero(make):
    room = make()
    code, key = room.start()
    room.ask(code, key, "home", ["yes", "no"])
    room.vote(code, new_token(), "home", "yes")
    room.ask(code, key, "home", ["yes", "no"])                     # the presenter's page ran again
    assert room.tally(code, key)["votes"] == {"yes": 1, "no": 0}
    room.ask(code, key, "sampling", ["p", "q"])
    assert room.tally(code, key)["votes"] == {"p": 0, "q": 0}


@pytest.mark.parametrize("forged", [None, 3, "", "x" * 300, "yes ", "YES"])
def test_a_vote_outside_the_options_changes_nothing(make, forged):
    room = make()
    code, key = room.start()
    room.ask(code, key, "home", ["yes", "no"])
    with pytest.raises(ClassError, match="not one of the question's options"):
        room.vote(code, new_token(), "home", forged)
    assert room.tally(code, key)["votes"] == {"yes": 0, "no": 0} and room.tally(code, key)["voters"] == 0


def test_a_follower_cannot_drive_the_class(make):
    room = make()
    code, key = room.start()
    for forged in [None, "", new_token(), "0" * 64, key[:-1] + ("0" if key[-1] != "0" else "1")]:
        with pytest.raises(ClassError, match="Only the browser that started this class"):
            room.show(code, forged, {"page": "home"})
        with pytest.raises(ClassError, match="Only the browser that started this class"):
            room.reveal(code, forged, "home")
    other_code, other_key = room.start()
    with pytest.raises(ClassError, match="Only the browser"):
        room.show(code, other_key, {"page": "home"})                # another class's key


@pytest.mark.parametrize("code", ["", "ABC", "ABCDEFG!", "O0O0O0O0", 12345678, None, "A" * 10_000])
def test_a_malformed_code_is_refused_with_a_message(make, code):
    with pytest.raises(ClassError, match="A class code is 8 letters and digits"):
        make().follow(code, new_token())


def test_an_unknown_code_is_refused_with_a_message(make):
    with pytest.raises(ClassError, match="No class has this code"):
        make().follow("ABCDEFGH", new_token())


@pytest.mark.parametrize("token", [None, "", "abc", "Z" * 32, 7])
def test_a_forged_follower_token_is_refused(make, token):
    room = make()
    code, key = room.start()
    room.ask(code, key, "home", ["yes", "no"])
    with pytest.raises(ClassError, match="follower token is not valid"):
        room.vote(code, token, "home", "yes")


def test_followers_and_classes_are_limited(make):
    room = make(max_classes=2, max_followers=2)
    code, _ = room.start()
    first, second = new_token(), new_token()
    room.follow(code, first)
    room.follow(code, second)
    room.follow(code, first)                                        # a follower coming back is not a new one
    with pytest.raises(ClassError, match="This class is full"):
        room.follow(code, new_token())
    room.start()
    with pytest.raises(ClassError, match="already holds 2 classes"):
        room.start()


def test_an_idle_class_is_forgotten():
    clock = Clock()
    room = Classroom(MemoryStore(clock), max_classes=1, max_followers=3, idle_seconds=3 * 3600)
    code, key = room.start()
    clock.now = 2 * 3600
    room.show(code, key, {"page": "home"})                           # touching it keeps it
    clock.now = 4.9 * 3600
    assert room.follow(code, new_token())["view"] == {"page": "home"}
    clock.now = 9 * 3600
    with pytest.raises(ClassError, match="No class has this code"):
        room.follow(code, new_token())
    room.start()                                                     # its place is free again


def test_redis_forgets_an_idle_class_by_its_own_expiry(redis_url):
    room = Classroom(RedisStore(redis_url, namespace="idle:"), max_classes=1, max_followers=3, idle_seconds=1)
    code, _ = room.start()
    time.sleep(2.2)
    with pytest.raises(ClassError, match="No class has this code"):
        room.follow(code, new_token())


def test_two_server_processes_share_a_class_through_redis(redis_url):
    presenter_side = Classroom(RedisStore(redis_url, namespace="shared:"), 3, 30, 3600)
    follower_side = Classroom(RedisStore(redis_url, namespace="shared:"), 3, 30, 3600)
    code, key = presenter_side.start()
    presenter_side.show(code, key, {"page": "dloop"})
    presenter_side.ask(code, key, "dloop", ["more", "fewer"])
    follower_side.vote(code, new_token(), "dloop", "more")
    assert follower_side.follow(code, new_token())["view"] == {"page": "dloop"}
    assert presenter_side.tally(code, key)["votes"] == {"more": 1, "fewer": 0}


def test_votes_arriving_at_once_are_each_counted_once(make):
    from concurrent.futures import ThreadPoolExecutor
    room = make(max_followers=40)
    code, key = room.start()
    room.ask(code, key, "parallel", ["none", "a few", "many"])
    tokens = [new_token() for _ in range(30)]

    def twice(i):
        outcomes = []
        for _ in range(2):          # the second try of each must be refused, whichever thread wins
            try:
                room.vote(code, tokens[i], "parallel", ["none", "a few", "many"][i % 3])
                outcomes.append("counted")
            except ClassError:
                outcomes.append("refused")
        return outcomes

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(twice, range(30)))
    assert all(sorted(r) == ["counted", "refused"] for r in results)
    assert room.tally(code, key)["votes"] == {"none": 10, "a few": 10, "many": 10}


def test_the_presenter_counts_followers_once_each_and_only_with_its_key(make):
    room = make()
    code, key = room.start()
    assert room.following(code, key) == 0
    students = [new_token() for _ in range(3)]
    for token in students + students[:1]:                  # a browser that polls again is not a new student
        room.follow(code, token)
    assert room.following(code, key) == 3
    with pytest.raises(ClassError, match="Only the browser that started this class"):
        room.following(code, new_token() * 2)


def test_a_large_class_polls_less_often_so_its_polls_together_stay_bounded(make):
    """Each follower is told how often to poll for the class's size now: every two seconds in a small
    class, and in a large one so that all its followers together ask about CLASS_POLLS_PER_S times a
    second (each poll is a script run on the server), up to POLL_MAX_S between two polls."""
    room = make(max_followers=60)
    code, key = room.start()
    first = new_token()
    assert room.follow(code, first)["poll_s"] == POLL_S
    for _ in range(9):
        room.follow(code, new_token())
    assert room.follow(code, first)["poll_s"] == POLL_S            # ten followers: still every two seconds
    for _ in range(20):
        room.follow(code, new_token())
    slow = room.follow(code, first)["poll_s"]
    assert slow == 30 / CLASS_POLLS_PER_S > POLL_S                 # thirty: the class's polls stay bounded
    for _ in range(30):
        room.follow(code, new_token())
    assert room.follow(code, first)["poll_s"] == POLL_MAX_S       # sixty: never slower than the cap
