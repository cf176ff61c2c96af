"""specviz: an interactive lesson on speculative decoding, driving real models step by step.

Run with `streamlit run app.py`. This file only builds the frame: navigation over course_pages/, the
shared sidebar (device, presenter mode, model status) and the state that outlives page switches.
"""
import streamlit as st

import appkit

nav = appkit.frame()
try:
    with appkit.apology():   # the one place around every page: an unexpected error shows an id, not a traceback
        page = appkit.current_page(nav)
        # a presenter's page reaches its followers before it runs (a page may wait minutes for the
        # models on a fresh server), and again with what it drew (its settings, lesson 1's trace)
        appkit.show_class(page)
        appkit.wait_for_engine_code(page)   # a page's imports of transformers never race the models' load
        nav.run()
        appkit.show_class(page)
        appkit.mark_seen()   # last: the browser has this screen once its address carries its number
finally:
    appkit.start_loading()   # after the page: the first page draws before the models take the cores
