"""A figure of escaped HTML (specviz.viz's builders) as a standalone SVG image, for slides.

The SVG holds the figure's markup, rewritten as XHTML, and the page's stylesheet inside one
<foreignObject> of a given width and height: opened in a browser (or any renderer that draws
HTML inside SVG) it looks like the page. Plotly charts need none of this: their modebar downloads
them (`chart_config`). A page's share link becomes a QR code here too (`qr_image`).

What it leaves out: measuring the figure (the page passes a width and height it estimates) and
renderers without foreignObject support, which show an empty image.
"""
from html import escape
from html.parser import HTMLParser

import segno

from specviz.viz.style import CSS, INK

VOID = {"br", "hr", "img", "wbr", "col", "input", "meta", "link", "source"}
FONT = "'Source Sans Pro', 'Source Sans 3', sans-serif"   # the font Streamlit's pages are set in


class _XHTML(HTMLParser):
    """Re-emits HTML as well-formed XML: attributes quoted, void elements closed, text escaped
    (entities such as &nbsp; become characters, which XML needs no name for)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []

    def handle_starttag(self, tag, attrs, close=False):
        attrs = "".join(f' {name}="{escape(value or name)}"' for name, value in attrs)
        self.out.append(f"<{tag}{attrs}{' /' if close or tag in VOID else ''}>")

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs, close=True)

    def handle_endtag(self, tag):
        if tag not in VOID:
            self.out.append(f"</{tag}>")

    def handle_data(self, data):
        self.out.append(escape(data, quote=False))


def xhtml(markup: str) -> str:
    """HTML as well-formed XHTML.

    >>> xhtml('<span class=a>&nbsp;x &lt;b&gt;<br></span>')
    '<span class="a">\\xa0x &lt;b&gt;<br /></span>'
    """
    parser = _XHTML()
    parser.feed(markup)
    parser.close()
    return "".join(parser.out)


def figure_svg(markup: str, width: int, height: int, stylesheet: str = CSS) -> str:
    """A standalone SVG image of `markup` styled by `stylesheet`, `width` x `height` CSS pixels.

    >>> svg = figure_svg('<b class="sv-mark">a&amp;b</b>', 300, 80, ".sv-mark { color: red; }")
    >>> svg.startswith('<svg xmlns="http://www.w3.org/2000/svg" width="300" height="80"'), 'a&amp;b' in svg
    (True, True)
    """
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}">'
            f'<foreignObject x="0" y="0" width="{width}" height="{height}">'
            f'<div xmlns="http://www.w3.org/1999/xhtml" style="font-family: {escape(FONT)}; font-size: 16px; '
            f'color: #31333f; background: white; padding: 12px; width: {width}px; height: {height}px; '
            f'box-sizing: border-box; overflow: hidden">'
            f'<style>{escape(stylesheet, quote=False)}</style>{xhtml(markup)}</div></foreignObject></svg>')


def chart_config(name: str) -> dict:
    """st.plotly_chart's config: the modebar's camera downloads the chart as an SVG named `name`.

    >>> chart_config("lesson2-convergence")["toImageButtonOptions"]
    {'format': 'svg', 'filename': 'lesson2-convergence'}
    """
    return {"toImageButtonOptions": {"format": "svg", "filename": name}}


def qr_image(text: str) -> str:
    """`text` as a QR code, an SVG image in a data URI for an <img> (segno: the standard encoder,
    error correction M, so a projected code still scans with some glare).

    >>> qr_image("https://example.org/?k=4").startswith("data:image/svg+xml")
    True
    """
    return segno.make(text, error="m", micro=False).svg_data_uri(scale=6, border=2, dark=INK)
