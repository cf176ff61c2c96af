"""A model set small enough to enumerate: a 6-token vocabulary, a 2-layer Llama target and one
drafter of every kind, with random weights drawn from a fixed seed.

The weights are random but spread wide (std 0.6 instead of 0.02) so that p and q are neither
uniform nor one-hot and differ from one history to the next: a verifier that used the wrong
position's distribution then moves the output by a visible amount. The Markov head of the
DSpark drafters is drawn too (training starts it at zero), so its corrected q differs from
DFlash's.

What it leaves out: training; these models mean nothing, they only have to be fixed and small.
"""
import torch
from tokenizers import Tokenizer, models as tok_models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from specviz.generator.drafters.block_model import BlockDrafterConfig, BlockDrafterModel
from specviz.generator.models import ModelSet

WORDS = ["<|endoftext|>", "a", "b", "c", "d", "e"]   # id 0 is end-of-text, as in the embedded set
V = len(WORDS)
HIDDEN = 16


def tokenizer() -> PreTrainedTokenizerFast:
    """Whitespace-separated words, one id each: encode("a b") == [1, 2]."""
    tok = Tokenizer(tok_models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="e"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=WORDS[0], unk_token="e")


def spread(model: torch.nn.Module, seed: int, std: float = 0.6) -> torch.nn.Module:
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * std + (1.0 if p.dim() == 1 else 0.0))
    return model.eval()


def llama(layers: int, seed: int) -> LlamaForCausalLM:
    config = LlamaConfig(vocab_size=V, hidden_size=HIDDEN, intermediate_size=32, num_hidden_layers=layers,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64,
                         tie_word_embeddings=False, bos_token_id=0, eos_token_id=0, pad_token_id=0)
    return spread(LlamaForCausalLM(config), seed)


def block_drafter(target, markov_rank: int, seed: int) -> BlockDrafterModel:
    config = BlockDrafterConfig(hidden_size=HIDDEN, num_layers=1, num_heads=2, intermediate_size=32,
                                target_layers=(0, 1), vocab_size=V, mask_token_id=V - 1, markov_rank=markov_rank)
    return spread(BlockDrafterModel(config), seed).attach_target(target)


def tiny_models() -> ModelSet:
    """The tiny set: drafters ar, lookup, dflash, dspark, dloop (dspark's weights, run in stages)."""
    target = llama(2, seed=1)
    dspark = block_drafter(target, markov_rank=4, seed=3)
    drafters = {"ar": llama(1, seed=2), "lookup": None, "dflash": block_drafter(target, 0, seed=4),
                "dspark": dspark, "dloop": dspark}
    return ModelSet(name="tiny", tokenizer=tokenizer(), target=target, drafter_models=drafters,
                    paths={"target": None, "drafters": {}}, device=torch.device("cpu"), dtype=torch.float32,
                    token_text=list(WORDS))
