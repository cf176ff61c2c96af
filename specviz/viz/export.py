"""A figure of escaped HTML (specviz.viz's builders) as a standalone SVG image, for slides.

Slide software (PowerPoint, Keynote, Google Slides) draws SVG shapes and <text>, but not HTML
inside SVG (<foreignObject>), which it shows as an empty image. So the figure's markup is laid
out here, by a small layout of its own, into plain <rect>, <line> and <text> elements, coloured
by the page's own stylesheet (specviz.viz.style.CSS, applied by specviz.viz.cascade): each chip
and cache cell becomes a box with its text, each table a grid of cells with the page's row
rules, running text wraps at spaces. Token text is user-controlled: it reaches the SVG only as escaped XML text.

Plotly charts need none of this: their modebar downloads them (`chart_config`). A page's share
link becomes a QR code here too (`qr_image`).

What it leaves out: real font metrics (widths are estimated per character, so a line may end a
little early or late), CSS beyond what specviz.viz.cascade reads, and shadows.
"""
import re
from dataclasses import dataclass
from html import escape

import segno

from specviz.viz.cascade import Look, Node, below, computed, rules, tree
from specviz.viz.style import CSS, INK

FONT = "'Source Sans Pro', 'Source Sans 3', Arial, sans-serif"   # the font Streamlit's pages are set in
MONO = "ui-monospace, Menlo, Consolas, monospace"
PAD = 12             # px around the figure
BLOCKS = {"div", "p", "table"}
RULE = "#e2e8f0"     # a table row's bottom border (table.sv-table th, td)


def text_width(text: str, look: Look) -> float:
    """Estimated px width: an average glyph of the font (monospace glyphs are all alike)."""
    per = 0.6 if look.mono else 0.5 if look.weight == "normal" else 0.54
    return len(text) * look.size * per


# --- layout: drawing instructions are ("rect" | "line" | "text", {attribute: value}) -----------------

@dataclass
class Piece:
    """One unbreakable thing on a line: a word run, or an atomic box already laid out at (0, 0)."""
    width: float
    height: float
    look: Look
    text: str = ""
    space: bool = False           # a space follows: a line may break here
    drawing: list | None = None   # an atomic box's drawing, relative to its top left


def _text(x: float, baseline: float, text: str, look: Look) -> tuple:
    attrs = {"x": x, "y": baseline, "font-size": look.size, "fill": look.color}
    if look.weight != "normal":
        attrs["font-weight"] = look.weight
    if look.mono:
        attrs["font-family"] = MONO
    if look.strike:
        attrs["text-decoration"] = "line-through"
    return ("text", attrs, text)


def _box(x: float, y: float, w: float, h: float, look: Look) -> tuple:
    attrs = {"x": x, "y": y, "width": w, "height": h, "rx": round(look.size * 0.35, 1),
             "fill": look.fill or "none"}
    if look.stroke:
        attrs |= {"stroke": look.stroke, "stroke-width": 2}
        if look.dash:
            attrs["stroke-dasharray"] = "6 3" if look.dash == "dashed" else "2 2"
    return ("rect", attrs, "")


def pieces(node: Node, chain: list, look: Look, sheet: list, pre: bool = False) -> list[Piece]:
    """The inline content of `node` as pieces; words break at spaces, chips and cells are atomic.
    With `pre` (inside a chip: white-space: pre) each text is one piece, its spaces kept. A left
    margin is a piece of its own, blank."""
    out: list[Piece] = []
    for child in node[2]:
        if isinstance(child, str):
            out += _words(child, look, pre)
            continue
        sub = below(chain, child)
        child_look = computed(child, sub, look, sheet)
        if child[0] == "br":
            out.append(Piece(0, 0, look, "\n"))
        elif child_look.atomic:
            out.append(atom(child, sub, child_look, sheet))
        else:
            if child_look.margin[0]:
                out.append(Piece(child_look.margin[0], 0, child_look))
            out += pieces(child, sub, child_look, sheet, pre)
    return out


def _words(text: str, look: Look, pre: bool) -> list[Piece]:
    """A text's pieces: itself whole under `pre`, else its words, each marked when a space follows
    (a leading space is a blank piece, so the word before it, in another element, keeps its gap)."""
    if pre:
        return [Piece(text_width(text, look), look.size * look.line, look, text)]
    out = []
    for word, gap in re.findall(r"(\S*)(\s*)", text):
        if word:
            out.append(Piece(text_width(word, look), look.size * look.line, look, word, bool(gap)))
        elif gap:
            out.append(Piece(0, 0, look, space=True))
    return out


