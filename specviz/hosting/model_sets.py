"""Load a model set the host's config names (specviz.hosting.config), on the device it asks for.

The embedded set comes from specviz.generator.models. A foreign set is a Hugging Face causal-LM
target with drafters that share its tokenizer: causal LMs, or block drafters in our format or a
published one (z-lab's DFlash, DeepSpec's DSpark and DFlash, transformers' DFlash assistant:
detected from config.json and checked against the target, see specviz.generator.drafters.published;
each also offered as NAME-dloop, run in DLoop's stages). Hub ids load from the local Hugging Face
cache only (HF_HUB_OFFLINE semantics, so a server with no network fails at once instead of retrying
for a minute) unless the host sets `allow_download = true`. Every foreign set also gets the
model-free drafters the registry offers every set (`lookup`; specviz.generator.drafters.names).

A set that cannot load raises `ModelSetError` with one line that says why; other sets are
unaffected, and memory the failed attempt took is given back before the error leaves.

What it leaves out: revisions of hub models (pin them by downloading a revision and naming its
local path).
"""
import gc
import json
import os
from dataclasses import replace
from pathlib import Path

import torch
from transformers import AutoTokenizer

from specviz.generator.devices import pick_device
from specviz.generator.drafters.block_model import BlockDrafterConfig
from specviz.generator.drafters.names import EVERY_SET, LOOP_SUFFIX
from specviz.generator.drafters.published import detect
from specviz.generator.models import ModelSet, load_embedded, load_model
from specviz.hosting.config import Config, ModelSetError, SetConfig, is_path, choose_set

