"""Build the training text from packages: Jane Austen's six novels, our own dialogue set, and
Python's standard library as the second workload (code).

The novels come from Debian's `r-cran-janeaustenr` (MIT-licensed package, public-domain text).
The package stores them as an R lazy-load database (`Rdata.rdb`): a run of chunks, each a
4-byte big-endian length followed by a zlib stream holding one R XDR serialisation of a
character vector (one element per line of the book). We read just enough of R's format to
pull those strings out; anything that is not a character vector is skipped.

The dialogue set is ours, generated from templates below with a fixed seed: someone asks for
something and the answer is "Yes, of course." or "Yes, no problem." with equal odds, so a
parallel drafter meets two equally good continuations and can cross them into "of problem".

The code is the Python standard library from Debian's `libpython3.11-stdlib` (PSF License 2.0;
the package is pinned by name, Python 3.11, and the version apt-get fetched is recorded in
corpus.json and the model cards, since Debian replaces a stable version with its security
updates). It is split by file: a held-out file was never read by any training stage, so its
perplexity and the bench's code prompts measure what transfers, not what was memorised. The
library's core modules, which Debian ships apart in `libpython3.11-minimal` (os, re, typing,
collections...; same licence), only train: they double the code a long run can read without
repeating it, and leave the held-out files as the split of the first package chose them.

The mix writes the prose `prose_repeats` times beside one copy of the code: the novels are
smaller than the library, and a model that sees too little prose gets worse at it (held-out
prose perplexity is the number the prose lessons depend on); more copies than two, over a run of
several passes, and the model learns the novels by heart and gets worse at new prose.

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
CODE_PACKAGE = "libpython3.11-stdlib"
CORE_PACKAGE = "libpython3.11-minimal"
CODE_ROOT = "usr/lib/python3.11"
CODE_LICENSE = "PSF-2.0 (Python Software Foundation License Version 2)"
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


def unpack(package: str, workdir: Path) -> tuple[Path, str]:
    """Download a Debian package with apt-get, unpack it; return its root and its version."""
    workdir.mkdir(parents=True, exist_ok=True)
    debs = list(workdir.glob(f"{package}_*.deb"))
    if not debs:
        subprocess.run(["apt-get", "download", package], cwd=workdir, check=True)
        debs = list(workdir.glob(f"{package}_*.deb"))
    root = workdir / package
    subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(root)], check=True)
    version = debs[0].name.split("_")[1].replace("%3a", ":")
    return root, version


def austen_books(workdir: Path) -> list[str]:
    """The six novels as text, from the Debian package."""
    root, _ = unpack(AUSTEN_PACKAGE, workdir)
    books = []
    for blob in read_rdb_chunks((root / AUSTEN_RDB).read_bytes()):
        lines = read_xdr_strings(blob)
        if lines:
            books.append("\n\n".join(lines_to_paragraphs(lines)))
    return books


def python_files(workdir: Path, package: str = CODE_PACKAGE) -> tuple[dict[str, str], str]:
    """{path under the library: source} of every module in a Debian package, and its version."""
    root, version = unpack(package, workdir)
    lib = root / CODE_ROOT
    files = {str(f.relative_to(lib)): f.read_text(encoding="utf-8", errors="replace")
             for f in sorted(lib.rglob("*.py")) if f.is_file()}
    return files, version


def split_files(paths: list[str], heldout_fraction: float, seed: int) -> tuple[list[str], list[str]]:
    """(train, held-out) file names: a seeded shuffle of the sorted names, the last ones held out.

    >>> split_files(["a.py", "b.py", "c.py", "d.py"], 0.25, seed=0)
    (['c.py', 'a.py', 'b.py'], ['d.py'])
    """
    names = sorted(paths)
    random.Random(seed).shuffle(names)
    n_held = max(1, round(len(names) * heldout_fraction))
    return names[:-n_held], names[-n_held:]


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
                 code_heldout_fraction: float = 0.04, prose_repeats: int = 2, seed: int = 0) -> dict:
    """Write train.txt (the mix), heldout.txt (prose) and heldout_code.txt (code), documents
    separated by the end-of-text token.

    Each book is cut into documents of about twenty paragraphs; every dialogue exchange is a
    document of its own. Prose documents are shuffled with `seed` and the last
    `heldout_fraction` is held out; code is held out by file (`split_files`). The training
    prose is written `prose_repeats` times beside the training code, and the mix is shuffled.
    Returns counts for the model cards.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        books = austen_books(Path(tmp))
        code, code_version = python_files(Path(tmp))
        core, core_version = python_files(Path(tmp), CORE_PACKAGE)
    docs = []
    for book in books:
        paras = book.split("\n\n")
        docs += ["\n\n".join(paras[i:i + 20]) for i in range(0, len(paras), 20)]
    dialogue = dialogue_set(dialogue_exchanges, seed)
    docs += dialogue
    random.Random(seed).shuffle(docs)
    n_held = max(1, int(len(docs) * heldout_fraction))
    code_train, code_held = split_files(list(code), code_heldout_fraction, seed)
    mix = docs[:-n_held] * prose_repeats + [code[f] for f in code_train] + list(core.values())
    random.Random(seed + 1).shuffle(mix)
    (out_dir / "train.txt").write_text(EOT.join(mix), encoding="utf-8")
    (out_dir / "heldout.txt").write_text(EOT.join(docs[-n_held:]), encoding="utf-8")
    (out_dir / "heldout_code.txt").write_text(EOT.join(code[f] for f in code_held), encoding="utf-8")
    prose_chars = sum(map(len, docs[:-n_held])) * prose_repeats
    code_chars = sum(len(code[f]) for f in code_train) + sum(map(len, core.values()))
    return {"books": len(books), "book_chars": sum(map(len, books)),
            "dialogue_exchanges": len(dialogue), "documents": len(docs), "heldout_documents": n_held,
            "prose_repeats": prose_repeats, "code_package": f"{CODE_PACKAGE} {code_version}",
            "code_license": CODE_LICENSE, "code_files": len(code_train), "heldout_code_files": code_held,
            "core_package": f"{CORE_PACKAGE} {core_version}", "core_files": len(core),
            "prose_share_of_characters": round(prose_chars / (prose_chars + code_chars), 3)}
