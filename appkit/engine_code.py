"""The engine's code (transformers' model classes, specviz.generator), imported once, by one thread.

transformers' lazy imports break when two threads import it at once: a lesson opened while the
models' load imported it would fail with "ImportError: cannot import name 'DynamicCache' from
'transformers'". So one thread imports it (`ENGINE_CODE`); the models' load (appkit.runtime) waits
for it, the first run waits for it once its page has drawn (appkit.runtime.start_loading), and app.py
waits for it before a page whose imports bring it (`wait_for_engine_code`, course.Page.engine).
tests/app/test_app_engine_code.py checks that no page's imports add a module of transformers to it.

What it leaves out: the models themselves (appkit.runtime).
"""
import contextlib

import streamlit as st

from appkit.course import page_of
from specviz.hosting.background import Background


def _import_engine():
    """Import everything a page imports that brings transformers, and the classes a load imports
    (the target's Llama: from_pretrained imports it, with transformers' generation code), so that
    the thread that does is the only one: a page's own imports then find them in sys.modules."""
    import transformers.models.llama.modeling_llama  # noqa: F401
    import specviz.generator.engine  # noqa: F401
    import specviz.hosting.model_sets  # noqa: F401


# per process, as sys.modules is (not per Streamlit cache: a cleared cache must not import twice)
ENGINE_CODE = Background(_import_engine, name="import the engine", start=False)


def wait_for_engine_code(url_path: str):
    """Before the page at `url_path` runs (app.py): if its imports bring the engine (course.Page.engine),
    its code imported first, by ENGINE_CODE's thread alone, with a spinner meanwhile (seconds, once per
    server). A page that draws without it does not wait."""
    if page_of(url_path).engine and not ENGINE_CODE.done:
        with st.spinner("Loading the code that runs the models (once per server)…"):
            ENGINE_CODE.wait()


def import_engine_code():
    """The engine's code imported, waiting for it here: at the end of a run whose page has drawn (appkit.runtime.
    start_loading), so that the next run, whatever its page and however Streamlit starts it (a fresh
    server's first request runs a page's file without app.py, see appkit.frame), finds it imported
    instead of importing it beside the load. Seconds, once per server."""
    with contextlib.suppress(Exception):   # a failed import is the load's error too, shown where models are asked for
        ENGINE_CODE.wait()
