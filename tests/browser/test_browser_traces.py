"""Lesson 1's trace upload in a real browser: three hand-edited traces get three sentences and a file
over the upload limit is refused; no traceback and no exception box, and the lesson keeps its own
trace. Skipped (with the reason) where chromium or playwright is missing, as tests/browser/test_browser.py."""
import json
import tomllib

import pytest

from tests.app.test_app_errors import bad_files
from tests.browser.chromium import open_page, settle, sync_api
from specviz.generator.engine import Generation
from specviz.generator.settings import Settings
from tests.paths import ROOT

UPLOAD_MB = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"]["maxUploadSize"]


@pytest.fixture(scope="module")
def saved(models) -> dict:
    return json.loads(Generation(models, "The best way to learn is to", Settings.greedy("ar", 16, k=4))
                      .run().to_json())


def upload(page, name: str, content: bytes):
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
        files=[{"name": name, "mimeType": "application/json", "buffer": content}])
    settle(page)


def test_three_bad_trace_files_get_three_sentences_and_no_traceback(server, browser, saved):
    errors = []
    page = open_page(browser, f"{server}/draft_and_verify", errors)
    page.get_by_text("Replay a saved trace", exact=True).click()
    for name, content, reason in bad_files(saved):
        upload(page, name, content)
        refusal = page.locator('[data-testid="stAlert"]', has_text="Could not load")
        sync_api.expect(refusal).to_have_text(f"Could not load {name}: {reason}")
    # over the shipped upload limit: Streamlit refuses the file before the page sees it
    upload(page, "too-big.json", b" " * (UPLOAD_MB * 2**20 + 1))
    sync_api.expect(page.locator("body")).to_contain_text(f"File must be {UPLOAD_MB}")
    body = page.inner_text("body")
    assert "Traceback" not in body and "replaying a saved trace" not in body
    assert page.locator('[data-testid="stException"]').count() == 0
    assert not errors, errors
    page.close()
