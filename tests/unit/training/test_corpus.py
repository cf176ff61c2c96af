"""The corpus: R's XDR serialisation of a character vector, the dialogue set, code held out by
file, and the token-id cache."""
import struct
import time
import zlib

from transformers import PreTrainedTokenizerFast

from specviz.training.corpus import dialogue_set, lines_to_paragraphs, read_rdb_chunks, read_xdr_strings, split_files
from specviz.training.lm import encode_corpus
from specviz.training.tokenizer import train_tokenizer


def xdr_character_vector(strings: list[str | None]) -> bytes:
    """Serialise a character vector the way R does (XDR, version 3)."""
    out = b"X\n" + struct.pack(">iii", 3, 0x040000, 0x030500) + struct.pack(">i", 5) + b"UTF-8"
    out += struct.pack(">ii", 16, len(strings))
    for s in strings:
        if s is None:
            out += struct.pack(">ii", 9, -1)
        else:
            b = s.encode()
            out += struct.pack(">ii", 0x40009, len(b)) + b
    return out


def test_rdb_chunks_and_strings_are_read_back():
    blob = xdr_character_vector(["It is a truth", "universally acknowledged", None, "Zoë"])
    rdb = b"".join(struct.pack(">I", len(b)) + zlib.compress(b) for b in [blob, blob])
    chunks = read_rdb_chunks(rdb)
    assert len(chunks) == 2
    assert read_xdr_strings(chunks[0]) == ["It is a truth", "universally acknowledged", "", "Zoë"]


def test_wrapped_lines_become_paragraphs():
    assert lines_to_paragraphs(["It is a", "truth.", "", "", "Next"]) == ["It is a truth.", "Next"]


def test_of_course_and_no_problem_are_equally_common():
    d = dialogue_set(4000)
    course, problem = sum("of course" in x for x in d), sum("no problem" in x for x in d)
    assert course + problem == 4000
    assert abs(course - problem) < 200


def test_code_is_held_out_by_whole_files():
    train, held = split_files([f"m{i}.py" for i in range(50)], 0.04, seed=0)
    assert len(held) == 2 and not set(train) & set(held)
    assert sorted(train + held) == sorted(f"m{i}.py" for i in range(50))
    assert split_files([f"m{i}.py" for i in range(50)], 0.04, seed=0) == (train, held)


def test_the_id_cache_follows_a_retrained_tokenizer(tmp_path):
    """Planted bug: a cache keyed on the text alone hands out the old tokenizer's ids."""
    txt = tmp_path / "train.txt"
    txt.write_text("the cat sat on the mat<|endoftext|>the cat sat", encoding="utf-8")
    first = train_tokenizer(txt, tmp_path / "tok", vocab_size=264)
    before = encode_corpus(PreTrainedTokenizerFast.from_pretrained(tmp_path / "tok"), txt)
    time.sleep(0.05)
    train_tokenizer(txt, tmp_path / "tok", vocab_size=259)      # same text, fewer merges
    retrained = PreTrainedTokenizerFast.from_pretrained(tmp_path / "tok")
    after = encode_corpus(retrained, txt)
    assert len(first) != len(retrained)
    assert after.tolist() == [i for doc in txt.read_text().split("<|endoftext|>")
                              for i in retrained.encode(doc) + [retrained.convert_tokens_to_ids("<|endoftext|>")]]
    assert before.tolist() != after.tolist()


def test_the_id_cache_is_not_handed_to_an_older_tokenizer(tmp_path):
    """Planted bug: a cache judged by modification times alone is newer than an older tokenizer's
    file, and hands that tokenizer the ids of the one that wrote it."""
    txt = tmp_path / "train.txt"
    txt.write_text("the cat sat on the mat<|endoftext|>the cat sat", encoding="utf-8")
    train_tokenizer(txt, tmp_path / "old", vocab_size=259)
    time.sleep(0.05)
    train_tokenizer(txt, tmp_path / "new", vocab_size=264)
    old, new = (PreTrainedTokenizerFast.from_pretrained(tmp_path / d) for d in ("old", "new"))
    assert encode_corpus(new, txt).tolist() == ids_of(new, txt)
    assert encode_corpus(old, txt).tolist() == ids_of(old, txt)
    assert ids_of(old, txt) != ids_of(new, txt)


def ids_of(tok, txt) -> list[int]:
    """The ids encode_corpus must return, encoded here without any cache."""
    eot = tok.convert_tokens_to_ids("<|endoftext|>")
    return [i for doc in txt.read_text().split("<|endoftext|>") for i in tok.encode(doc) + [eot]]
