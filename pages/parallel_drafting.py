"""Lesson 3: parallel drafting and the "of problem" failure, on the real block drafters."""
import streamlit as st

import appkit
from specviz.hosting.app_state import PRESETS
from specviz.lessons import parallel
from specviz.viz import parallel as figs

S = st.session_state
N_SAMPLES = 200

appkit.header(
    "3 · Parallel drafting",
    "seed 004, “The catch: the draft model is the hard part”; seed 000, “DSpark lets cheap token choices depend "
    "on one another”.",
    "A parallel drafter (DFlash) predicts every position of its block in one pass, each position blind to what "
    "the others pick. Our dialogue data answers requests with “of course” and “no problem” equally often. Look "
    "for the crossbred **“of problem”**, and for how DSpark's Markov head, which sees the token drawn just before, "
    "removes it.")

m = appkit.require_models()
blocks = [d for d in ("dflash", "dspark") if d in m.drafter_models]
if not blocks:
    st.info("This model set has no block drafter, so this lesson cannot run here.")
    st.stop()
prompt = parallel.DIALOGUE_PROMPT
st.markdown(f"Prompt: `{prompt}`. The next two tokens should be *of course* or *no problem*.")
st.radio("**Predict:** out of 200 blocks the DFlash drafter samples here, how many start with “of problem”?",
         ["none", "a few", "about as many as “of course”"], horizontal=True, index=None, key="l3_guess")

st.subheader("Product of marginals against the Markov head")
with appkit.engine():
    tables = {d: parallel.phrase_table(m, prompt, d) for d in blocks}
cols = st.columns(len(blocks))
for col, d in zip(cols, blocks):
    col.plotly_chart(figs.phrase_bars(tables[d], appkit.drafter_label(d)), key=f"l3_phrase_{d}")
    bad = next(r for r in tables[d] if r["phrase"] == " of problem")
    col.markdown(f"P(“of problem”): **{bad['product_of_marginals']:.3f}** as a product of marginals, "
                 f"**{bad['sequential']:.3f}** sequentially."
                 + (" DFlash has no Markov head, so its two bars are the same: what it samples is the product."
                    if d == "dflash" else ""))


def sample():
    with st.spinner("Sampling blocks…"), appkit.engine():
        S["l3_samples"] = {d: parallel.sample_blocks(m, prompt, d, N_SAMPLES, k=2) for d in blocks}


st.subheader("Sampled blocks")
st.button(f"Sample {N_SAMPLES} two-token blocks from each drafter", on_click=sample, type="primary")
if "l3_samples" in S:
    counts = S["l3_samples"]
    st.plotly_chart(figs.sample_bars(counts, parallel.PHRASES, N_SAMPLES), key="l3_samples_fig")
    st.markdown(" · ".join(f"{d}: “of problem” **{c.get(' of problem', 0)}** of {N_SAMPLES}" for d, c in counts.items()))
    if S.get("l3_guess"):
        st.markdown("**Answer:** count the “of problem” bars. Each DFlash position is right on its own; the pair is "
                    "wrong because position 2 never learns which word position 1 drew.")

st.subheader("Suffix decay and drafting cost")
st.markdown("If the drafter is blind within its block, later positions fail more often. An autoregressive drafter "
            "avoids that, but pays one forward per proposal.")


def decay():
    with st.spinner("Decoding three prompts per drafter…"), appkit.engine():
        S["l3_decay"] = {d: parallel.by_position(m, PRESETS[:3], d, k=6) for d in blocks}


def drafting_cost():
    drafters = [d for d in ("ar", *blocks) if d in m.drafter_models]
    with st.spinner("Timing the drafters at each block size…"), appkit.engine():
        S["l3_cost"] = parallel.draft_cost(m, PRESETS[0], drafters, [1, 2, 4, 8])


c1, c2 = st.columns(2)
c1.button("Measure acceptance by position (k = 6)", on_click=decay)
c2.button("Time drafting at k = 1, 2, 4, 8", on_click=drafting_cost)
if "l3_decay" in S:
    c1.plotly_chart(figs.position_lines(S["l3_decay"]), key="l3_decay_fig")
if "l3_cost" in S:
    c2.plotly_chart(figs.cost_lines(S["l3_cost"]), key="l3_cost_fig")
