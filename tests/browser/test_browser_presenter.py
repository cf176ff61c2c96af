"""Presenter mode in a real browser, at a projector's 1024×768 and 1280×720, on every page.

Each page is opened from a link with presenter=1, as a teacher opens it in a fresh browser, at
1024×768 and then resized to 1280×720 (one session a page for both sizes): the sidebar must start
collapsed, nothing may reach past the right edge of the window (a wide table scrolls inside its
own box), no button label is cut, no developer item is in the toolbar, and a screenshot of each
page at each size is saved under artifacts/ for a person to look at.
"""
import pytest

from tests.browser.chromium import PAGES, check, cut_labels, settle, sync_api

SIZES = [(1024, 768), (1280, 720)]

# Elements that reach past the window's right edge and are not clipped by a box that scrolls or
# hides its overflow inside the window: what a projector would cut off.
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


def open_sized(browser, url, errors, size):
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" and "/_stcore/" not in
            msg.location.get("url", "") else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(120_000)
    page.goto(url)
    settle(page)
    return page


def resize(page, size):
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.wait_for_timeout(500)   # the charts redraw at the new width on the window's resize event


@pytest.mark.parametrize("path,title", PAGES)
def test_every_page_fits_a_projector_in_presenter_mode(app, browser, path, title):
    """One session a page, resized from one projector size to the other: the sizes share the page's
    run and its reveals (each a rerun of the page's script), and each is checked on its own."""
    errors = []
    page = open_sized(browser, f"{app}/{path}?presenter=1", errors, SIZES[0])
    sync_api.expect(page.locator("h1").first).to_contain_text(title)
    sync_api.expect(page.locator('[data-testid="stSidebar"]')).to_have_attribute("data-collapsed", "true")
    names = {size: f"presenter-{size[0]}x{size[1]}-{path or 'home'}" for size in SIZES}
    for size in SIZES:   # the first screen, as the room sees it
        resize(page, size)
        check(page, errors, names[size])
    for _ in range(4):   # the answers too: every prediction revealed, as a class goes through the page
        reveal = page.get_by_role("button", name="Reveal")
        if not reveal.count():
            break
        reveal.first.click()
        settle(page)
    for size in SIZES:
        resize(page, size)
        sync_api.expect(page.locator('[data-testid="stSidebar"]')).to_have_attribute("data-collapsed", "true")
        fit = page.evaluate(OVERFLOW)
        assert fit["scroll"] <= fit["client"] and fit["over"] == [], (size, fit)
        if page.locator("[data-testid=stMain] button .stMarkdownEllipsis").count():
            assert cut_labels(page, "[data-testid=stMain] button") == []
        assert page.get_by_text("Deploy", exact=True).count() == 0
        # the whole page at the same width, for a person to read (the main area scrolls, not the window)
        tall = page.evaluate("document.querySelector('[data-testid=stMain]').scrollHeight")
        page.set_viewport_size({"width": size[0], "height": min(tall + 100, 12000)})
        check(page, errors, names[size] + "-whole")
    page.close()
