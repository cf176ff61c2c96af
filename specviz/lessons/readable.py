"""Whether a continuation reads as text: the share of its words that are words, and the note a page
shows when the models cannot continue a prompt at all.

Small models trained on novels and Python continue markup by repeating a piece of it
("<br><br><br>…", "~~~~"): the home race on such a prompt wrote the same piece forty times. The race
still measures speed there, but its lanes need a sentence saying why they hold no text (`stuck_note`).
scripts/sampling_defaults.py scores lesson 2's sampled continuations with `word_share`.

What it leaves out: whether the text is good English (a word list says only that each word is one).
"""
import re
import unicodedata
from collections import Counter

from specviz.lessons.markup import md_token

WORD = re.compile(r"[A-Za-z]+")
MARKUP = re.compile(r"</?[A-Za-z][^<>]*>")
LOOP_TOKENS = 8      # a continuation is judged on its last LOOP_TOKENS tokens, or more
LOOP_DISTINCT = 3    # at most this many distinct tokens among them: one piece repeated


def word_share(text: str, words: set[str]) -> float:
    """The share of `text`'s letter runs that are words of `words` (lowercase), 0 for a text without any.

    >>> word_share("The best way to learn is to be herVEREurton", {"the", "best", "way", "to", "learn", "is", "be"})
    0.8888888888888888
    >>> word_share("~~~~ //// <br>", {"br"}), word_share("", {"a"})
    (1.0, 0.0)
    """
    runs = WORD.findall(text)
    return sum(r.lower() in words for r in runs) / len(runs) if runs else 0.0


def loops(tokens: list[str]) -> str | None:
    """The piece a continuation repeats (its commonest token) when its second half, of at least
    LOOP_TOKENS tokens, holds at most LOOP_DISTINCT distinct tokens; else None.

    >>> loops(["<", "br", ">"] * 6), loops(" much obliged to her, to speak, and with a very good grace".split(" "))
    ('<', None)
    >>> loops(["~"] * 5)   # too short to tell
    """
    tail = tokens[len(tokens) // 2:]
    if len(tail) < LOOP_TOKENS or len(set(tail)) > LOOP_DISTINCT:
        return None
    return Counter(tail).most_common(1)[0][0]


def unusual(prompt: str) -> list[str]:
    """What in a prompt is unlike the models' training text (novels and Python): markup tags, and
    symbols such as emoji (Unicode's other-symbol category). Markdown, each piece shown as itself.

    >>> unusual('<script>alert(1)</script> 🙂 and "quotes"')
    ["markup ('&lt;script&gt;', '&lt;/script&gt;')", "emoji or symbols ('🙂')"]
    >>> unusual("It is a truth universally acknowledged, that")
    []
    """
    tags = list(dict.fromkeys(MARKUP.findall(prompt)))
    symbols = list(dict.fromkeys(c for c in prompt if unicodedata.category(c) == "So"))
    shown = lambda pieces: ", ".join(md_token(x, spaces=False) for x in pieces[:3])   # noqa: E731
    return ([f"markup ({shown(tags)})"] if tags else []) + ([f"emoji or symbols ({shown(symbols)})"] if symbols else [])


def stuck_note(prompt: str, tokens: list[str]) -> str | None:
    """The note for a race whose continuation repeats one piece (`loops`), saying why where the prompt
    shows it (`unusual`); None for a continuation that reads as text. Markdown, token text escaped.

    >>> print(stuck_note("<script>x</script>", ["~"] * 20))
    **The models cannot continue this prompt as text**: it holds markup ('&lt;script&gt;', '&lt;/script&gt;'), which the text they learned from did not, and they repeat '\\~' instead. The race still measures both runners' speed; a preset prompt gives text to read.
    >>> stuck_note("The best way to learn is to", "be done , and the only difference of the two".split())
    """
    piece = loops(tokens)
    if piece is None:
        return None
    why = unusual(prompt)
    said = f"it holds {' and '.join(why)}, which the text they learned from did not, and " if why else ""
    return (f"**The models cannot continue this prompt as text**: {said}they repeat {md_token(piece)} instead. "
            "The race still measures both runners' speed; a preset prompt gives text to read.")
