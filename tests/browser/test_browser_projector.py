"""Every page on a projector, in a real browser: presenter mode at 1024×768 and 1280×720, before and
after its predictions are revealed and its measurements have drawn their tables.

Each page is opened from a link with presenter=1, as a teacher opens it in a fresh browser, at
1024×768 and resized to 1280×720 (one session a page for every check: a page load with its
measurements is the slow part). On every page, at each size:
- it draws with no exception box and no browser console error, the sidebar collapsed, and no
  developer item in the toolbar;
- nothing reaches past the window's right edge (what a projector would cut off), and no button
  label is cut;
- each table's box fits the content column: its right edge, its scrolled against its visible
  width and (a dataframe scrolls inside its canvas) height, so no column or row hides behind an
  inner scroll, which the window's edge alone would not show;
- a "Predict:" question is drawn at least as large as the body text around it, and so is a caption that
  carries a result (appkit.result_caption);
- no chart's tick label reaches past its chart's edge (a rotated first label was cut: "nchor only"), no tab
  hides behind its row's scroll (lesson 8's checklist titles), and the home race's two lanes sit side by
  side once it has run, so both are in view.
Screenshots under artifacts/, for a person to look at: presenter-<size>-<page>.png (the first
screen, as the room sees it) and fit-<page>.png (the whole page at 1024 pixels after its measurements).
"""
import pytest

from tests.browser.chromium import ARTIFACTS, PAGES, check, cut_labels, settle, sync_api

SIZES = [(1024, 768), (1280, 720)]
# what a lesson measures only when asked: pressed after its predictions are revealed, so its tables are drawn
MEASURE = {"": ["Start the race"], "parallel_drafting": ["Time drafting at k = 1, 2, 4, 8"],
           "verification_budget": ["Draft, profile and allocate"],
           "dloop": ["Draft and check one round", "Run the sweep"],
           "cost_per_token": ["Time the target at widths"], "reading_a_speedup": ["Compare prose and code"]}
# left out: lesson 9's float32-against-bfloat16 search (over 15 minutes on a busy 2-core CPU); its table is an
# st.table like the rest, and the lesson's live DLoop table is measured
# a lesson's link can narrow a long measurement: lesson 6 sweeps one threshold, not three (minutes on a busy CPU)
LINK = {"dloop": "&sweep=-10"}

# Elements that reach past the window's right edge and are not clipped by a box that scrolls or
# hides its overflow inside the window.
OVERFLOW = """() => {
  const width = document.documentElement.clientWidth, out = [];
  const clipped = el => { for (let a = el.parentElement; a; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (['auto', 'scroll', 'hidden', 'clip'].includes(s.overflowX) && a.getBoundingClientRect().right <= width + 1)
        return true; } return false; };
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || r.right <= width + 1 || clipped(el)) continue;
    out.push(`${el.tagName.toLowerCase()}[${el.getAttribute('data-testid') || el.className}] right=${Math.round(r.right)}`);
  }
  return {scroll: document.documentElement.scrollWidth, client: width, over: out.slice(0, 10)};
}"""

# Each visible table's box against the content column. Tables in a hidden tab have no box.
TABLES = """() => {
  const main = document.querySelector('[data-testid=stMainBlockContainer]');
  const pad = parseFloat(getComputedStyle(main).paddingRight);
  const column = main.getBoundingClientRect().right - pad, out = [];
  const boxes = main.querySelectorAll('[data-testid=stTable], [data-testid=stDataFrame], [data-testid=stHtml]');
  for (const box of boxes) {
    if (box.matches('[data-testid=stHtml]') && !box.querySelector('table')) continue;
    const r = box.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const inner = box.querySelector('.dvn-scroller') || box;
    const table = box.querySelector('table');
    out.push({kind: box.getAttribute('data-testid'), right: Math.round(r.right), column: Math.round(column),
              scroll_w: inner.scrollWidth, client_w: inner.clientWidth,
              scroll_h: inner.scrollHeight, client_h: inner.clientHeight,
              table_w: table ? Math.round(table.getBoundingClientRect().width) : null,
              text: box.innerText.slice(0, 60)});
  }
  return out;
}"""

# The computed font size of the "Predict:" question and of the body text (a markdown paragraph, not a
# widget's label, a caption or a button) on the page.
FONTS = """() => {
  const px = el => el ? parseFloat(getComputedStyle(el).fontSize) : null;
  const question = document.querySelector('[data-testid=stMain] [class*="st-key-keep_predict_"] [data-testid=stWidgetLabel] p');
  const body = [...document.querySelectorAll('[data-testid=stMain] [data-testid=stMarkdown] [data-testid=stMarkdownContainer] p')]
    .find(p => !p.closest('[data-testid=stWidgetLabel], button, [data-testid=stCaptionContainer], [data-testid=stExpander]'));
  return {question: px(question), body: px(body)};
}"""


