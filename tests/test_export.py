"""Slides export (specviz.viz.export) and the link record (specviz.hosting.app_state's LINKED)."""
import xml.etree.ElementTree as ET
from html import escape

import segno

from specviz.generator.engine import Generation, Settings
from specviz.hosting.app_state import LINKED, PRESETS, Cursor, cursor_params, read_cursor, read_link, write
from specviz.viz import cache, export, histories, tokens
from specviz.viz.style import CSS

SVG = "{http://www.w3.org/2000/svg}"
XHTML = "{http://www.w3.org/1999/xhtml}"
PROMPT = 'Tom said <b>"5 & 6"</b> <img src=x onerror=alert(1)> and'


def a_round(models):
    """One real round on the embedded models, after a prompt of markup."""
    drafter = list(models.drafter_models)[0]
    gen = Generation(models, PROMPT, Settings.greedy(drafter, 8, block_size=4))
    return gen, gen.step()


def test_each_round_figure_is_a_well_formed_svg_with_its_escaped_text_and_the_stylesheet(models):
    gen, r = a_round(models)
    before = gen.trace.prompt_tokens
    figures = {"block": tokens.block_html(r, "commit"), "histories": histories.histories_html(r, "verify", "greedy"),
               "cache": cache.strip_html(before, r, "commit"),
               "committed": tokens.committed_html(PROMPT, gen.trace.rounds, 1, "commit")}
    for name, markup in figures.items():
        svg = export.figure_svg(markup, 1000, 300)
        root = ET.fromstring(svg)          # raises on anything that is not well-formed XML
        assert root.tag == SVG + "svg" and (root.get("width"), root.get("height")) == ("1000", "300"), name
        obj = root.find(SVG + "foreignObject")
        div = obj.find(XHTML + "div")
        assert div.find(XHTML + "style").text == CSS, name   # the page's stylesheet, whole
        assert list(root.iter(XHTML + "img")) == [] and list(root.iter(XHTML + "script")) == [], name
    text = "".join(ET.fromstring(export.figure_svg(figures["committed"], 1000, 300)).itertext())
    assert PROMPT in text   # the prompt's markup is text, every character of it
    assert escape('<b>"5 & 6"</b>', quote=False) in export.figure_svg(figures["committed"], 1000, 300)
    block = "".join(ET.fromstring(export.figure_svg(figures["block"], 1000, 300)).itertext())
    assert all(t.strip() in block for t in r.proposed_tokens)   # every proposal is in the image


def test_the_xhtml_rewrite_keeps_the_markup_and_closes_what_xml_needs_closed():
    assert export.xhtml('<table class=sv-table><tr><td>a &lt; b&nbsp;</td></tr></table><br>') == \
        '<table class="sv-table"><tr><td>a &lt; b\xa0</td></tr></table><br />'


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
                                "seed": "-1", "source": "x" * 201}, LINKED["l2"], {"drafters": ["ar", "dflash"]})
    assert values == {"temp": 0.5, "n": 1000, "other": True, "drafter": "ar"}
    assert errors == ["source must be 1 to 200 characters of text",
                      "prompt must be one of " + ", ".join(PRESETS) + ", got 'nope'",
                      "seed must be between 0 and 1000000, got -1"]
    assert read_link({"n": "999"}, LINKED["l2"], {}) == ({}, ["n must be one of 10, 100, 1000, 10000, 50000, got 999"])
    assert read_link({"sweep": "-4,-8"}, LINKED["l6"], {}) == ({"sweep": [-4.0, -8.0]}, [])
    assert read_link({"sweep": "-4,3"}, LINKED["l6"], {}) == ({}, ["sweep must be between -20.0 and 0.0, got 3"])
    assert read_link({"drafter": "ar"}, LINKED["l7"], {"drafters": []})[1] == ["drafter must be one of , got 'ar'"]


def test_what_a_link_writes_it_reads_back():
    fields = LINKED["l6"]
    values = {"S": 3, "k": 4, "g": -8.5, "sweep": [-4.0, -16.0], "prompt": LINKED["l6"]["prompt"].options[1]}
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
