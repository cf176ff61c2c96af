"""The glossary: every entry names its source, every term is there once, and the terms the
sources keep apart stay apart."""
from specviz.lessons import glossary


def test_every_glossary_entry_names_a_source_and_terms_are_unique():
    sources = {glossary.CHECKS_AHEAD, glossary.DRAFT_VERIFY, glossary.APP}
    assert all(source in sources and definition.endswith(".") for _, definition, source in glossary.ENTRIES)
    assert len(glossary.TERMS) == len(glossary.ENTRIES)
    for term in ("anchor", "mask slot", "block size", "acceptance length", "candidate history", "correction",
                 "bonus", "residual", "prefix survival", "SPS", "τ and Θ", "provisional features",
                 "ragged and padded slots", "KV cache", "processed vs committed", "greedy", "speculative sampling",
                 "target-draw matching", "DFlash", "DSpark", "DLoop", "D-Loop", "Markov head", "confidence head",
                 "stop rule", "conditional acceptance", "suffix decay"):
        assert glossary.lookup(term), term


def test_the_glossary_tells_d_loop_from_dloop_as_the_source_does():
    """The source: D-Loop regenerates a block's suffix "with the prefix revealed; its method can also consider
    multiple prefix boundaries", and refines within a block. Planted bug: the entry reduced to one boundary."""
    d_loop = dict((term, text) for term, text, _ in glossary.ENTRIES)["D-Loop"]
    assert "prefix revealed" in d_loop and "several prefix boundaries" in d_loop and "within a block" in d_loop
