"""specviz: an interactive lesson on speculative decoding, driving real models step by step.

Run with `streamlit run app.py`. This file only builds the frame: navigation over pages/, the
shared sidebar (device, presenter mode, model status) and the state that outlives page switches.
"""
import streamlit as st

import appkit

nav = appkit.frame()
try:
    with appkit.apology():   # the one place around every page: an unexpected error shows an id, not a traceback
        nav.run()
        appkit.show_class(appkit.current_page(nav))   # a class's followers draw what the presenter's page shows
        appkit.mark_seen()   # last: the browser has this screen once its address carries its number
finally:
    st.session_state[appkit.FRAMED] = False   # a page run without this frame draws it itself
    appkit.start_loading()   # after the page: the first page draws before the models take the cores
