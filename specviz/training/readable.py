"""Can a class read what the target writes? Two counts over greedy continuations of the held-out
workload prompts (specviz.lessons.workloads): prose that loops, and code that is not Python.

A loop is a word 4-gram (words lower-cased, punctuation dropped) that occurs 3 or more times in
one continuation ("a very good sort of man, and a very good sort of man, and a very good sort of
man"). Code reads as Python when
the prompt and its continuation, cut at the last complete line, parse with `ast.parse`.

What it leaves out: any judgement of meaning; a continuation can parse and still be nonsense.
"""
import ast
import re
import textwrap
from collections import Counter


def most_repeated(text: str, n: int = 4) -> tuple[int, str]:
    """The word n-gram that occurs most often in `text`, with its count (0 when text is short).

    >>> most_repeated("A very good man, and a very good man; and a very good man")
    (3, 'a very good man')
    >>> most_repeated("three words only")
    (0, '')
    """
    words = re.findall(r"\w+", text.lower())
    grams = Counter(" ".join(words[i:i + n]) for i in range(len(words) - n + 1))
    if not grams:
        return 0, ""
    gram, count = grams.most_common(1)[0]
    return count, gram


def loops(text: str) -> bool:
    """A 4-gram 3 or more times.

    >>> loops("turtle. turtle. turtle. turtle. turtle. turtle.")
    True
    """
    return most_repeated(text)[0] >= 3


def parses(prompt: str, continuation: str) -> bool:
    """The prompt and its continuation up to the last complete line parse as Python; a prompt cut
    from inside a class (indented) is dedented first. A continuation that completes no line is
    not judged by its prompt alone: it does not parse.

    >>> parses("def f(x):\\n    return ", "x + 1\\n    y = (")
    True
    >>> parses("def f(x):\\n    return ", "x +\\n")
    False
    """
    if "\n" not in continuation:
        return False
    text = prompt + continuation
    cut = text[:text.rfind("\n") + 1]
    try:
        ast.parse(textwrap.dedent(cut))
    except SyntaxError:
        return False
    return True
