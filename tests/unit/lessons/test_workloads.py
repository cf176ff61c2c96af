"""The two workloads: the training mix keeps them apart where it must (held-out prompts, held-out
files), and lesson 8's comparison measures both with the same models, drafter and k."""
import re

import pytest
from hypothesis import given, settings, strategies as st

from specviz.generator.engine import Generation
from specviz.generator.settings import Settings
from specviz.lessons.protocol import Spread, within_noise
from specviz.lessons.workloads import PARTS, WORKLOADS, compare, explain
from specviz.training.corpus import EOT


def test_every_workload_prompt_is_cut_from_held_out_text_no_stage_trains_on(corpus):
    """Planted bug: a prompt taken from a training file would measure memory, not transfer."""
    out, _ = corpus
    train = (out / "train.txt").read_text(encoding="utf-8")
    held = {"prose": (out / "heldout.txt").read_text(encoding="utf-8"),
            "code": (out / "heldout_code.txt").read_text(encoding="utf-8")}
    for workload, prompts in WORKLOADS.items():
        for prompt in prompts:
            assert prompt in held[workload], prompt
            assert prompt not in train, prompt


def test_code_is_held_out_by_whole_file_and_prose_is_two_copies_about_half_the_mix(corpus):
    out, facts = corpus
    train = (out / "train.txt").read_text(encoding="utf-8")
    held_files = (out / "heldout_code.txt").read_text(encoding="utf-8").split(EOT)
    assert len(held_files) == len(facts["heldout_code_files"]) >= 8
    # no held-out file is in the training text (short ones, such as a one-line package comment, can
    # have a twin elsewhere in the library)
    assert all(f not in train for f in held_files if len(f) > 1000)
    assert facts["code_package"].startswith("libpython3.11-stdlib ") and "PSF" in facts["code_license"]
    # the core modules only train, and the held-out files are the ones the first package's split chose
    assert facts["core_package"].startswith("libpython3.11-minimal ") and facts["core_files"] > 200
    assert "mimetypes.py" in facts["heldout_code_files"] and "def makedirs(" in train   # os.py, a core module
    # two copies of the novels beside one of the code: 0.47 of the characters (one copy would be 0.30,
    # three, which overfit the novels over a long run, 0.57)
    assert facts["prose_repeats"] == 2 and 0.43 < facts["prose_share_of_characters"] < 0.52
    assert "    def " in train and '"Yes, of course."' in train


def test_greedy_speculation_on_code_prompts_is_the_targets_own_output(models):
    """Lossless on the second workload too: indentation, quotes and line breaks in the prompt."""
    for prompt in WORKLOADS["code"][:3]:
        plain = Generation(models, prompt, Settings.greedy(None, 16)).run().new_ids
        for drafter in ("ar", "dflash", "dspark", "dloop"):
            assert Generation(models, prompt, Settings.greedy(drafter, 16, k=4)).run().new_ids == plain, drafter


def test_the_comparison_measures_both_workloads_with_one_drafter(models):
    res = compare(models, Settings.greedy("dspark", 8, k=4), repeats=1, prompts=1)
    assert set(res) == {"prose", "code"}
    for w in res.values():
        assert w["speedup"]["runs"] == 1 and w["speedup"]["median"] > 0
        assert 1 <= w["spreads"]["per_forward"]["median"] <= 5          # k = 4: at most 4 accepted and a bonus token
        assert all(w["spreads"][key]["median"] > 0 for key in ("draft_ms", "verify_ms", "plain_ms"))
        assert set(w["spreads"]) == {key for key, *_ in PARTS}
        assert all(s["runs"] == 1 and s["low"] <= s["median"] <= s["high"] for s in w["spreads"].values())
    assert explain(res).startswith("Code's speedup is ")


def spread(median, low, high):
    return {"median": median, "low": low, "high": high, "runs": 6}


def workload(speedup=(1.5, 1.4, 1.6), per_forward=(2.5, 2.4, 2.6), draft_ms=(5.0, 4.5, 5.5),
             verify_ms=(10.0, 9.5, 10.5), plain_ms=(8.0, 7.5, 8.5)):
    parts = {"per_forward": per_forward, "draft_ms": draft_ms, "verify_ms": verify_ms, "plain_ms": plain_ms}
    return {"speedup": spread(*speedup), "spreads": {k: spread(*v) for k, v in parts.items()}}


def test_a_longer_prefix_on_code_is_named_as_the_cause_of_code_s_higher_speedup():
    said = explain({"code": workload(speedup=(2.0, 1.9, 2.1), per_forward=(3.4, 3.3, 3.5)), "prose": workload()})
    assert said.startswith("Code's speedup is above prose's (2.00× against 1.50×).")
    assert "In code's favour: a longer surviving prefix, so fewer target rounds (3.40 tokens per target " \
           "forward on code against 2.50 on prose)." in said
    assert "not a cause: ms drafting a round, ms verifying a round and ms a token of plain decoding." in said
    assert "prose's favour" not in said


