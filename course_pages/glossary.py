"""The glossary: every term the lessons use, with where it comes from (specviz.lessons.glossary)."""
import streamlit as st

import appkit
from specviz.lessons import glossary

H = appkit.keys("glossary", kept=False)   # its elements' keys

appkit.css()
st.title("Glossary")
st.markdown("Every term the lessons use, in a sentence or two. Each entry names its source: *How speculative "
            "decoding checks ahead* or *Draft, Then Verify*, or **this app** where the name, notation or "
            "definition is ours.")
query = st.text_input("Find a term", key=H.query, placeholder="anchor, residual, SPS…")
found = glossary.matching(query)
if not found:
    st.info(f"No term or definition mentions “{query}”.")
for term, definition, source in found:
    st.markdown(f"**{term}** — {definition} *({source})*")

st.subheader("Works the lessons cite")
st.markdown("\n".join(f"- *{title}* ({who}{f', [link]({link})' if link else ''}): {what}."
                       + (f" Identifiers: {origin}." if origin else "")
                       for title, who, link, what, origin in glossary.WORKS))

appkit.next_lesson(__file__)