TORCH_DTYPES = {"auto": None, "float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def load_model_set(config: Config, name: str, device: str | None = None) -> ModelSet:
    """Load one configured set; `device` (e.g. the sidebar's "cpu" or "cuda:0") overrides its config.

    Raises ModelSetError with one line naming the set and the part that failed.

    >>> load_model_set(load_config(), "embedded").drafter_models.keys()  # doctest: +SKIP
    dict_keys(['ar', 'lookup', 'dflash', 'dspark', 'dloop', 'dloop-plain'])
    """
    spec = config.sets[choose_set(config, name)]
    try:
        dev, dtype = _device(device or spec.device), TORCH_DTYPES[spec.dtype]   # dtype None: the loader's own
        if spec.embedded:
            return _embedded(spec, dev, dtype)
        return _foreign(spec, dev, dtype or pick_device(str(dev))[1], config.allow_download)
    except Exception as e:   # any failure (files, network, memory, a model's own code) must not reach the page
        error = f"model set {spec.name!r}: {_one_line(e)}"
    # outside the except block nothing holds the half-loaded models any more: give their memory back
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    raise ModelSetError(error)


def _one_line(e: Exception) -> str:
    lines = [s.strip() for s in str(e).splitlines() if s.strip()]
    return lines[0] if lines else type(e).__name__


def _device(device: str) -> torch.device:
    """The device a set runs on; "auto" follows specviz.generator.devices.pick_device."""
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ModelSetError(f"device {device} was asked for, but torch sees no CUDA GPU on this server")
    if device == "mps" and not torch.backends.mps.is_available():
        raise ModelSetError("device mps was asked for, but torch sees no Apple GPU on this server")
    return pick_device(None if device == "auto" else device)[0]


def _embedded(spec: SetConfig, dev: torch.device, dtype: torch.dtype | None) -> ModelSet:
    """The shipped set in specviz.generator.models' dtype, or in `dtype` when the host names one."""
    m = load_embedded(str(dev))
    if dtype not in (None, m.dtype):
        for model in {id(x): x for x in [m.target, *m.drafter_models.values()] if x is not None}.values():
            model.to(dtype)   # in place, so block drafters keep their link to the target
    return replace(m, name=spec.name, dtype=dtype or m.dtype)


def _foreign(spec: SetConfig, dev: torch.device, dtype: torch.dtype, allow_download: bool) -> ModelSet:
    offline = not allow_download or os.environ.get("HF_HUB_OFFLINE", "0") not in ("", "0")
    # passed only when the host turned it on, so a model's own code never runs by default
    extra = {"local_files_only": offline} | ({"trust_remote_code": True} if spec.trust_remote_code else {})

    def locate(source: str, what: str) -> str:
        if is_path(source):
            path = (spec.base_dir / Path(source).expanduser()).resolve()
            if not (path / "config.json").is_file():
                raise ModelSetError(f"{what}: no model at {path} (no config.json there)")
            return str(path)
        if offline and not _cached(source):
            raise ModelSetError(f"{what}: {source} is not in this server's Hugging Face cache and downloads are "
                                f"off (run `hf download {source}` first, or set allow_download = true)")
        return source

    def causal_lm(path: str, what: str):
        try:
            return load_model(path, dev, dtype, **extra)
        except Exception as e:
            raise ModelSetError(f"{what}: {_one_line(e)}") from e

    paths = {"target": locate(spec.target, "target"),
             "drafters": {d: locate(s, f"drafter {d}") for d, s in spec.drafters.items()}}
    try:
        tok = AutoTokenizer.from_pretrained(paths["target"], **extra)
    except Exception as e:
        raise ModelSetError(f"tokenizer of {spec.target}: {_one_line(e)}") from e
    if tok.eos_token_id is None:
        raise ModelSetError(f"the tokenizer of {spec.target} has no end-of-text token, which the engine needs")
    target = causal_lm(paths["target"], f"target {spec.target}")
    vocab = target.get_output_embeddings().weight.shape[0]
    drafters, looping = {}, []
    for d, path in list(paths["drafters"].items()):
        folder = _block_folder(path, offline)
        if folder is None:
            drafters[d] = causal_lm(path, f"drafter {d}")
            if (n := drafters[d].get_output_embeddings().weight.shape[0]) != vocab:
                raise ModelSetError(f"drafter {d} scores {n} tokens but the target scores {vocab}: "
                                    f"a drafter must share the target's tokenizer")
            continue
        try:   # a block drafter reads the target: load_model checks that it fits
            drafters[d] = load_model(folder, dev, dtype, target)
        except Exception as e:
            raise ModelSetError(f"drafter {d}: {_one_line(e)}") from e
        loop = d + LOOP_SUFFIX
        if loop in spec.drafters:
            raise ModelSetError(f"drafter {loop}: the name is taken by drafter {d}'s DLoop variant")
        drafters[loop], paths["drafters"][loop] = drafters[d], path
        looping.append(loop)
    for name in EVERY_SET:   # the model-free drafters (specviz.generator.drafters.names)
        drafters[name] = paths["drafters"][name] = None
    # one text per id the target can score (a padded vocabulary has ids the tokenizer never emits)
    text = tok.batch_decode([[i] for i in range(min(len(tok), vocab))]) + [""] * max(0, vocab - len(tok))
    return ModelSet(spec.name, tok, target, drafters, paths, dev, dtype, text, looping=tuple(looping),
                    chat=bool(getattr(tok, "chat_template", None)))


def _block_folder(source: str, offline: bool) -> Path | None:
    """The local folder of a block drafter (ours or a published one), or None for a causal LM.

    Only config.json is fetched to decide; a block drafter's folder is then completed from the hub
    (or from the cache alone when downloads are off), since its weights load from files.
    """
    if is_path(source):
        folder = Path(source)
    else:
        from huggingface_hub import hf_hub_download
        folder = Path(hf_hub_download(source, "config.json", local_files_only=offline)).parent
    raw = json.loads((folder / "config.json").read_text())
    if raw.get("model_type") != BlockDrafterConfig.model_type and detect(raw, folder / "config.json") is None:
        return None
    if not is_path(source):
        from huggingface_hub import snapshot_download
        folder = Path(snapshot_download(source, local_files_only=offline))
    return folder


def _cached(repo_id: str) -> bool:
    from huggingface_hub import try_to_load_from_cache
    return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)
