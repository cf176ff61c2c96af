"""The host's config file: what it accepts, what it refuses, and how model sets fail to load.

Real files and real models throughout: foreign sets are built from the embedded checkpoints
(they are ordinary Hugging Face Llama models) and from a tiny Llama saved here.
"""
import re
from pathlib import Path

import pytest
import torch

from specviz.generator.engine import Generation
from specviz.generator.models import MODELS_DIR
from specviz.generator.settings import Settings
from specviz.hosting.config import DEFAULT, Limits, ModelSetError, check_limits, choose_set, load_config
from specviz.hosting.model_sets import load_model_set
from tests.paths import ROOT

EXAMPLE = ROOT / "specviz.example.toml"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "specviz.toml"
    path.write_text(text)
    return path


def refusal(tmp_path: Path, text: str) -> str:
    with pytest.raises(ValueError) as e:
        load_config(write(tmp_path, text))
    return str(e.value)


# --- the file -------------------------------------------------------------------------------------

def test_the_example_offers_the_embedded_set_with_class_sized_limits():
    c = load_config(EXAMPLE)
    assert list(c.sets) == ["embedded"] and c.default == "embedded"
    assert c.sets["embedded"].embedded and c.sets["embedded"].device == "auto"
    assert c.limits == Limits(max_new_tokens=128, max_prompt_chars=2000, max_k=16)
    assert c.allow_download is False


def test_the_examples_commented_out_in_the_example_are_valid_once_uncommented(tmp_path):
    text = EXAMPLE.read_text()
    body = text[text.index("# [sets.qwen]"):]
    uncommented = re.sub(r"^# ?", "", body, flags=re.M)
    c = load_config(write(tmp_path, text[:text.index("# [sets.qwen]")] + uncommented))
    assert list(c.sets) == ["embedded", "qwen", "local-llama", "qwen3-8b"]
    assert c.sets["qwen3-8b"].drafters == {"dflash": "z-lab/Qwen3-8B-DFlash-b16",
                                           "dspark": "deepseek-ai/dspark_qwen3_8b_block7"}
    assert c.sets["qwen"].target == "Qwen/Qwen2.5-1.5B-Instruct"
    assert c.sets["qwen"].drafters == {"qwen-small": "Qwen/Qwen2.5-0.5B-Instruct"}
    assert c.sets["qwen"].trust_remote_code is False


def test_without_a_file_the_server_offers_only_the_embedded_set():
    assert list(DEFAULT.sets) == ["embedded"] and DEFAULT.sets["embedded"].embedded
    assert DEFAULT.limits == Limits(128, 2000, 16)
    assert DEFAULT.allow_download is False


def test_the_environment_variable_names_the_file(tmp_path, monkeypatch):
    path = write(tmp_path, '[sets.small]\nembedded = true\n[limits]\nmax_new_tokens = 40\n')
    monkeypatch.setenv("SPECVIZ_CONFIG", str(path))
    assert load_config().default == "small" and load_config().limits.max_new_tokens == 40
    monkeypatch.setenv("SPECVIZ_CONFIG", str(tmp_path / "typo.toml"))
    with pytest.raises(ValueError, match="SPECVIZ_CONFIG names .*typo.toml"):
        load_config()


def test_trust_remote_code_is_off_unless_the_host_turns_it_on(tmp_path):
    c = load_config(write(tmp_path, '[sets.a]\ntarget = "org/a"\n[sets.b]\ntarget = "org/b"\ntrust_remote_code = true\n'))
    assert c.sets["a"].trust_remote_code is False and c.sets["b"].trust_remote_code is True