def test_a_round_three_times_cheaper_is_named_and_a_prefix_inside_the_spread_is_not():
    """The measurement that the fixed sentence contradicted: the prefix barely moved, the round did."""
    said = explain({"code": workload(speedup=(1.34, 0.47, 6.28), per_forward=(2.56, 2.4, 2.7), draft_ms=(4.7, 4.0, 5.0)),
                    "prose": workload(speedup=(1.06, 0.36, 1.85), per_forward=(2.29, 2.2, 2.45), draft_ms=(15.8, 14.0, 40.0))})
    assert said.startswith("Code's speedup is within this machine's noise of prose's (1.34× against 1.06×), so this "
                           "comparison does not say which workload speculation helps more.")
    assert "In code's favour: cheaper proposals (4.7 ms drafting a round on code against 15.8 on prose)." in said
    assert "not a cause: tokens per target forward," in said and "surviving prefix" not in said


def test_prose_ahead_although_code_has_the_longer_prefix_gives_each_workload_its_own_cause():
    said = explain({"code": workload(speedup=(1.30, 1.25, 1.33), per_forward=(3.0, 2.9, 3.1), verify_ms=(14.0, 13.0, 15.0)),
                    "prose": workload(speedup=(1.37, 1.35, 1.40))})
    assert said.startswith("Code's speedup is below prose's")
    assert "In code's favour: a longer surviving prefix" in said
    assert "In prose's favour: less verification (14.0 ms verifying a round on code against 10.0 on prose)." in said


def test_code_below_prose_names_prose_s_longer_prefix_and_nothing_in_code_s_favour():
    """The "below" side with only the prefix apart: code's speedup 0.92× (0.85–0.97) against prose's 1.41×
    (1.33–1.52), 1.62 tokens per target forward on code against 2.48. Catches "above" said of a lower median,
    and the prefix credited to the workload that had the shorter one."""
    said = explain({"code": workload(speedup=(0.92, 0.85, 0.97), per_forward=(1.62, 1.55, 1.70)),
                    "prose": workload(speedup=(1.41, 1.33, 1.52), per_forward=(2.48, 2.40, 2.57))})
    assert said == ("Code's speedup is below prose's (0.92× against 1.41×). In prose's favour: a longer surviving "
                    "prefix, so fewer target rounds (1.62 tokens per target forward on code against 2.48 on prose). "
                    "Within the spread of the runs, so not a cause: ms drafting a round, ms verifying a round and ms "
                    "a token of plain decoding.")


def test_a_slower_plain_step_is_named_as_the_denominator_not_as_speculation():
    said = explain({"code": workload(speedup=(2.0, 1.9, 2.1), plain_ms=(12.0, 11.5, 12.5)), "prose": workload()})
    assert "In code's favour: the denominator, a slower plain step (12.0 ms a token of plain decoding on code " \
           "against 8.0 on prose)." in said


def test_when_nothing_moved_no_cause_is_named():
    said = explain({"code": workload(), "prose": workload(speedup=(1.45, 1.3, 1.55))})
    assert "within this machine's noise" in said and "favour" not in said
    assert "not a cause: tokens per target forward, ms drafting a round, ms verifying a round and ms a token" in said


def spreads():
    """A measured part: a median inside its range, the range possibly a single point."""
    return st.tuples(st.floats(0.1, 50), st.floats(0, 5), st.floats(0, 5)).map(lambda t: (t[0], t[0] - t[1], t[0] + t[2]))


@settings(max_examples=300, deadline=None)
@given(st.lists(spreads(), min_size=10, max_size=10))
def test_every_direction_the_sentence_states_agrees_with_the_numbers(parts):
    keys = ["speedup", "per_forward", "draft_ms", "verify_ms", "plain_ms"]
    result = {"code": workload(**dict(zip(keys, parts[:5]))), "prose": workload(**dict(zip(keys, parts[5:])))}
    said = explain(result)
    s = {name: {k: Spread(*v[:3], 6) for k, v in zip(keys, parts[i * 5:i * 5 + 5])} for i, name in enumerate(result)}
    c, p = s["code"]["speedup"], s["prose"]["speedup"]
    verdict = re.match(r"Code's speedup is (above|below|within this machine's noise of) prose's", said).group(1)
    assert (verdict.startswith("within")) == within_noise(c, p)
    if not verdict.startswith("within"):
        assert (verdict == "above") == (c.median > p.median)
    helps = {"per_forward": +1, "draft_ms": -1, "verify_ms": -1, "plain_ms": +1}   # which way raises a speedup
    for key, question, unit, *_ in PARTS:
        named = [name for name in ("code", "prose")
                 if question in "".join(re.findall(rf"In {name}'s favour: (.*?)\.(?: In | Within |$)", said))]
        if within_noise(s["code"][key], s["prose"][key]):
            assert not named and unit in said.split("not a cause: ")[1], key
        else:
            gap = (s["code"][key].median - s["prose"][key].median) * helps[key]
            assert named == (["code"] if gap > 0 else ["prose"]), key
