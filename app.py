"""specviz: an interactive lesson on speculative decoding, driving real models step by step.

Run with `streamlit run app.py`. This file only builds the frame: navigation over pages/, the
shared sidebar (device, presenter mode, model status) and the state that outlives page switches.
"""
import streamlit as st

import appkit

st.set_page_config(page_title="specviz · speculative decoding", page_icon="⚡", layout="wide")
appkit.keep_session_state()
nav = appkit.navigation()
appkit.sidebar()
nav.run()
