"""Slides export (specviz.viz.export) and the link record (each page's linked settings, appkit.course)."""
import xml.etree.ElementTree as ET
from html import unescape

import segno

from specviz.generator.engine import Generation
from specviz.generator.settings import Settings
from appkit.course import by_id
from appkit.fields import read_link, write
from appkit.links import cursor_params, read_cursor
from specviz.lessons.presets import PRESETS
from specviz.lessons.cursor import Cursor
from specviz.viz import cache, export, histories, tokens
from specviz.viz.style import ACCEPTED, REJECTED

SVG = "{http://www.w3.org/2000/svg}"
PROMPT = 'Tom said <b>"5 & 6"</b> <img src=x onerror=alert(1)> and'
NASTY = """<script>&"'"""
SHAPES = {SVG + kind for kind in ("svg", "rect", "line", "text")}   # what PowerPoint and Keynote draw


def a_round(models):
    """One real round on the embedded models, after a prompt of markup."""
    drafter = list(models.drafter_models)[0]
    gen = Generation(models, PROMPT, Settings.greedy(drafter, 8, k=4))
    return gen, gen.step()


def texts(svg: str) -> list[str]:
    """The text of every <text> element, as a slide shows it (XML escapes read back)."""
    return [t.text or "" for t in ET.fromstring(svg).iter(SVG + "text")]


def shown(token: str) -> str:
    """A token as the page shows it: visible spaces and newlines, as text (not HTML)."""
    return unescape(tokens.esc(token))


def test_each_round_figure_is_plain_svg_shapes_and_text_that_slide_software_draws(models):
    gen, r = a_round(models)
    before = gen.trace.prompt_tokens
    figures = {"block": tokens.block_html(r, "commit"), "histories": histories.histories_html(r, "verify", "greedy"),
               "cache": cache.strip_html(before, r, "commit"),
               "committed": tokens.committed_html(PROMPT, gen.trace.rounds, 1, "commit")}
    for name, markup in figures.items():
        svg = export.figure_svg(markup, 1000, 120)
        root = ET.fromstring(svg)          # raises on anything that is not well-formed XML
        assert root.tag == SVG + "svg" and root.get("width") == "1000" and int(root.get("height")) >= 120, name
        assert {e.tag for e in root.iter()} <= SHAPES, name          # no <foreignObject>, no HTML, no script
        assert all(0 <= float(t.get("x")) < 1000 for t in root.iter(SVG + "text")), name
    for t in r.proposed_tokens:           # every proposal is a text of its own in the block and the strip
        assert shown(t) in texts(export.figure_svg(figures["block"], 1000, 120))
        assert shown(t) in texts(export.figure_svg(figures["cache"], 1000, 120))
    words = " ".join(" ".join(texts(export.figure_svg(figures["committed"], 1000, 120))).split())
    assert " ".join(PROMPT.split()) in words     # the prompt's markup is text, every character of it


def test_a_token_of_markup_reaches_the_svg_as_escaped_text_only():
    svg = export.figure_svg(f'<div class="sv-text">{tokens.chip(NASTY, "accepted", note="q 0.50", mark="ok")}</div>',
                            400, 60)
    assert "<script" not in svg and "&lt;script&gt;&amp;" in svg
    assert NASTY in texts(svg) and "q 0.50" in texts(svg)


def test_chips_are_boxes_in_their_kinds_colours_from_the_pages_stylesheet():
    markup = tokens.chip("yes", "accepted") + tokens.chip("no", "rejected") + tokens.chip("later", "discarded")
    root = ET.fromstring(export.figure_svg(f'<div class="sv-text">{markup}</div>', 600, 60))
    boxes = [b for b in root.iter(SVG + "rect")][1:]        # after the white page
    assert [b.get("stroke") for b in boxes] == [ACCEPTED, REJECTED, "#cbd5e1"]
    assert [b.get("fill") for b in boxes] == ["#f0fdf4", "#fef2f2", "#f8fafc"]
    struck = {t.text: t.get("text-decoration") for t in root.iter(SVG + "text")}
    assert struck == {"yes": None, "no": "line-through", "later": "line-through"}


def test_a_figure_wraps_within_its_width_and_grows_taller_than_the_pages_estimate():
    markup = '<div class="sv-text">' + "".join(tokens.chip(f"token{i}") for i in range(40)) + "</div>"
    root = ET.fromstring(export.figure_svg(markup, 500, 80))
    boxes = [b for b in root.iter(SVG + "rect")][1:]
    assert all(float(b.get("x")) + float(b.get("width")) <= 500 for b in boxes)
    assert len({b.get("y") for b in boxes}) > 3 and int(root.get("height")) > 80   # several lines, all shown


def test_a_qr_code_is_segnos_encoding_of_exactly_the_text():
    link = "http://host:8501/sampling_lossless?temp=0.5"
    assert export.qr_image(link) == segno.make(link, error="m", micro=False).svg_data_uri(scale=6, border=2,
                                                                                        dark="#0f172a")
    assert export.qr_image(link) != export.qr_image(link + "&seed=1")


def test_a_plotly_chart_downloads_as_a_named_svg():
    assert export.chart_config("lesson7-break-even") == {
        "toImageButtonOptions": {"format": "svg", "filename": "lesson7-break-even"}}


def test_link_values_are_read_by_type_and_bounds_and_a_bad_one_is_named():
    values, errors = read_link({"temp": "0.5", "n": "1000", "other": "1", "drafter": "ar", "prompt": "nope",
                                "seed": "-1", "source": "x" * 201}, by_id("sampling").settings, {"drafters": ["ar", "dflash"]})
    assert values == {"temp": 0.5, "n": 1000, "other": True, "drafter": "ar"}
    assert errors == ["source must be 1 to 200 characters of text",
                      "prompt must be one of " + ", ".join(PRESETS) + ", got 'nope'",
                      "seed must be between 0 and 1000000, got -1"]
    assert read_link({"n": "999"}, by_id("sampling").settings, {}) == ({}, ["n must be one of 10, 100, 1000, 10000, 50000, got 999"])
    assert read_link({"sweep": "-4,-8"}, by_id("dloop").settings, {}) == ({"sweep": [-4.0, -8.0]}, [])
    assert read_link({"sweep": "-4,3"}, by_id("dloop").settings, {}) == ({}, ["sweep must be between -20.0 and 0.0, got 3"])
    assert read_link({"drafter": "ar"}, by_id("cost").settings, {"drafters": []})[1] == ["drafter must be one of , got 'ar'"]


def test_what_a_link_writes_it_reads_back():
    fields = by_id("dloop").settings
    values = {"S": 3, "k": 4, "g": -8.5, "sweep": [-4.0, -16.0], "prompt": by_id("dloop").settings["prompt"].options[1]}
    assert read_link({n: write(v) for n, v in values.items()}, fields, {}) == (values, [])
    assert write(0.1 * 3) == "0.3" and write(False) == "0"


def test_lesson_one_reads_its_round_and_phase():
    assert read_cursor({"round": "2", "phase": "draft"}, 32) == (Cursor(2, "draft"), [])
    assert read_cursor({"round": "0", "phase": "verify"}, 32) == (Cursor(), [])
    assert read_cursor({}, 32) == (None, [])
    assert read_cursor({"round": "two"}, 32) == (None, ["round must be a number, got 'two'"])
    assert read_cursor({"round": "1", "phase": "x"}, 32) == (Cursor(1, "commit"),
                                                           ["phase must be one of draft, verify, commit, got 'x'"])
    assert read_cursor(cursor_params(Cursor(5, "verify")), 32) == (Cursor(5, "verify"), [])
