"""The first minute of a fresh server: no page's import of transformers races the models' load.

transformers' lazy imports break when two threads import it at once: a lesson opened while the
background load imported it failed with "ImportError: cannot import name 'DynamicCache' from
'transformers'". So one thread imports the engine's code (appkit.runtime.ENGINE_CODE), the first
run waits for it once its page has drawn, and app.py waits for it before a page whose imports bring
it (course.Page.engine). These tests run in fresh Python processes, as a fresh server is: an import
already done by this test process would hide the race.

Planted bug they catch: the load importing transformers in its own thread while the next run's
page imports it too (the code before ENGINE_CODE failed the first test on every run).
"""
import subprocess
import sys

import pytest

from tests.paths import ROOT

HOME_THEN_LESSON_1 = """
from streamlit.testing.v1 import AppTest
at = AppTest.from_file("app.py", default_timeout=600).run()
assert not at.exception, [e.value for e in at.exception]
at.switch_page("course_pages/draft_and_verify.py").run()
assert not at.exception, [e.value for e in at.exception]
assert at.title[0].value.startswith("1 ·"), at.title[0].value
print("lesson 1 drawn")
"""


@pytest.mark.slow
def test_a_lesson_opened_while_the_models_load_draws_on_its_first_run():
    """Home, then lesson 1 through the navigation, in a new process, on its first try. One run: the
    planted bug failed it on every run (three runs a suite cost 36 s for nothing more)."""
    done = subprocess.run([sys.executable, "-c", HOME_THEN_LESSON_1], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0 and "lesson 1 drawn" in done.stdout, (done.stdout + done.stderr)[-3000:]


PAGE_IMPORTS = """
import re, sys
from appkit.course import COURSE

def imports(page):   # the page file's own import lines, run as its first run runs them
    lines = open(page.file).read().splitlines()
    exec("\\n".join(line for line in lines if re.match(r"(from|import) ", line)), {})

def transformers_modules():
    return {m for m in sys.modules if m == "transformers" or m.startswith("transformers.")}

for page in COURSE:
    if not page.engine:
        imports(page)
assert not transformers_modules(), "a page that draws before the engine's code imports transformers"
from appkit.runtime import ENGINE_CODE
ENGINE_CODE.wait()
before = transformers_modules()
for page in COURSE:
    imports(page)
import specviz.lessons.home   # the home race's own import, once the models have loaded
assert transformers_modules() == before, sorted(transformers_modules() - before)
print("no page imports transformers itself")
"""


@pytest.mark.slow
def test_no_page_imports_a_module_of_transformers_that_the_engine_code_left_out():
    """Pages marked engine=False import no transformers at all (they draw without waiting); once
    ENGINE_CODE has run, the other pages' imports add no module of transformers (a page that did
    would import it beside the load again)."""
    done = subprocess.run([sys.executable, "-c", PAGE_IMPORTS], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "no page imports" in done.stdout, (done.stdout + done.stderr)[-3000:]