def atom(node: Node, chain: list, look: Look, sheet: list) -> Piece:
    """A chip or a cell: its content on one line inside padding and a 2px border, as one piece."""
    inner = pieces(node, chain, look, sheet, pre=True)
    content = sum(p.width for p in inner)
    height = max([look.size * look.line] + [p.height for p in inner]) + 2 * look.pad[0] + 4
    width = max(content + 2 * look.pad[1] + 4, look.min_width)
    (left, right), top = look.margin, look.size * 0.1
    drawing = [_box(left, top, width, height, look)]
    x = left + (width - content) / 2 if look.align == "center" else left + look.pad[1] + 2
    drawing += _place(inner, x, top, height)
    return Piece(left + width + right, height + 2 * top, look, drawing=drawing)


def _place(line: list[Piece], x: float, top: float, height: float) -> list:
    """Draw a line's pieces from x: atoms centred on the line's middle, words on one baseline below
    it. Adjacent words of one look become one <text> (and one background), so a line of running
    text is one object on a slide."""
    sizes = [p.look.size for p in line if p.drawing is None] or [0.0]
    baseline = top + height / 2 + max(sizes) * 0.35
    out, run = [], None     # run: the look, the <text> and the background box words are joining
    for p in line:
        if not p.text and p.drawing is None:   # a margin, or a leading space
            x += p.width + (text_width(" ", p.look) if p.space else 0)
            run = None
            continue
        if p.drawing is not None:
            dy = top + (height - p.height) / 2
            out += [(kind, {k: v + x if k in ("x", "x1", "x2") else v + dy if k in ("y", "y1", "y2") else v
                            for k, v in attrs.items()}, text) for kind, attrs, text in p.drawing]
            run = None
        elif run is not None and run[0] is p.look:
            run[1][2] += p.text
            if run[2]:
                run[2][1]["width"] += p.width
        else:
            highlight = p.look.fill and not p.look.atomic   # an atom's own box is drawn already
            box = list(_box(x, top + (height - p.height) / 2, p.width, p.height, p.look)) if highlight else None
            text = list(_text(x, baseline, p.text, p.look))
            out += [d for d in (box, text) if d]
            run = (p.look, text, box)
        x += p.width
        if p.space:
            x += text_width(" ", p.look)
            if run is not None:
                run[1][2] += " "
                if run[2]:
                    run[2][1]["width"] += text_width(" ", p.look)
    return [tuple(d) for d in out]


def segments(items: list[Piece]) -> list[list[Piece]]:
    """Pieces in runs a line may not break inside: a run ends after a space, an atom stands alone,
    and a <br> is a run of its own.

    >>> look = Look()
    >>> runs = segments([Piece(1, 1, look, "a"), Piece(1, 1, look, "b", space=True), Piece(1, 1, look, "c")])
    >>> [[p.text for p in run] for run in runs]
    [['a', 'b'], ['c']]
    """
    out, run = [], []
    for p in items:
        if p.drawing is not None or p.text == "\n":
            out += [r for r in (run, [p]) if r]
            run = []
            continue
        run.append(p)
        if p.space:
            out.append(run)
            run = []
    return out + [run] if run else out


def lines(items: list[Piece], width: float) -> list[list[Piece]]:
    """Break pieces into lines no wider than `width` where `segments` allows; a space at the start
    of a line takes no room (CSS collapses it)."""
    out, line, used = [], [], 0.0
    for run in segments(items):
        if run[0].text == "\n":
            out.append(line)
            line, used = [], 0.0
            continue
        w = sum(p.width for p in run)
        gap = text_width(" ", line[-1].look) if line and line[-1].space else 0.0
        if line and used + gap + w > width + 0.5:   # half a pixel: the sums of estimates round
            out.append(line)
            line, used, gap = [], 0.0, 0.0
        if not line and not any(p.text or p.drawing is not None for p in run):
            continue
        line += run
        used += gap + w
    return [ln for ln in out + [line] if ln]


def one_line(items: list[Piece]) -> float:
    """The width of pieces set on one line, with the space after each that has one."""
    return sum(p.width + (text_width(" ", p.look) if p.space else 0) for p in items)


def flow(items: list[Piece], look: Look, x: float, y: float, width: float) -> tuple[list, float]:
    """Running content in a box `width` wide at (x, y): its drawing and height."""
    out, top = [], y
    for ln in lines(items, width):
        height = max([look.size * look.line] + [p.height for p in ln])
        used = one_line(ln)
        shift = {"right": width - used, "center": (width - used) / 2}.get(look.align, 0.0)
        out += _place(ln, x + max(0.0, shift), top, height)
        top += height
    return out, top - y