# A chart's tick labels against its own box, tabs against their row, and the race's lanes against each other.
CLIPPED = """() => {
  const out = [];
  for (const chart of document.querySelectorAll('[data-testid=stMain] .js-plotly-plot')) {
    const box = chart.querySelector('.main-svg').getBoundingClientRect();
    for (const t of chart.querySelectorAll('.xtick text, .ytick text')) {
      const r = t.getBoundingClientRect();
      if (r.width && (r.left < box.left - 1 || r.right > box.right + 1)) out.push(['chart label', t.textContent]);
    }
  }
  for (const tab of document.querySelectorAll('[data-testid=stMain] [data-testid=stTab]')) {
    const row = tab.parentElement.getBoundingClientRect(), r = tab.getBoundingClientRect();
    const text = document.createRange(); text.selectNodeContents(tab);
    if (r.right > row.right + 1 || r.left < row.left - 1 || text.getBoundingClientRect().right > r.right + 1)
      out.push(['tab cut or past its row', tab.innerText]);
  }
  // a lane is its header line and its text box: the headers wrap to different heights, the lanes start level
  const lanes = [...document.querySelectorAll('[data-testid=stMain] .sv-race')].map(l => l.parentElement.getBoundingClientRect());
  if (lanes.length === 2 && Math.abs(lanes[0].top - lanes[1].top) > 2)
    out.push(['race lanes one above the other', lanes.map(l => Math.round(l.top))]);
  const px = el => parseFloat(getComputedStyle(el).fontSize);
  const body = [...document.querySelectorAll('[data-testid=stMain] [data-testid=stMarkdownContainer] p')]
    .find(p => !p.closest('[data-testid=stWidgetLabel], button, [data-testid=stCaptionContainer], [data-testid=stExpander]'));
  for (const p of document.querySelectorAll('[data-testid=stMain] [class*="st-key-result_"] [data-testid=stCaptionContainer] p'))
    if (body && px(p) < px(body)) out.push(['result caption smaller than the text', p.innerText.slice(0, 60)]);
  return out;
}"""


def misfits(page) -> list:
    """Tables that do not fit, in every tab of the page (each tab is shown in turn)."""
    found = []
    tabs = page.locator('[data-testid=stMain] [data-baseweb=tab]')
    for i in range(max(1, tabs.count())):
        if tabs.count():
            tabs.nth(i).click()
            page.wait_for_timeout(300)
        for t in page.evaluate(TABLES):
            if (t["right"] > t["column"] + 1 or t["scroll_w"] > t["client_w"] + 1
                    or (t["kind"] == "stDataFrame" and t["scroll_h"] > t["client_h"] + 1)):
                found.append(t)
    return found


def resize(page, size):
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.wait_for_timeout(800)   # the charts redraw at the new width on the window's resize event


def problems_at(page, size) -> list:
    """What a projector of this size (the window's size now) would cut or hide on the page as it stands."""
    sync_api.expect(page.locator('[data-testid="stSidebar"]')).to_have_attribute("data-collapsed", "true")
    found = []
    fit = page.evaluate(OVERFLOW)
    if fit["scroll"] > fit["client"] or fit["over"]:
        found.append((size, "past the window", fit))
    if page.locator("[data-testid=stMain] button .stMarkdownEllipsis").count():
        found += [(size, "cut label", c) for c in cut_labels(page, "[data-testid=stMain] button")]
    found += [(size, "table", t) for t in misfits(page)]
    found += [(size, *c) for c in page.evaluate(CLIPPED)]
    fonts = page.evaluate(FONTS)
    if fonts["question"] is not None and fonts["question"] < fonts["body"]:
        found.append((size, "question smaller than the text", fonts))
    if page.get_by_text("Deploy", exact=True).count():
        found.append((size, "developer toolbar", "Deploy"))
    return found


@pytest.mark.parametrize("path,title", PAGES)
def test_every_page_fits_a_projector_before_and_after_its_answers_and_measurements(app, browser, path, title):
    errors = []
    page = browser.new_page(viewport={"width": SIZES[0][0], "height": SIZES[0][1]})
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" and "/_stcore/" not in
            msg.location.get("url", "") else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(600_000)
    page.goto(f"{app}/{path}?presenter=1{LINK.get(path, '')}")
    settle(page)
    sync_api.expect(page.locator("h1").first).to_contain_text(title)
    problems = []
    for size in SIZES:   # the first screen, as the room sees it
        resize(page, size)
        check(page, errors, f"presenter-{size[0]}x{size[1]}-{path or 'home'}")
        problems += problems_at(page, size)
    for _ in range(4):   # every prediction revealed, as a class goes through the page
        reveal = page.get_by_role("button", name="Reveal")
        if not reveal.count():
            break
        reveal.first.click()
        settle(page)
    for label in MEASURE.get(path, []):
        page.get_by_role("button", name=label).click()
        settle(page, timeout_s=900)
    for size in SIZES:
        resize(page, size)
        problems += problems_at(page, size)
    # the page after its measurements, whole, at the projector's 1024 pixels (the main area scrolls, not the
    # window), saved before judging it so that a misfit can be looked at
    tall = page.evaluate("document.querySelector('[data-testid=stMain]').scrollHeight")
    page.set_viewport_size({"width": SIZES[0][0], "height": min(tall + 100, 16000)})
    check(page, errors, f"fit-{path or 'home'}")
    page.close()
    assert problems == [], path
