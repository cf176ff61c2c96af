"""Markup and a stylesheet -> the look of each element: the small part of HTML and CSS that
specviz's figures use, so that specviz.viz.export can draw them as SVG for slides.

`tree` parses markup into (tag, attrs, children); `rules` reads a stylesheet rule by rule;
`computed` gives an element its `Look`: inherited from its parent, then its tag's defaults, the
matching rules in source order, and its style attribute.

What it leaves out: selectors beyond classes, tags and descendants (no ids, attributes,
children, pseudo-classes, at-rules, specificity: later rules win), and properties beyond colour,
background, border, font, padding, margin, min-width, display, gap, text-align, line-height.
"""
import re
from dataclasses import dataclass, replace
from html.parser import HTMLParser

BASE = 16.0          # px: 1rem
VOID = {"br", "hr", "img", "wbr", "col", "input", "meta", "link", "source"}


@dataclass(frozen=True)
class Look:
    """An element's computed style, as far as a figure uses it. The first block is inherited."""
    size: float = BASE
    color: str = "#31333f"
    weight: str = "normal"
    mono: bool = False
    strike: bool = False
    line: float = 1.4          # line-height, a multiple of the font size
    align: str = "left"
    fill: str = ""             # background
    stroke: str = ""           # border colour
    dash: str = ""             # border style: "", "dashed", "dotted"
    pad: tuple = (0.0, 0.0)    # px: vertical, horizontal
    min_width: float = 0.0     # px
    margin: tuple = (0.0, 0.0)  # px: left, right
    atomic: bool = False       # an inline block: a chip, a cache cell
    flex: bool = False         # its children are atomic (display: flex), `gap` apart
    gap: float = 0.0           # px
    width_auto: bool = False   # a table as wide as its content, not the figure


INHERITED = ("size", "color", "weight", "mono", "strike", "line", "align")
Node = tuple   # (tag, attrs: dict, children: list of Node or str)


class _Tree(HTMLParser):
    """Markup as a tree of (tag, attrs, children); entities become characters."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root: Node = ("div", {}, [])
        self.open = [self.root]

    def handle_starttag(self, tag, attrs):
        node = (tag, {k: v or "" for k, v in attrs}, [])
        self.open[-1][2].append(node)
        if tag not in VOID:
            self.open.append(node)

    def handle_startendtag(self, tag, attrs):
        self.open[-1][2].append((tag, {k: v or "" for k, v in attrs}, []))

    def handle_endtag(self, tag):
        for i in range(len(self.open) - 1, 0, -1):   # close up to the matching tag; ignore a stray one
            if self.open[i][0] == tag:
                del self.open[i:]
                return

    def handle_data(self, data):
        self.open[-1][2].append(data)


def tree(markup: str) -> Node:
    """HTML as (tag, attrs, children), under one root div.

    >>> tree('<b class=x>a &lt; b</b><br>c')
    ('div', {}, [('b', {'class': 'x'}, ['a < b']), ('br', {}, []), 'c'])
    """
    parser = _Tree()
    parser.feed(markup)
    parser.close()
    return parser.root


def rules(css: str) -> list[tuple[str, dict]]:
    """A stylesheet as (selector, {property: value}) in source order, one entry per selector.

    >>> rules(".a, td.b span { color: red; border: 2px solid #fff } /* x */")
    [('.a', {'color': 'red', 'border': '2px solid #fff'}), ('td.b span', {'color': 'red', 'border': '2px solid #fff'})]
    """
    out = []
    for selectors, body in re.findall(r"([^{}]+)\{([^}]*)\}", re.sub(r"/\*.*?\*/", "", css, flags=re.S)):
        decls = dict(d.split(":", 1) for d in body.split(";") if ":" in d)
        decls = {k.strip(): v.strip() for k, v in decls.items()}
        out += [(s.strip(), decls) for s in selectors.split(",")]
    return out


def _compound(part: str, element: tuple[str, set]) -> bool:
    tag, *classes = part.split(".")
    return (not tag or tag == element[0]) and set(classes) <= element[1]


def below(chain: list[tuple[str, set]], node: Node) -> list[tuple[str, set]]:
    """The chain of (tag, classes) from the root down to `node`, a child of the chain's last element."""
    return chain + [(node[0], set(node[1].get("class", "").split()))]


