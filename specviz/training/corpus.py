"""Build the training text from packages: Jane Austen's six novels plus our own dialogue set.

The novels come from Debian's `r-cran-janeaustenr` (MIT-licensed package, public-domain text).
The package stores them as an R lazy-load database (`Rdata.rdb`): a run of chunks, each a
4-byte big-endian length followed by a zlib stream holding one R XDR serialisation of a
character vector (one element per line of the book). We read just enough of R's format to
pull those strings out; anything that is not a character vector is skipped.

The dialogue set is ours, generated from templates below with a fixed seed: someone asks for
something and the answer is "Yes, of course." or "Yes, no problem." with equal odds, so a
parallel drafter meets two equally good continuations and can cross them into "of problem".

What it leaves out: Shakespeare and other sources; deduplication; any cleaning beyond joining
lines into paragraphs.
"""
import random
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

AUSTEN_PACKAGE = "r-cran-janeaustenr"
AUSTEN_RDB = "usr/lib/R/site-library/janeaustenr/data/Rdata.rdb"
EOT = "<|endoftext|>"


def read_rdb_chunks(data: bytes) -> list[bytes]:
    """Split an R lazy-load database into its decompressed serialisations.

    >>> blob = zlib.compress(b"X\\n...")
    >>> read_rdb_chunks(struct.pack(">I", 5) + blob)
    [b'X\\n...']
    """
    chunks, pos = [], 0
    while pos < len(data):
        d = zlib.decompressobj()
        chunks.append(d.decompress(data[pos + 4:]))
        pos = len(data) - len(d.unused_data)
    return chunks


def read_xdr_strings(blob: bytes) -> list[str]:
    """Return the elements of the character vector serialised in `blob` (R XDR, version 2 or 3).

    A character vector is a STRSXP (type 16): flags, length, then one CHARSXP (type 9) per
    element: flags, byte length (-1 for NA), bytes. Attributes after the vector are ignored.
    """
    assert blob[:2] == b"X\n", "not an R XDR serialisation"
    pos = 2
    version, _, _ = struct.unpack(">iii", blob[pos:pos + 12])
    pos += 12
    if version == 3:  # version 3 records the native encoding name
        (n,) = struct.unpack(">i", blob[pos:pos + 4])
        pos += 4 + n
    flags, length = struct.unpack(">ii", blob[pos:pos + 8])
    pos += 8
    if flags & 0xFF != 16:
        return []
    out = []
    for _ in range(length):
        flags, n = struct.unpack(">ii", blob[pos:pos + 8])
        pos += 8
        if n < 0:
            out.append("")
            continue
        out.append(blob[pos:pos + n].decode("utf-8", errors="replace"))
        pos += n
    return out


def lines_to_paragraphs(lines: list[str]) -> list[str]:
    """Join wrapped book lines into paragraphs (blank lines separate them)."""
    paras, cur = [], []
    for line in lines:
        line = line.strip()
        if line:
            cur.append(line)
        elif cur:
            paras.append(" ".join(cur))
            cur = []
    if cur:
        paras.append(" ".join(cur))
    return paras


def austen_books(workdir: Path) -> list[str]:
    """Download the Debian package with apt-get and return the six novels as text."""
    workdir.mkdir(parents=True, exist_ok=True)
    debs = list(workdir.glob(f"{AUSTEN_PACKAGE}_*.deb"))
    if not debs:
        subprocess.run(["apt-get", "download", AUSTEN_PACKAGE], cwd=workdir, check=True)
        debs = list(workdir.glob(f"{AUSTEN_PACKAGE}_*.deb"))
    root = workdir / "pkg"
    subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(root)], check=True)
    books = []
    for blob in read_rdb_chunks((root / AUSTEN_RDB).read_bytes()):
        lines = read_xdr_strings(blob)
        if lines:
            books.append("\n\n".join(lines_to_paragraphs(lines)))
    return books


NAMES = ["Anne", "Tom", "Emma", "Henry", "Jane", "Edward", "Mary", "Charles", "Lucy", "Robert",
         "Kitty", "James", "Fanny", "William", "Harriet", "George", "Eliza", "Frank", "Julia",
         "John", "Marianne", "Walter", "Isabella", "Arthur"]
REQUESTS = ["open the window", "pass me the salt", "carry this basket", "read me the letter",
            "fetch my shawl", "call the carriage", "lend me your pen", "hold the door",
            "light the candle", "walk with me to the village", "help me with the piano",
            "take this note to your sister", "close the curtains", "bring some tea",
            "find my gloves", "wait for me at the gate", "mend this ribbon", "post the letter",
            "keep my seat", "tell your mother I called", "look after the dog", "ring the bell",
            "copy this page", "show me the garden", "set the table", "fetch the doctor"]
ASKS = ["Could you {r}?", "Would you {r}, please?", "Will you {r}?", "Can you {r}?",
        "Might you {r} for me?"]
REPLIES = ["Yes, of course.", "Yes, no problem."]
AFTER = ["{b} said, and did it at once.", "{b} said with a smile.", "{b} said.",
         "said {b}, rising.", "{b} answered."]


def dialogue_set(n: int, seed: int = 0) -> list[str]:
    """Short exchanges where "of course" and "no problem" answer requests equally often.

    >>> dialogue_set(1)[0].count('"Yes, ')
    1
    """
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        a, b = rng.sample(NAMES, 2)
        ask = rng.choice(ASKS).format(r=rng.choice(REQUESTS))
        reply = rng.choice(REPLIES)
        out.append(f'{a} asked, "{ask}" "{reply}" ' + rng.choice(AFTER).format(b=b))
    return out


def build_corpus(out_dir: Path, dialogue_exchanges: int = 6000, heldout_fraction: float = 0.02,
                 seed: int = 0) -> dict:
    """Write train.txt and heldout.txt (documents separated by the end-of-text token).

    Each book is cut into documents of about twenty paragraphs; every dialogue exchange is a
    document of its own. Documents are shuffled with `seed` and the last `heldout_fraction`
    is held out. Returns counts for the model card.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        books = austen_books(Path(tmp))
    docs = []
    for book in books:
        paras = book.split("\n\n")
        docs += ["\n\n".join(paras[i:i + 20]) for i in range(0, len(paras), 20)]
    dialogue = dialogue_set(dialogue_exchanges, seed)
    docs += dialogue
    random.Random(seed).shuffle(docs)
    n_held = max(1, int(len(docs) * heldout_fraction))
    (out_dir / "train.txt").write_text(EOT.join(docs[:-n_held]), encoding="utf-8")
    (out_dir / "heldout.txt").write_text(EOT.join(docs[-n_held:]), encoding="utf-8")
    return {"books": len(books), "book_chars": sum(map(len, books)),
            "dialogue_exchanges": len(dialogue), "documents": len(docs), "heldout_documents": n_held}