@pytest.mark.parametrize("text, named", [
    ('[limits]\nmax_new_token = 64\n', "unknown key limits.max_new_token"),
    ('[sets.embedded]\nembedded = true\ndevcie = "cpu"\n', "unknown key sets.embedded.devcie"),
    ('[sets.embedded]\nembedded = true\ndevice = "gpu"\n', "sets.embedded.device must be one of"),
    ('[sets.embedded]\nembedded = true\ndtype = "int8"\n', "sets.embedded.dtype must be one of"),
    ('[limits]\nmax_k = 33\n', "limits.max_k must be a whole number from 1 to 32"),
    ('[limits]\nmax_prompt_chars = "2000"\n', "limits.max_prompt_chars must be a whole number"),
    ('[sets.q]\ntarget = "Qwen/Qwen2.5-0.5B"\ntrust_remote_code = "yes"\n', "sets.q.trust_remote_code must be true or false"),
    ('[sets.q]\ndrafters = {}\n', "sets.q.target is missing"),
    ('[sets.q]\ntarget = "a model"\n', "sets.q.target must be a local path"),
    ('[sets.q]\ntarget = "org/t"\n[sets.q.drafters]\nlookup = "org/d"\n', "sets.q.drafters.lookup"),
    ('[sets.embedded]\nembedded = true\ntarget = "org/t"\n', "unknown key sets.embedded.target"),
    ('default = "big"\n[sets.small]\nembedded = true\n', "default names 'big'"),
    ('[sets]\n', "sets is empty"),
    ('[limits\n', "specviz.toml"),   # a syntax error names the file, with tomllib's line and column
])
def test_a_bad_file_is_refused_with_a_message_naming_the_key(tmp_path, text, named):
    assert named in refusal(tmp_path, text)


# --- what a browser may choose --------------------------------------------------------------------

@pytest.mark.parametrize("asked", ["/work/main/models/target", "../models/target", "./models", "~/models",
                                   "Qwen/Qwen2.5-0.5B", "gpt2", "EMBEDDED", "embedded ", 7])
def test_a_browser_can_name_only_a_configured_set(asked):
    with pytest.raises(ValueError, match="no model set .* choose one of: embedded"):
        choose_set(DEFAULT, asked)


def test_no_choice_means_the_hosts_default():
    assert choose_set(DEFAULT, None) == choose_set(DEFAULT, "") == choose_set(DEFAULT, "embedded") == "embedded"


def test_a_long_request_is_not_echoed_whole():
    with pytest.raises(ValueError) as e:
        choose_set(DEFAULT, "x" * 5000)
    assert len(str(e.value)) < 200


# --- loading sets ---------------------------------------------------------------------------------

def pair_config(tmp_path: Path, drafter: Path) -> str:
    return (f'[sets.embedded]\nembedded = true\n'
            f'[sets.pair]\ntarget = "{MODELS_DIR / "target"}"\ndevice = "cpu"\n'
            f'[sets.pair.drafters]\nsmall = "{drafter}"\n'
            f'[sets.missing]\ntarget = "./nowhere/target"\n'
            f'[sets.offline-hub]\ntarget = "specviz-tests/no-such-model"\n')


def test_a_missing_path_fails_with_one_clear_line_and_the_other_sets_still_load(tmp_path):
    c = load_config(write(tmp_path, pair_config(tmp_path, MODELS_DIR / "drafter-ar")))
    with pytest.raises(ModelSetError) as e:
        load_model_set(c, "missing")
    message = str(e.value)
    assert message == f"model set 'missing': target: no model at {tmp_path / 'nowhere' / 'target'} (no config.json there)"
    m = load_model_set(c, "embedded")
    assert Generation(m, "It is a truth", Settings(max_new_tokens=8)).run().new_ids


def test_a_hub_model_not_in_the_cache_fails_at_once_when_downloads_are_off(tmp_path, monkeypatch):
    # "at once": without opening a single connection (a download attempt would retry for a minute)
    import socket
    connections = []
    monkeypatch.setattr(socket.socket, "connect", lambda self, address: connections.append(address))
    c = load_config(write(tmp_path, pair_config(tmp_path, MODELS_DIR / "drafter-ar")))
    with pytest.raises(ModelSetError, match="specviz-tests/no-such-model is not in this server's Hugging Face "
                                            "cache and downloads are off"):
        load_model_set(c, "offline-hub")
    assert connections == []