def matches(selector: str, chain: list[tuple[str, set]]) -> bool:
    """Does `selector` (compounds of tag and classes, joined by descendant spaces) pick the last
    element of `chain` (tag, classes) from the root down?

    >>> chain = [("table", {"sv-table"}), ("tr", set()), ("td", {"num"})]
    >>> matches("table.sv-table td.num", chain), matches("td.num.x", chain), matches("div td", chain)
    (True, False, False)
    """
    *ancestors, last = selector.split()
    if not _compound(last, chain[-1]):
        return False
    i = len(chain) - 1
    for part in reversed(ancestors):
        i = next((j for j in range(i - 1, -1, -1) if _compound(part, chain[j])), -1)
        if i < 0:
            return False
    return True


def length(value: str, size: float) -> float:
    """A CSS length in px, for an element of font size `size`.

    >>> length("0.5em", 20), length("1.25rem", 20), length("2px", 20), length("0", 20)
    (10.0, 20.0, 2.0, 0.0)
    """
    number = float(re.match(r"-?[\d.]+", value)[0])
    return number * (size if value.endswith("em") and not value.endswith("rem") else
                     BASE if value.endswith("rem") else 1.0)


def _border(look: Look, value: str) -> Look:
    """border / outline shorthand: width, style, colour in any order; none or transparent draws nothing."""
    words = value.split()
    if "none" in words:
        return replace(look, stroke="")
    color = next((w for w in words if w.startswith("#") or w.isalpha() and w not in ("solid", "dashed", "dotted")),
                 look.stroke)
    dash = next((w for w in words if w in ("dashed", "dotted")), "")
    return replace(look, stroke="" if color == "transparent" else color, dash=dash)


def declare(look: Look, decls: dict, parent: float) -> Look:
    """`look` with the declarations applied; `parent` is the parent's font size (em sizes use it)."""
    for prop, value in decls.items():
        if prop == "font-size":
            look = replace(look, size=length(value, parent))
        elif prop == "color":
            look = replace(look, color=value)
        elif prop in ("background", "background-color"):
            look = replace(look, fill="" if value in ("none", "transparent") else value)
        elif prop in ("border", "outline"):
            look = _border(look, value)
        elif prop == "border-color":
            look = replace(look, stroke=value)
        elif prop == "font-weight":
            look = replace(look, weight="bold" if value in ("bold", "600", "700") else "normal")
        elif prop == "font-family":
            look = replace(look, mono="mono" in value)
        elif prop == "text-decoration":
            look = replace(look, strike="line-through" in value)
        elif prop == "line-height":
            look = replace(look, line=float(value))
        elif prop == "text-align":
            look = replace(look, align=value)
        elif prop == "padding":
            sides = [length(v, look.size) for v in value.split()]
            look = replace(look, pad=(sides[0], sides[1 % len(sides)]))
        elif prop in ("margin", "margin-left"):
            sides = [length(v, look.size) for v in value.split()]
            left = sides[0] if prop == "margin-left" else sides[[0, 1, 1, 3][len(sides) - 1]]
            right = look.margin[1] if prop == "margin-left" else sides[1 % len(sides)]
            look = replace(look, margin=(left, right))
        elif prop == "min-width":
            look = replace(look, min_width=length(value, look.size))
        elif prop == "display":
            look = replace(look, atomic=value == "inline-block", flex=value == "flex")
        elif prop == "gap":
            look = replace(look, gap=length(value, look.size))
        elif prop == "width":
            look = replace(look, width_auto=value == "auto")
    return look


TAG_LOOK = {"b": {"font-weight": "bold"}, "strong": {"font-weight": "bold"}, "th": {"font-weight": "bold"},
            "small": {"font-size": "0.83em"}, "sub": {"font-size": "0.75em"},
            "code": {"font-family": "monospace", "font-size": "0.8em"}}


def computed(node: Node, chain: list[tuple[str, set]], parent: Look, sheet: list[tuple[str, dict]]) -> Look:
    """The look of `node` (the last of `chain`): inherited from `parent`, then its tag's defaults,
    the stylesheet's matching rules in source order, its style attribute, and a flex parent's rule."""
    look = Look(**{f: getattr(parent, f) for f in INHERITED}, atomic=parent.flex, margin=(0.0, parent.gap))
    look = declare(look, TAG_LOOK.get(node[0], {}), parent.size)
    for selector, decls in sheet:
        if matches(selector, chain):
            look = declare(look, decls, parent.size)
    return declare(look, rules("x {" + node[1].get("style", "") + "}")[0][1], parent.size)
