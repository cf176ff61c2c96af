"""The home race: several races with their spread, the verdict in a round's own numbers, the
setting the page opens with, and the thread count measured on the free cores."""
import torch

from specviz.generator.settings import Settings
from specviz.generator.threads import candidates, fit_threads, free_cores
from specviz.lessons import race

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
