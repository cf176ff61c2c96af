"""The command line, run as a user would run it."""
import json
import subprocess
import sys

import pytest

from specviz.generator.drafters.names import DRAFTERS
from specviz.lessons.workloads import WORKLOADS

# a test marked slow starts processes of its own that import torch and load the models: about 7 s
# each on a quiet 2-core CPU; bad input is refused before the models load, in a second or two


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "specviz", *args], capture_output=True, text=True, timeout=600)


def refused(*args) -> subprocess.CompletedProcess:
    """`python -m specviz ARGS`, run as -m runs it (runpy), that must fail; its stderr ends by saying
    whether the models' loader (specviz.generator.models) had been imported by then."""
    code = ("import runpy, sys\n"
            f"sys.argv = ['specviz', *{list(args)!r}]\n"
            "try:\n"
            "    runpy.run_module('specviz', run_name='__main__', alter_sys=True)\n"
            "finally:\n"
            "    print('loader imported:', 'specviz.generator.models' in sys.modules, file=sys.stderr)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode != 0, r.stdout
    return r


@pytest.mark.slow
def test_models_json_names_the_target_and_drafters():
    out = json.loads(cli("models", "--json").stdout)
    assert out["target"].endswith("target")
    assert out["drafters"]["lookup"] is None and out["drafters"]["ar"].endswith("drafter-ar")


@pytest.mark.slow
def test_generate_json_has_text_ids_and_rounds():
    r = cli("generate", "--prompt", "The best way to learn is to", "--drafter", "ar", "--verifier", "greedy",
            "-k", "4", "--max-new-tokens", "12", "--temperature", "0", "--top-k", "0",
            "--top-p", "1", "--seed", "0", "--json")
    out = json.loads(r.stdout)
    assert isinstance(out["text"], str) and all(isinstance(i, int) for i in out["prompt_token_ids"])
    assert len(out["new_token_ids"]) == 12
    assert sum(len(x["emitted"]) for x in out["rounds"]) == 12
    assert {"proposed", "accepted", "emitted", "draft_ms", "verify_ms"} <= set(out["rounds"][0])


@pytest.mark.slow
def test_generate_prints_text_and_a_round_table():
    r = cli("generate", "--prompt", "Emma could not help thinking that", "--drafter", "none", "--max-new-tokens", "5")
    assert r.returncode == 0 and "round" in r.stdout and "ms/token" in r.stdout


def test_bad_input_is_one_clear_line_not_a_traceback_before_any_model_loads():
    for args, said in ((["generate", "--prompt", "   "], "prompt is empty"),
                       (["generate", "--prompt", "Hi", "-k", "0"], "block size"),
                       (["profile", "--max-width", "0"], "--max-width must be between 1 and 64, got 0")):
        r = refused(*args)
        assert said in r.stderr and "Traceback" not in r.stderr, args
        assert "loader imported: False" in r.stderr, args


@pytest.mark.slow
def test_bench_reports_each_workload_apart():
    """`bench` as a user runs it, both workloads (one workload's report alone: the doctest of specviz.lessons.bench.bench_json)."""
    both = json.loads(cli("bench", "--json", "--repeats", "1", "--max-new-tokens", "6", "--ks", "2",
                          "--drafters", "ar,lookup").stdout)
    assert set(both) == {"workloads"} and set(both["workloads"]) == {"prose", "code"}
    for workload, out in both["workloads"].items():
        assert out["settings"]["prompts"] == len(WORKLOADS[workload])
        assert out["baseline"]["ms_per_token"] > 0
        for name in ("ar", "lookup"):
            m = out["methods"][name]
            assert m["acceptance_length"] >= 1 and m["ms_per_token"] > 0 and m["speedup"] > 0
        assert out["greedy_mismatches"] == []


def test_bench_refuses_a_workload_it_does_not_have_before_any_model_loads():
    r = refused("bench", "--workload", "math")
    assert "invalid choice: 'math'" in r.stderr and "loader imported: False" in r.stderr


@pytest.mark.slow
def test_profile_json_has_the_sps_table_and_the_layouts_timed_at_load():
    r = cli("profile", "--json", "--max-width", "3", "--repeats", "1")
    out = json.loads(r.stdout)
    assert out["hardware"] and len(out["sps"]) == 3 and all(steps > 0 for steps in out["sps"])
    assert {row["rows"] for row in out["layouts"]} == {1, 5}            # the embedded set runs on the CPU
    assert {row["layer"] for row in out["layouts"]} >= {"384 → 6144"}   # the LM head among them


def test_train_help_lists_the_recipes_steps_without_importing_torch():
    """`train`'s options come from the recipe's plain numbers (specviz.training.recipe), not from the
    stages that import every trainer: a `--help` or a typo costs no torch import."""
    code = ("import sys\nfrom specviz.__main__ import main\n"
            "try:\n    main(['train', '--help'])\nexcept SystemExit:\n    pass\n"
            "print('torch imported:', 'torch' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert "--target-steps TARGET_STEPS" in r.stdout and "--loop-steps LOOP_STEPS" in r.stdout, r.stdout
    assert "torch imported: False" in r.stdout


def test_generate_help_names_every_registered_drafter():
    r = subprocess.run([sys.executable, "-m", "specviz", "generate", "--help"], capture_output=True, text=True, timeout=600)
    said = " ".join(r.stdout.split())
    assert ", ".join(d.name for d in DRAFTERS) + " (or a configured set's drafter)" in said, said