def block(node: Node, chain: list, look: Look, sheet: list, x: float, y: float, width: float) -> tuple[list, float]:
    """A block's children stacked: runs of inline content flow, blocks and tables stack below."""
    out, top, run = [], y, []

    def end_run():
        nonlocal top
        if run:
            drawing, h = flow([p for part in run for p in part], look, x, top, width)
            out.extend(drawing)
            top += h
            run.clear()

    for child in node[2]:
        if isinstance(child, str) or child[0] not in BLOCKS:
            run.append(pieces((node[0], node[1], [child]), chain, look, sheet))
            continue
        end_run()
        sub = below(chain, child)
        child_look = computed(child, sub, look, sheet)
        if child[0] == "table":
            drawing, h = table(child, sub, child_look, sheet, x, top, width)
        elif child_look.flex:
            drawing, h = flow(pieces(child, sub, child_look, sheet), child_look, x, top, width)
        else:
            drawing, h = block(child, sub, child_look, sheet, x, top, width)
        out += drawing
        top += h + (child_look.size * 0.3 if child[0] == "p" else 0)
    end_run()
    return out, top - y


def columns(natural: list[float], least: list[float], width: float, stretch: bool) -> list[float]:
    """Column widths as a browser's auto table layout roughly sets them: the content's natural
    widths where they fit (stretched to `width` when `stretch`), else each column's least width
    plus a share of what is left, by how much more it would like.

    >>> columns([100, 300], [50, 100], 800, False), columns([100, 300], [50, 100], 800, True)
    ([100, 300], [200.0, 600.0])
    >>> columns([100, 300], [50, 100], 250, True)
    [70.0, 180.0]
    """
    if sum(natural) <= width:
        return [n * width / sum(natural) for n in natural] if stretch and sum(natural) else natural
    spare, want = max(0.0, width - sum(least)), sum(n - m for n, m in zip(natural, least)) or 1.0
    return [m + spare * (n - m) / want for n, m in zip(natural, least)]


def table(node: Node, chain: list, look: Look, sheet: list, x: float, y: float, width: float) -> tuple[list, float]:
    """Rows of cells in columns, each row ruled below as the page rules it."""
    rows = [(tr, below(chain, tr)) for tr in node[2]
            if not isinstance(tr, str) and tr[0] == "tr"]
    cells = []
    for tr, tr_chain in rows:
        row = []
        for td in (c for c in tr[2] if not isinstance(c, str) and c[0] in ("td", "th")):
            sub = below(tr_chain, td)
            td_look = computed(td, sub, look, sheet)
            items = pieces(td, sub, td_look, sheet)
            row.append((td, sub, td_look, items))
        cells.append(row)
    n = max((len(r) for r in cells), default=0)
    natural, least = [0.0] * n, [0.0] * n
    for row in cells:
        for i, (_, _, td_look, items) in enumerate(row):
            pad = 2 * td_look.pad[1]
            natural[i] = max(natural[i], one_line(items) + pad)
            least[i] = max([least[i]] + [p.width + pad for p in items])
    widths = columns(natural, least, width, not look.width_auto)
    out, top = [], y
    for row in cells:
        drawn, height, left = [], 0.0, x
        for (td, sub, td_look, items), w in zip(row, widths):
            drawing, h = flow(items, td_look, left + td_look.pad[1], top + td_look.pad[0], w - 2 * td_look.pad[1])
            drawn += drawing
            height = max(height, h + 2 * td_look.pad[0])
            left += w
        out += drawn + [("line", {"x1": x, "y1": top + height, "x2": x + sum(widths), "y2": top + height,
                                  "stroke": RULE, "stroke-width": 1}, "")]
        top += height
    return out, top - y


def _element(kind: str, attrs: dict, text: str) -> str:
    values = " ".join(f'{k}="{round(v, 1) if isinstance(v, float) else escape(str(v))}"' for k, v in attrs.items())
    return f"<{kind} {values}>{escape(text, quote=False)}</{kind}>" if kind == "text" else f"<{kind} {values}/>"


def figure_svg(markup: str, width: int, height: int, stylesheet: str = CSS) -> str:
    """A standalone SVG image of `markup` styled by `stylesheet`, `width` CSS pixels wide and at
    least `height` high (taller when its content needs it: the page can only estimate), drawn with
    plain <rect>, <line> and <text> elements that slide software shows.

    >>> svg = figure_svg('<span class="sv-chip sv-accepted">a&amp;b</span>', 300, 80)
    >>> svg.startswith('<svg xmlns="http://www.w3.org/2000/svg" width="300" height="80"'), '>a&amp;b</text>' in svg
    (True, True)
    """
    sheet = rules(stylesheet)
    drawing, h = block(tree(markup), [("div", set())], Look(), sheet, PAD, PAD, width - 2 * PAD)
    full = max(height, round(h + 2 * PAD))
    body = "".join(_element(*d) for d in drawing)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{full}" viewBox="0 0 {width} {full}" '
            f'font-family="{escape(FONT)}" xml:space="preserve">'
            f'<rect x="0" y="0" width="{width}" height="{full}" fill="white"/>{body}</svg>')


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
