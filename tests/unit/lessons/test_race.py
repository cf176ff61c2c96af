"""The home race: several races with their spread, the verdict in a round's own numbers, the
setting the page opens with, and the thread count measured on the free cores."""
import pytest
import torch
from hypothesis import given, strategies as st

from specviz.generator.settings import Settings
from specviz.generator.threads import candidates, fit_threads, free_cores
from specviz.lessons import race
from specviz.lessons.protocol import Spread

PROMPT = "The best way to learn is to"


def test_races_repeat_and_the_median_race_is_replayed(models):
    res = race.run(models, PROMPT, Settings.greedy("ar", 12, block_size=3), races=3)
    assert len(res["races"]) == 3 and res["speedup"].n == 3
    speedups = [p.ms_per_token / s.ms_per_token for p, s in res["races"]]
    assert res["speedup"].low == min(speedups) and res["speedup"].high == max(speedups)
    assert speedups[res["median"]] == res["speedup"].median
    for plain, spec in res["races"]:     # every race is lossless: the same greedy text
        assert [t for t, _ in plain.texts] == [t for t, _ in spec.texts]


def test_the_verdict_compares_tokens_per_round_with_the_round_in_steps(models):
    plain, spec = race.finish(race.start(models, PROMPT, Settings.greedy("ar", 12, block_size=3)))
    v = race.verdict(plain, spec)
    assert v["tokens_per_round"] == len(spec.texts) / len(spec.marks)
    assert 1.0 <= v["tokens_per_round"] <= 4.0          # one correction or bonus, at most k + 1
    assert v["wins"] == (spec.ms_per_token < plain.ms_per_token)


def test_the_opening_setting_is_the_fastest_measured(models):
    best = race.fastest_setting(models, PROMPT, ["ar", "lookup"], block_sizes=(2, 4), tokens=8)
    assert set(best["tried"]) == {"ar k=2", "ar k=4", "lookup k=2", "lookup k=4"}
    label = f"{best['drafter']} k={best['block_size']}"
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
    said_tone, said = race.explain(speed, why)
    assert said_tone == tone
    assert "**2.40 tokens**" in said and "**2.00 one-token steps**" in said
    assert ("within this machine's noise" in said) == (tone == "noise")
    assert ("so it wins" in said) == (tone == "won")
    assert ("lost" in said) == (tone == "lost")


@given(st.lists(st.floats(0.2, 5.0), min_size=1, max_size=9))
def test_the_race_never_claims_a_direction_its_races_do_not_all_share(speedups):
    low, high = min(speedups), max(speedups)
    tone, _ = race.explain(Spread(sorted(speedups)[(len(speedups) - 1) // 2], low, high, len(speedups)),
                           {"tokens_per_round": 2.0, "round_in_steps": 1.5, "wins": True})
    assert tone == ("won" if low > 1 else "lost" if high < 1 else "noise")
