"""The home race: several races with their spread, the verdict in a round's own numbers, the
setting the page opens with, and the thread count measured on the free cores."""
import pytest
import torch
from hypothesis import assume, given, strategies as st

from specviz.generator.settings import Settings
from specviz.generator.threads import candidates, fit_threads, free_cores
from specviz.lessons import home
from specviz.lessons.protocol import Spread, spread

PROMPT = "The best way to learn is to"


def test_races_repeat_and_the_median_race_is_replayed(models):
    res = home.run(models, PROMPT, Settings.greedy("ar", 12, k=3), races=3)
    assert len(res["races"]) == 3 and res["speedup"].n == 3
    speedups = [p.ms_per_token / s.ms_per_token for p, s in res["races"]]
    assert res["speedup"].low == min(speedups) and res["speedup"].high == max(speedups)
    assert speedups[res["median"]] == res["speedup"].median
    for plain, spec in res["races"]:     # every race is lossless: the same greedy text
        assert [t for t, _ in plain.texts] == [t for t, _ in spec.texts]


def test_the_verdict_compares_tokens_per_round_with_the_round_in_steps(models):
    plain, spec = home.finish(home.start(models, PROMPT, Settings.greedy("ar", 12, k=3)))
    v = home.verdict(plain, spec)
    assert v["tokens_per_round"] == len(spec.texts) / len(spec.marks)
    assert 1.0 <= v["tokens_per_round"] <= 4.0          # one correction or bonus, at most k + 1
    assert v["wins"] == (spec.ms_per_token < plain.ms_per_token)


def test_the_opening_setting_is_the_fastest_measured(models):
    best = home.fastest_setting(models, PROMPT, ["ar", "lookup"], ks=(2, 4), tokens=8)
    assert set(best["tried"]) == {"ar k=2", "ar k=4", "lookup k=2", "lookup k=4"}
    label = f"{best['drafter']} k={best['k']}"
    assert best["tried"][label] == best["speedup"]
    assert best["speedup"].median == max(s.median for s in best["tried"].values())


def test_threads_are_set_to_a_measured_candidate(models):
    before = torch.get_num_threads()
    try:
        chosen = fit_threads(models, repeats=2)
        assert chosen["cores"] == free_cores()
        assert chosen["threads"] in candidates(chosen["cores"]) and torch.get_num_threads() == chosen["threads"]
        if chosen["ms"]:
            assert chosen["ms"][chosen["threads"]] == min(chosen["ms"].values())
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("speed, tone", [
    (Spread(1.30, 1.20, 1.40, 5), "won"),     # every race faster
    (Spread(1.10, 0.95, 1.40, 5), "noise"),   # races on both sides of 1×
    (Spread(0.90, 0.85, 1.00, 5), "noise"),   # a race exactly at 1× is not a loss
    (Spread(0.80, 0.70, 0.90, 5), "lost"),    # every race slower
])
def test_the_race_is_explained_by_where_its_races_fell(speed, tone):
    why = {"tokens_per_round": 2.4, "round_in_steps": 2.0, "wins": True}
    said_tone, said = home.explain(speed, why)
    assert said_tone == tone
    assert "**2.40 tokens**" in said and "**2.00 one-token steps**" in said
    assert ("within this machine's noise" in said) == (tone == "noise")
    assert ("so it wins" in said) == (tone == "won")
    assert ("lost" in said) == (tone == "lost")


@pytest.mark.parametrize("speed, where", [
    (Spread(1.10, 0.95, 1.40, 5), "the 5 races fell on both sides of 1×"),
    (Spread(0.90, 0.85, 1.00, 5), "none of the 5 races was faster than plain decoding, and the fastest ran level "
                                  "with it (1×)"),
    (Spread(1.10, 1.00, 1.20, 3), "none of the 3 races was slower than plain decoding, and the slowest ran level "
                                  "with it (1×)"),
    (Spread(1.00, 1.00, 1.00, 3), "all 3 races ran level with plain decoding (1×)"),
])
def test_a_race_inside_the_noise_says_where_its_races_fell(speed, where):
    """Catches "both sides of 1×" said of races none of which was below (or above) 1×."""
    _, said = home.explain(speed, {"tokens_per_round": 2.4, "round_in_steps": 2.0, "wins": True})
    assert said.startswith(f"Faster or slower here is **within this machine's noise**: {where}. ")
    assert ("both sides" in said) == (speed.low < 1 < speed.high)