def test_a_foreign_pair_by_path_decodes_exactly_like_its_target(tmp_path, models):
    """The embedded target and 1-layer drafter are plain Llama checkpoints: loaded as a foreign
    pair they must give the target's own greedy continuation, and gain the lookup drafter."""
    m = load_model_set(load_config(write(tmp_path, pair_config(tmp_path, MODELS_DIR / "drafter-ar"))), "pair")
    assert sorted(m.drafter_models) == ["lookup", "small"] and m.device.type == "cpu"
    assert m.dtype == torch.float32 and len(m.token_text) == len(models.token_text)
    prompt = "It is a truth universally acknowledged, that"
    plain = Generation(models, prompt, Settings(drafter=None, max_new_tokens=20)).run().new_ids
    for drafter in ("small", "lookup"):
        assert Generation(m, prompt, Settings(drafter=drafter, k=3, max_new_tokens=20)).run().new_ids == plain


def test_a_drafter_with_another_vocabulary_is_refused_by_name(tmp_path):
    from transformers import LlamaConfig, LlamaForCausalLM
    tiny = tmp_path / "tiny"
    LlamaForCausalLM(LlamaConfig(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                 num_attention_heads=2, num_key_value_heads=1)).save_pretrained(tiny)
    c = load_config(write(tmp_path, pair_config(tmp_path, tiny)))
    with pytest.raises(ModelSetError, match="drafter small scores 100 tokens but the target scores 6144"):
        load_model_set(c, "pair")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this server has a CUDA GPU")
def test_asking_for_a_gpu_the_server_lacks_names_the_device():
    c = load_config(EXAMPLE)
    with pytest.raises(ModelSetError, match="device cuda was asked for, but torch sees no CUDA GPU"):
        load_model_set(c, "embedded", device="cuda")


def test_the_hosts_dtype_is_applied_to_every_model_of_the_embedded_set(tmp_path):
    c = load_config(write(tmp_path, '[sets.embedded]\nembedded = true\ndevice = "cpu"\ndtype = "bfloat16"\n'))
    m = load_model_set(c, "embedded")
    assert m.dtype == torch.bfloat16 and m.target.dtype == torch.bfloat16
    assert all(d.dtype == torch.bfloat16 for d in m.drafter_models.values() if d is not None)
    assert 1 <= len(Generation(m, "It is a truth", Settings(drafter="dspark", max_new_tokens=6)).run().new_ids) <= 6


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_on_a_gpu_the_embedded_set_stays_float32_and_cudnn_attention_is_off():
    # bf16 made a recomputed q differ by 3%; cuDNN attention planned every new length (docs/engine.md, "On a GPU")
    m = load_model_set(load_config(EXAMPLE), "embedded", device="cuda")
    assert m.dtype == torch.float32 and m.target.dtype == torch.float32
    assert not torch.backends.cuda.cudnn_sdp_enabled()


# --- limits ---------------------------------------------------------------------------------------

def test_within_the_limits_there_is_nothing_to_say():
    assert check_limits(Limits(), "The best way to learn is to", Settings(k=16, max_new_tokens=128)) == []


def test_each_limit_exceeded_gets_its_own_message_with_the_numbers():
    messages = check_limits(Limits(max_new_tokens=64, max_prompt_chars=10, max_k=8),
                            "x" * 2500, Settings(k=9, max_new_tokens=65))
    assert messages == ["The prompt is 2,500 characters; this server accepts at most 10.",
                        "Max new tokens 65 is above this server's limit of 64 per run.",
                        "Block size 9 is above this server's limit of 8 proposals per round."]


def test_plain_decoding_is_not_held_to_the_block_size_limit():
    assert check_limits(Limits(max_k=2), "Hi", Settings(drafter=None, k=4)) == []
