"""Token text in a markdown sentence is shown as text, never as markup: the prompt is the learner's and the
tokens the model's, and race's "Same text" line and lesson 9's notes both render them through md_token."""
import html
import re

from hypothesis import given, strategies as st

from specviz.lessons.markup import MARKUP, md_token


def test_html_is_written_as_entities_so_a_script_tag_is_only_text():
    # catches a token passed to st.markdown raw: <script> would reach the page as a tag
    assert md_token("<script>alert(1)</script>") == r"'&lt;script&gt;alert\(1\)&lt;/script&gt;'"
    assert md_token("a & b") == "'a␣&amp;␣b'"


def test_backticks_asterisks_and_underscores_cannot_open_code_emphasis_or_a_link():
    # catches a code-span fence or emphasis opened by the token itself
    assert md_token("`x`") == r"'\`x\`'"
    assert md_token("**bold**") == r"'\*\*bold\*\*'"
    assert md_token("_it_") == r"'\_it\_'"
    assert md_token("[x](http://e)") == r"'\[x\]\(http\://e\)'"


def test_streamlit_s_own_markup_is_escaped_too():
    # catches a token that turns into LaTeX ($...$) or an emoji or colour directive (:cat:, :red[...])
    assert md_token("$x$") == r"'\$x\$'"
    assert md_token(":red[a]") == r"'\:red\[a\]'"


def test_a_newline_is_a_visible_sign_never_a_paragraph_break():
    # catches a raw "\n\n# heading", which would end the sentence's paragraph and render a heading
    assert md_token(" a\n\n# h") == r"'␣a↵↵\#␣h'"
    assert md_token("He said,\nno", spaces=False) == "'He said,↵no'"
    assert md_token(None) == "the end of its text"


@given(st.text(alphabet=st.characters(blacklist_characters="␣↵"), max_size=12))
def test_any_text_comes_back_unchanged_once_the_escapes_are_read_and_leaves_no_markup(text):
    shown = md_token(text)
    assert shown[0] == shown[-1] == "'" and "\n" not in shown and "<" not in shown and ">" not in shown
    inner = shown[1:-1]
    bare = re.sub(r"\\.", "", inner)                 # what is left once every escaped pair is dropped
    assert not any(c in MARKUP for c in bare)        # no markup character stands unescaped
    assert html.unescape(re.sub(r"\\(.)", r"\1", inner)).replace("␣", " ").replace("↵", "\n") == text