@pytest.mark.parametrize("speed, tokens, steps, tone, said", [
    # the round's numbers agree with the tone: the sentence draws the conclusion
    (Spread(1.30, 1.20, 1.40, 5), 2.4, 2.0, "won",
     "A speculative round committed **2.40 tokens** and cost as much time as **2.00 one-token steps** of plain "
     "decoding: more tokens than steps, so it wins."),
    (Spread(0.80, 0.70, 0.90, 5), 1.6, 2.0, "lost",
     "Speculation lost on this machine now. A speculative round committed **1.60 tokens** and cost as much time as "
     "**2.00 one-token steps** of plain decoding: fewer tokens than steps, and a round pays off only when it commits "
     "more tokens than the steps it costs. That is lesson 7's arithmetic, and this drafter and k did not meet it "
     "here; press **Find the fastest setting on this machine**."),
    # they disagree (planted): the numbers are compared as they are, and no conclusion is drawn from them
    (Spread(1.30, 1.20, 1.40, 5), 1.8, 2.0, "won",
     "Speculation won on this machine now: all 5 races were faster. A speculative round committed **1.80 tokens** "
     "and cost as much time as **2.00 one-token steps** of plain decoding: fewer tokens than steps."),
    (Spread(0.80, 0.70, 0.90, 5), 2.4, 2.0, "lost",
     "Speculation lost on this machine now: all 5 races were slower. A speculative round committed **2.40 tokens** "
     "and cost as much time as **2.00 one-token steps** of plain decoding: more tokens than steps; lesson 7 takes a "
     "round's time apart, and **Find the fastest setting on this machine** measures others."),
    (Spread(1.10, 0.95, 1.40, 5), 1.999, 2.001, "noise",
     "Faster or slower here is **within this machine's noise**: the 5 races fell on both sides of 1×. A speculative "
     "round committed **2.00 tokens** and cost as much time as **2.00 one-token steps** of plain decoding: as many "
     "tokens as steps. Lesson 7 takes a round's time apart."),
])
def test_the_round_s_numbers_are_compared_as_they_are_whatever_the_tone(speed, tokens, steps, tone, said):
    """Catches a sentence that writes "more tokens than steps, so it wins" from the tone while the round's
    own numbers show fewer (or "did not meet it" beside more), and a comparison of digits the page hides."""
    assert home.explain(speed, {"tokens_per_round": tokens, "round_in_steps": steps, "wins": tokens > steps}) == (
        tone, said)


