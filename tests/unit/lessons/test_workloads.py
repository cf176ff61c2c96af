"""The two workloads: the training mix keeps them apart where it must (held-out prompts, held-out
files), and lesson 8's comparison measures both with the same models, drafter and k."""
import pytest

from specviz.generator.engine import Generation
from specviz.generator.settings import Settings
from specviz.lessons.workloads import WORKLOADS, compare
from specviz.training.corpus import EOT, build_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The recipe's corpus stage, run as `python -m specviz train corpus` runs it (apt-get download)."""
    out = tmp_path_factory.mktemp("data")
    facts = build_corpus(out)
    return out, facts


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


def test_code_is_held_out_by_whole_file_and_prose_keeps_most_of_the_mix(corpus):
    out, facts = corpus
    train = (out / "train.txt").read_text(encoding="utf-8")
    held_files = (out / "heldout_code.txt").read_text(encoding="utf-8").split(EOT)
    assert len(held_files) == len(facts["heldout_code_files"]) >= 8
    # no held-out file is in the training text (short ones, such as a one-line package comment, can
    # have a twin elsewhere in the library)
    assert all(f not in train for f in held_files if len(f) > 1000)
    assert facts["code_package"].startswith("libpython3.11-stdlib ") and "PSF" in facts["code_license"]
    assert 0.65 <= facts["prose_share_of_characters"] <= 0.8
    assert "    def " in train and '"Yes, of course."' in train


def test_greedy_speculation_on_code_prompts_is_the_targets_own_output(models):
    """Lossless on the second workload too: indentation, quotes and line breaks in the prompt."""
    for prompt in WORKLOADS["code"][:3]:
        plain = Generation(models, prompt, Settings.greedy(None, 16)).run().new_ids
        for drafter in ("ar", "dflash", "dspark", "dloop"):
            assert Generation(models, prompt, Settings.greedy(drafter, 16, block_size=4)).run().new_ids == plain, drafter


def test_the_comparison_measures_both_workloads_with_one_drafter(models):
    res = compare(models, Settings.greedy("dspark", 8, block_size=4), repeats=1, prompts=1)
    assert set(res) == {"prose", "code"}
    for w in res.values():
        assert w["speedup"]["runs"] == 1 and w["speedup"]["median"] > 0
        assert 1 <= w["per_forward"] <= 5          # k = 4: at most 4 accepted and a bonus token
        assert w["draft_ms_per_round"] > 0 and w["verify_ms_per_round"] > 0 and w["plain_ms_per_token"] > 0
