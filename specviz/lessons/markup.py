"""Token text inside a markdown sentence, shown as itself.

Token text is user-controlled (the prompt is the learner's, the tokens the model's), and every page
shows it through st.markdown, so one function renders it for all of them: race's "Same text" line and
lesson 9's notes. It lives here, below both, so neither imports the other.
"""
import html

# markdown's punctuation, plus what Streamlit's markdown adds: $ opens LaTeX, : an emoji or a colour directive
MARKUP = "\\`*_{}[]()#+-.!|~$:"


def md_token(text: str | None, spaces: bool = True) -> str:
    r"""`text` quoted and shown as itself: markdown's punctuation backslash-escaped, <, > and & written as
    entities, a newline as a visible ↵ (a raw one could end the paragraph and let the rest render as markup),
    and, with `spaces`, a space as a visible ␣, as in the lanes. None is a text that stopped.

    >>> print(md_token(" **bold**"), md_token("<b>&"), md_token("$x$"), md_token(None))
    '␣\*\*bold\*\*' '&lt;b&gt;&amp;' '\$x\$' the end of its text
    >>> print(md_token("He said,\n`hi`", spaces=False))
    'He said,↵\`hi\`'
    """
    if text is None:
        return "the end of its text"
    out = "".join("\\" + c if c in MARKUP else html.escape(c, quote=False) for c in text).replace("\n", "↵")
    return "'" + (out.replace(" ", "␣") if spaces else out) + "'"
