"""A host's model set with published block drafters, the command line on it, and chat templates.

The set's target is a copy of the embedded target whose tokenizer carries a chat template (its
weights linked, not copied); its drafters are tiny checkpoints in z-lab's and DeepSpec's
layouts (tests/published_layouts.py).
"""
import json
import subprocess
import sys

import pytest
import torch

from specviz.generator.engine import CHAT_NOTICE, Generation
from specviz.generator.models import MODELS_DIR
from specviz.generator.settings import Settings
from specviz.hosting.config import ModelSetError, load_config
from specviz.hosting.model_sets import load_model_set
from specviz.lessons.bench import bench
from specviz.lessons.workloads import WORKLOADS
from tests import published_layouts as layouts

# Qwen3's convention: thinking off leaves an empty think section before the answer
TEMPLATE = ("{% for m in messages %}<|endoftext|>{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
            "{% if add_generation_prompt %}assistant:{% if enable_thinking is defined and not enable_thinking %}"
            " <think></think>{% endif %}{% endif %}")


@pytest.fixture(scope="module")
def host(tmp_path_factory, models):
    root = tmp_path_factory.mktemp("host")
    target = root / "target"
    target.mkdir()
    for f in (MODELS_DIR / "target").iterdir():
        (target / f.name).symlink_to(f)
    (target / "tokenizer_config.json").unlink()
    tok_config = json.loads((MODELS_DIR / "target" / "tokenizer_config.json").read_text())
    (target / "tokenizer_config.json").write_text(json.dumps(tok_config | {"chat_template": TEMPLATE}))
    weights = layouts.native(root / "native", block_size=4)
    layouts.write(root / "zlab", layouts.zlab_config(4), layouts.zlab_weights(weights))
    layouts.write(root / "dspark", layouts.deepspec_config(3, 8, True),
                  layouts.deepspec_weights(weights, models.target, 8, True))
    layouts.write(root / "other-vocab", layouts.zlab_config(4, vocab_size=5000), layouts.zlab_weights(weights))
    (root / "specviz.toml").write_text(
        '[sets.chat]\nlabel = "chat target"\ntarget = "./target"\ndevice = "cpu"\n'
        '[sets.chat.drafters]\nzlab = "./zlab"\nspark = "./dspark"\n'
        '[sets.bad]\ntarget = "./target"\ndevice = "cpu"\n[sets.bad.drafters]\nflash = "./other-vocab"\n')
    return root


@pytest.fixture(scope="module")
def chat_set(host):
    return load_model_set(load_config(host / "specviz.toml"), "chat")


def test_published_drafters_load_from_the_config_with_their_kind_and_a_dloop_variant(chat_set):
    assert list(chat_set.drafter_models) == ["zlab", "zlab-dloop", "spark", "spark-dloop", "lookup"]
    assert (chat_set.kind("zlab"), chat_set.kind("spark")) == ("DFlash · z-lab", "DSpark · DeepSpec")
    assert chat_set.block_drafters() == ["zlab", "spark"] and chat_set.block_drafters(confidence=True) == ["spark"]
    assert chat_set.looping == ("zlab-dloop", "spark-dloop")
    r = Generation(chat_set, "Hello", Settings.greedy("spark-dloop", 12, k=3, loop_threshold=-1e9)).step()
    assert len(r.drafter_info["stages"]) == 3   # an always-open gate runs every stage


def test_a_drafter_for_another_vocabulary_is_refused_naming_set_drafter_and_file(host):
    with pytest.raises(ModelSetError) as e:
        load_model_set(load_config(host / "specviz.toml"), "bad")
    assert str(e.value) == (f"model set 'bad': drafter flash: {host / 'other-vocab' / 'config.json'}: made for a "
                            f"vocabulary of 5000 tokens; the target scores 6144")


def test_a_chat_target_reads_the_prompt_through_its_template_with_thinking_off(chat_set):
    trace = Generation(chat_set, "Hello there", Settings.greedy(None, 4)).run()
    assert "".join(trace.prompt_tokens) == "<|endoftext|>user: Hello there\nassistant: <think></think>"
    assert trace.notices == [CHAT_NOTICE]
    assert trace.prompt_ids == chat_set.tokenizer.encode("<|endoftext|>user: Hello there\nassistant: <think></think>")


def test_greedy_stays_lossless_through_the_template(chat_set):
    plain = Generation(chat_set, "Hello there", Settings.greedy(None, 16)).run().new_ids
    for d in ("zlab", "spark", "zlab-dloop"):
        assert Generation(chat_set, "Hello there", Settings.greedy(d, 16, k=3)).run().new_ids == plain, d


@pytest.mark.slow   # a process of its own, loading torch and the set
def test_the_command_line_runs_a_configured_set_as_the_app_does(host, chat_set):
    out = subprocess.run([sys.executable, "-m", "specviz", "generate", "--config", str(host / "specviz.toml"),
                          "--set", "chat", "--drafter", "spark", "--prompt", "Hello there", "-k", "3",
                          "--max-new-tokens", "10", "--temperature", "0", "--json"],
                         capture_output=True, text=True, check=True)
    ran = json.loads(out.stdout)
    here = Generation(chat_set, "Hello there", Settings.greedy("spark", 10, k=3)).run()
    assert ran["new_token_ids"] == here.new_ids and ran["prompt_token_ids"] == here.prompt_ids
    assert [r["proposed"] for r in ran["rounds"]] == [r.proposed for r in here.rounds]


@pytest.mark.slow
def test_the_command_line_refuses_what_the_host_refuses(host):
    def run(*extra):
        return subprocess.run([sys.executable, "-m", "specviz", "generate", "--config", str(host / "specviz.toml"),
                               "--prompt", "Hello", *extra], capture_output=True, text=True)
    r = run("--set", "chat", "--drafter", "zlab", "-k", "20")
    assert r.returncode != 0 and "Block size 20 is above this server's limit of 16" in r.stderr
    r = run("--set", "bad")
    assert r.returncode != 0 and "model set 'bad': drafter flash" in r.stderr


def test_the_bench_runs_a_configured_set_and_loops_its_own_looping_drafters(chat_set):
    """The bench on the host's set, in this process (the command line reaching a configured set is the
    test of generate above): its DLoop variant is swept over its loop block sizes and thresholds."""
    out = bench(chat_set, ["spark", "spark-dloop"], [3], max_new_tokens=4, repeats=1, prompts=WORKLOADS["prose"][:1])
    methods = out["methods"]
    assert list(methods["spark"]["variants"]) == ["k=3"]
    assert list(methods["spark-dloop"]["variants"]) == [f"k={k} g={g}" for k in (2, 3, 4) for g in (-1.0, -2.0, -4.0)]
    assert out["greedy_mismatches"] == []