@given(st.lists(st.floats(0.2, 5.0), min_size=1, max_size=9), st.floats(0.5, 9.0), st.floats(0.5, 9.0))
def test_every_direction_the_race_sentence_states_agrees_with_its_numbers(speedups, tokens, steps):
    low, high = min(speedups), max(speedups)
    speed = Spread(sorted(speedups)[(len(speedups) - 1) // 2], low, high, len(speedups))
    tone, said = home.explain(speed, {"tokens_per_round": tokens, "round_in_steps": steps, "wins": tokens > steps})
    a, b = round(tokens, 2), round(steps, 2)
    assert ("more tokens than steps" in said) == (a > b) and ("fewer tokens than steps" in said) == (a < b)
    assert ("so it wins" in said) == (tone == "won" and a > b)
    assert ("did not meet it" in said) == (tone == "lost" and a <= b)
    assert ("both sides of 1×" in said) == (low < 1 < high)
    assert ("level with" in said) == (tone == "noise" and not low < 1 < high)


@given(st.lists(st.floats(0.2, 5.0), min_size=1, max_size=9))
def test_the_race_never_claims_a_direction_its_races_do_not_all_share(speedups):
    low, high = min(speedups), max(speedups)
    tone, _ = home.explain(Spread(sorted(speedups)[(len(speedups) - 1) // 2], low, high, len(speedups)),
                           {"tokens_per_round": 2.0, "round_in_steps": 1.5, "wins": True})
    assert tone == ("won" if low > 1 else "lost" if high < 1 else "noise")


def found(tried: dict, tokens: int = 24) -> dict:
    """What home.fastest_setting returns for these measured settings: the highest median is chosen."""
    name = max(tried, key=lambda n: tried[n].median)
    drafter, k = name.rsplit(" k=", 1)
    return {"drafter": drafter, "k": int(k), "speedup": tried[name], "tokens": tokens, "tried": tried}


def test_a_setting_is_called_the_fastest_only_when_its_range_clears_every_other():
    """Catches a caption that calls the highest median "the fastest" whatever the ranges."""
    clear = found({"dspark k=4": Spread(1.40, 1.30, 1.50, 3), "dspark k=2": Spread(1.20, 1.10, 1.29, 3),
                   "ar k=2": Spread(0.90, 0.80, 1.00, 3)})
    assert home.fastest_caption(clear, str.title) == (
        "Measured on this machine just now: Dspark at k = 4 was the fastest of the 3 settings tried "
        "(1.40× (1.30–1.50× over 3 runs) against plain decoding over 24 tokens).")
    tied = found({"dspark k=4": Spread(1.40, 1.30, 1.50, 3), "dspark k=2": Spread(1.35, 1.25, 1.45, 3),
                  "ar k=2": Spread(0.90, 0.80, 1.00, 3)})
    assert home.fastest_caption(tied, str.title) == (
        "Measured on this machine just now: Dspark at k = 4 had the highest median of the 3 settings tried "
        "(1.40× (1.30–1.50× over 3 runs) against plain decoding over 24 tokens), but its lead over Dspark at k = 2 "
        "(1.35× (1.25–1.45× over 3 runs)) is within this machine's noise: the race opens on it, and either could "
        "be the faster here.")


def test_every_setting_whose_range_reaches_the_fastest_is_named_not_only_the_runner_up():
    """The runner-up by median (dflash k=4) is clear of it, but a wider lower one (ar k=2) reaches it.
    Catches a caption that compares with the runner-up alone."""
    best = found({"dspark k=4": Spread(1.40, 1.30, 1.50, 3), "dflash k=4": Spread(1.20, 1.15, 1.25, 3),
                  "ar k=2": Spread(1.00, 0.70, 1.31, 3), "lookup k=2": Spread(1.35, 1.28, 1.38, 3)})
    said = home.fastest_caption(best)
    assert "was the fastest" not in said and "dflash" not in said
    assert ("its lead over lookup at k = 2 (1.35× (1.28–1.38× over 3 runs)) and ar at k = 2 "
            "(1.00× (0.70–1.31× over 3 runs)) is within this machine's noise") in said
    assert said.endswith("any of them could be the fastest here.")


@given(st.lists(st.lists(st.floats(0.2, 3.0), min_size=1, max_size=5), min_size=1, max_size=6))
def test_the_fastest_is_claimed_exactly_when_no_other_range_reaches_it(runs):
    tried = {f"d{i} k=2": spread(r) for i, r in enumerate(runs)}
    best = found(tried)
    said = home.fastest_caption(best)
    mine = f"{best['drafter']} k=2"
    reach = [n for n in tried if n != mine and tried[n].high >= best["speedup"].low]
    assert ("was the fastest" in said) == (not reach)
    assert ("within this machine's noise" in said) == bool(reach)
    for n in tried:
        if n != mine:
            assert (f"{n.split()[0]} at k = 2 (" in said) == (n in reach)


def test_the_same_text_line_and_the_answer_say_yes_only_for_texts_equal_token_for_token():
    same = ([" The", " cat"], [" The", " cat"])
    assert home.same_text(*same) == "**Same text:** yes, token for token."
    assert home.same_answer(*same) == "**Answer: the same**, and this race shows it: token for token."
    flipped = ([" The", " cat", " sat"], [" The", " dog", " sat"])
    assert home.same_text(*flipped) == (
        "**Same text:** no. The texts part at token 2: plain decoding chose '␣cat', speculative decoding '␣dog'.")
    assert home.same_answer(*flipped) == (
        "**Answer: the same in exact arithmetic, but not in this race**: its texts part at token 2, where the "
        "numerics flipped a greedy token.")


def test_a_text_that_stops_early_parts_where_it_ends():
    """Catches a comparison by zip alone, which calls a text and its own prefix the same."""
    assert home.first_difference([" a", " b"], [" a"]) == 1
    assert home.same_text([" a", " b"], [" a"]) == (
        "**Same text:** no. The texts part at token 2: plain decoding chose '␣b', speculative decoding the end of "
        "its text.")


def test_token_text_in_the_line_is_shown_as_text_never_as_markup():
    # the escaping itself is tested in test_markup.py; this catches the line bypassing it
    assert home.same_text(["<b>"], ["*"]) == (
        "**Same text:** no. The texts part at token 1: plain decoding chose '&lt;b&gt;', speculative decoding '\\*'.")


@given(st.lists(st.sampled_from([" a", " b", "<b>", "*"]), max_size=6),
       st.lists(st.sampled_from([" a", " b", "<b>", "*"]), max_size=6))
def test_the_line_says_yes_exactly_when_the_texts_are_equal_and_names_where_they_first_part(plain, spec):
    line, answer = home.same_text(plain, spec), home.same_answer(plain, spec)
    assert line.startswith("**Same text:** yes") == (plain == spec)
    assert answer.startswith("**Answer: the same**, and this race") == (plain == spec)
    if plain != spec:
        at = home.first_difference(plain, spec)
        assert plain[:at] == spec[:at] and (at == min(len(plain), len(spec)) or plain[at] != spec[at])
        assert f"at token {at + 1}" in line and f"at token {at + 1}," in answer
        assert "<b>" not in line     # token text is escaped


def runners(plain_ms: float, plain_tokens: int, spec_ms: float, spec_tokens: list[int]) -> tuple:
    """A finished race built by hand (no model): plain decoding's time and tokens, and the speculative
    runner's rounds, each committing `spec_tokens[i]` tokens in an equal share of `spec_ms`."""
    plain = home.Runner("plain", None, elapsed_ms=plain_ms, texts=[("a", "bonus")] * plain_tokens)
    marks, done = [], 0
    for i, n in enumerate(spec_tokens):
        done += n
        marks.append((spec_ms * (i + 1) / len(spec_tokens), done))
    return plain, home.Runner("spec", None, elapsed_ms=spec_ms, texts=[("a", "accepted")] * done, marks=marks)


@pytest.mark.parametrize("spec_ms, spec_tokens, tokens_per_round, round_in_steps, wins", [
    (60.0, [5, 5], 5.0, 3.0, True),     # 5 tokens a round for the time of 3 plain steps (10 ms each)
    (60.0, [1, 3], 2.0, 3.0, False),    # 2 tokens a round for the time of 3 steps: slower than plain
    (60.0, [2, 4], 3.0, 3.0, False),    # exactly as many tokens as steps: a tie, not a win
])
def test_the_verdict_wins_only_where_a_round_commits_more_tokens_than_the_steps_it_costs(
        spec_ms, spec_tokens, tokens_per_round, round_in_steps, wins):
    """Planted on both sides of `wins` and at the tie (plain decoding: 100 ms for 10 tokens, 10 ms a step).
    Catches `>=` (the tie called a win), tokens a round counted per token instead of per round, and a
    round's cost read in ms instead of plain decoding's steps."""
    assert home.verdict(*runners(100.0, 10, spec_ms, spec_tokens)) == {
        "tokens_per_round": tokens_per_round, "round_in_steps": round_in_steps, "wins": wins}


@given(st.integers(1, 10_000), st.integers(1, 200), st.integers(1, 10_000),
       st.lists(st.integers(0, 9), min_size=1, max_size=20))
def test_the_verdict_wins_exactly_when_speculation_took_less_time_a_token(plain_ms, plain_tokens, spec_ms, spec_tokens):
    """More tokens a round than steps a round is the same as fewer ms a token than plain decoding, so the
    verdict's `wins` agrees with the two runners' own times. Catches the comparison turned round and a
    round's cost priced in another runner's step."""
    assume(sum(spec_tokens) > 0)
    plain, spec = runners(float(plain_ms), plain_tokens, float(spec_ms), spec_tokens)
    v = home.verdict(plain, spec)
    assert v["tokens_per_round"] == sum(spec_tokens) / len(spec_tokens)
    assert v["round_in_steps"] == pytest.approx(spec_ms / len(spec_tokens) / (plain_ms / plain_tokens), rel=1e-12)
    spec_side, plain_side = spec_ms * plain_tokens, plain_ms * sum(spec_tokens)   # ms a token, cross-multiplied
    if spec_side != plain_side:   # exact in integers; a tie is left to the planted case, where the floats are exact
        assert v["wins"] == (spec_side < plain_side)


# What the home page says about its replay: slow motion only where the race was faster than the replay

def test_a_race_faster_than_the_replay_is_said_to_be_shown_in_slow_motion():
    """Planted bug: "sped up" (or no direction) for a 1.2 s race replayed over 3 s."""
    said = home.replay_sentence(1200.0, 800.0, 3.0)
    assert said.startswith("Shown in slow motion (2.5× slower than the race)")
    assert "(1200 ms against 800 ms of decoding)" in said and "over 3 seconds" in said


def test_a_race_slower_than_the_replay_is_never_said_to_be_slow_motion():
    """Planted bug: the page's old fixed "Shown in slow motion", false when a loaded machine's slower lane
    took 6 s and the replay squeezes it into 3."""
    said = home.replay_sentence(4000.0, 6000.0, 3.0)
    assert "slow motion" not in said and said.startswith("Shown sped up (2× faster than the race)")


def test_a_race_about_as_long_as_the_replay_claims_neither_direction():
    said = home.replay_sentence(3050.0, 2000.0, 3.0)
    assert said.startswith("Shown at about the race's own pace:")


@given(st.floats(50.0, 20_000.0), st.floats(50.0, 20_000.0), st.sampled_from([2.0, 3.0, 5.0]))
def test_the_replay_is_called_slow_motion_only_where_the_race_was_shorter_than_the_replay(plain, spec, seconds):
    """For any two decode times: "slow motion" only where the slower lane took under the replay's seconds,
    "sped up" only where it took longer, by the factor between them. Catches a fixed "slow motion" beside a
    race that a busy machine stretched past the replay."""
    said = home.replay_sentence(plain, spec, seconds)
    race_s = max(plain, spec) / 1000
    assert ("slow motion" in said) == (seconds / race_s >= 1.05)
    assert ("sped up" in said) == (race_s / seconds >= 1.05)
    assert f"({plain:.0f} ms against {spec:.0f} ms of decoding)" in said


def measured(**tried) -> dict:
    """A planted fastest_setting result: {"ar k=2": (median, low, high), ...}, 3 runs each."""
    spreads = {name.replace("_k", " k="): Spread(*v, 3) for name, v in tried.items()}
    name = max(spreads, key=lambda n: spreads[n].median)
    drafter, k = name.rsplit(" k=", 1)
    return {"drafter": drafter, "k": int(k), "speedup": spreads[name], "tokens": 24, "tried": spreads}


def test_the_race_opens_on_dspark_within_the_noise_of_the_best_and_on_the_best_beyond_it():
    """Planted bugs: DSpark always (the race lost 5 of 5 on a machine where it was slowest), or the best always."""
    near = measured(ar_k2=(1.30, 1.24, 1.36), dspark_k3=(1.26, 1.20, 1.31), dspark_k4=(1.20, 1.10, 1.25))
    assert home.opening_choice(near, ["dspark"]) == ("dspark", 3)
    far = measured(ar_k2=(1.30, 1.24, 1.36), dspark_k3=(1.05, 1.00, 1.10))
    assert home.opening_choice(far, ["dspark"]) == ("ar", 2)
    assert home.opening_choice(far, []) == ("ar", 2)


def test_before_the_race_the_page_says_plainly_when_no_setting_won():
    """The race lost 5 of 5 on its opening setting and nothing on the page said that it would."""
    losing = measured(ar_k2=(0.95, 0.90, 0.97), dspark_k4=(0.90, 0.85, 0.93))
    said = home.opening_sentence(losing, home.opening_choice(losing, ["dspark"]))
    assert "**No setting was faster than plain decoding on this machine**" in said
    winning = measured(ar_k2=(1.30, 1.24, 1.36))
    assert "No setting" not in home.opening_sentence(winning, ("ar", 2))
    noisy = measured(ar_k2=(1.02, 0.95, 1.10))
    assert "within this machine's noise" in home.opening_sentence(noisy, ("ar", 2))


def test_the_fastest_setting_says_whether_its_best_still_loses():
    losing = measured(ar_k2=(0.97, 0.90, 0.99), dspark_k4=(0.80, 0.75, 0.85))
    assert "**Even the fastest setting was slower than plain decoding in every run here.**" in home.fastest_caption(losing)
    assert "slower than plain" not in home.fastest_caption(measured(ar_k2=(1.30, 1.24, 1.36), dspark_k4=(0.8, 0.75, 0.85)))
