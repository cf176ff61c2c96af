"""Train the byte-level BPE tokenizer shared by the target and every drafter.

Byte-level means any Unicode input (emoji, control characters) encodes without an unknown
token. Two special tokens: `<|endoftext|>` ends a document and stops generation; `<|mask|>`
fills the not-yet-drafted positions of a block drafter's input.

What it leaves out: normalisation (text is kept exactly), added chat templates.
"""
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

EOT, MASK = "<|endoftext|>", "<|mask|>"


def train_tokenizer(train_txt: Path, out_dir: Path, vocab_size: int = 4096) -> PreTrainedTokenizerFast:
    """Train on `train_txt` and save tokenizer.json (+ HF config) into `out_dir`.

    >>> tok = train_tokenizer(Path("corpus/train.txt"), Path("models/tokenizer"))  # doctest: +SKIP
    >>> tok.decode(tok.encode("Yes, of course."))                                    # doctest: +SKIP
    'Yes, of course.'
    """
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[EOT, MASK],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    docs = train_txt.read_text(encoding="utf-8").split(EOT)
    tok.train_from_iterator(docs, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOT, bos_token=EOT,
                                   pad_token=EOT, mask_token=MASK)
    fast.save_pretrained(out_dir)
    return fast
