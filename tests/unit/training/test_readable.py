"""The two readability counts the target is held to (issue: presets a class can read): a loop is
a word 4-gram 3 times in one continuation; code reads as Python when it parses to its last
complete line."""
from specviz.training.readable import loops, most_repeated, parses


def test_the_shipped_austen_loop_is_a_loop_and_plain_prose_is_not():
    assert loops("he was a very good sort of man; and he was a very good sort of man, and a very good sort of man")
    assert not loops("It is a truth universally acknowledged, that a single man in possession of a good fortune, "
                     "must be in want of a wife.")


def test_case_and_punctuation_do_not_hide_a_loop():
    """Planted bug: splitting on spaces only would count 'man,' and 'man;' as different words."""
    assert most_repeated("I am sure. i am SURE, I am sure; i am sure!", n=3) == (4, "i am sure")


def test_twice_is_not_a_loop():
    assert most_repeated("a b c d x a b c d")[0] == 2 and not loops("a b c d x a b c d")


def test_code_parses_to_its_last_complete_line_only():
    prompt = "def mean(values):\n    return "
    assert parses(prompt, "sum(values) / len(values)\n\n\ndef med")            # the cut-off line is dropped
    assert not parses(prompt, "sum(context)\n    return _dec(context=\n")      # an open call on a complete line
    assert not parses(prompt, "sum(values")                                    # no complete line at all


def test_a_method_prompt_is_dedented_before_parsing():
    prompt = "    def peek(self):\n        return "
    assert parses(prompt, "self.items[-1]\n")
    assert not parses(prompt, "self.items[-1]\n  x = 1\n")                     # inconsistent indentation
