"""specviz: an interactive lesson on speculative decoding, driving real models step by step.

Run with `streamlit run app.py`. This file only builds the frame: navigation over lessons/, the
shared sidebar (device, presenter mode, model status) and the state that outlives page switches.
"""
import streamlit as st

import appkit

st.set_page_config(page_title="specviz · speculative decoding", page_icon="⚡", layout="wide")
appkit.keep_session_state()
nav = st.navigation({
    "specviz": [st.Page("lessons/home.py", title="Home: draft, then verify", icon="⚡", default=True)],
    "Lessons": [st.Page(path, title=title, url_path=url) for path, title, url in appkit.LESSONS],
})
appkit.sidebar()
nav.run()
