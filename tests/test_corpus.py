"""The corpus reader: R's XDR serialisation of a character vector, and the dialogue set."""
import struct
import zlib

from specviz.training.corpus import dialogue_set, lines_to_paragraphs, read_rdb_chunks, read_xdr_strings


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
