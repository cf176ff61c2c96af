"""Lesson 3: parallel drafting and the "of problem" failure, on the real block drafters."""
import time

import pandas as pd
import streamlit as st

import appkit
from specviz.lessons.presets import PRESETS
from specviz.lessons import parallel
from specviz.viz import parallel as figs

S = st.session_state
H = appkit.keys("parallel", kept=False)   # what it computed, and its elements' keys
N_SAMPLES = 200

appkit.header(
    __file__,
    f"{appkit.DRAFT_VERIFY}, “The catch: the draft model is the hard part”; {appkit.CHECKS_AHEAD}, “DSpark lets "
    "cheap token choices depend on one another”.",
    "A parallel drafter (DFlash) predicts every position of its block in one pass, each position blind to what "
    "the others pick. Our dialogue data answers requests with “of course” and “no problem” equally often. Look "
    "at how often each drafter starts its block with the crossbred **“of problem”**, and at what DSpark's Markov "
    "head, which sees the token drawn just before, changes.")


def side_by_side(n: int) -> list:
    """n columns, stacked in presenter mode: a projector's 1024 pixels cannot hold two of these charts in
    large type side by side without cutting their titles, tick labels and legends."""
    return [st.container() for _ in range(n)] if appkit.presenter() else st.columns(n)


m = appkit.require_models()
blocks = m.block_drafters()
if not blocks:
    st.info("This model set has no block drafter (DFlash or DSpark), so this lesson cannot run here.")
    appkit.stop()
prompt = parallel.DIALOGUE_PROMPT
st.markdown(f"Prompt: `{prompt}`. The next two tokens should be *of course* or *no problem*.")
st.caption("The embedded DFlash has DFlash's mechanics but reads its proposals in DSpark's alignment (this app's "
           "choice): its anchor's own slot predicts the first token, so a two-token block here is two slots, where "
           "DFlash's own read-out would use three (lesson 9 §1 says what differs).")
OPTIONS = ["none", "a few", "about as many as “of course”"]
revealed = appkit.predict("parallel", f"out of {N_SAMPLES} blocks the DFlash drafter samples here, how many start "
                          "with “of problem”?", OPTIONS)
# the drafter the question asks about: the one-pass drafter without a Markov head, where there is one
asked = next((d for d in blocks if d not in m.block_drafters(markov=True)), blocks[0])


def sample():
    with st.spinner("Sampling blocks…"):
        S[H.samples] = appkit.measure(parallel.samples_of, m, prompt, blocks, N_SAMPLES)


if revealed:   # the probabilities and the samples are the answer
    st.subheader("Product of marginals against the Markov head")
    tables = appkit.shared(H.tables, [m.name, str(m.device), prompt, blocks],
                           lambda: {d: parallel.phrase_table(m, prompt, d) for d in blocks},
                           "the drafters on this prompt") or {}
    cols = side_by_side(len(blocks)) if tables else []
    for col, d in zip(cols, blocks):
        col.plotly_chart(figs.phrase_bars(tables[d], appkit.drafter_label(d)), key=H[f"phrase_{d}"])
        bad = next(r for r in tables[d] if r["phrase"] == " of problem")
        col.markdown(f"P(“of problem”): **{bad['product_of_marginals']:.3f}** as a product of the backbone's "
                     f"marginals, **{bad['sequential']:.3f}** sequentially."
                     + (" DFlash has no Markov head, so its two bars are the same: what it samples is the product."
                        if d not in m.block_drafters(markov=True) else
                        " Here the first bar is DSpark's backbone alone: the softmax of its base logits with the "
                        "Markov head left out, what its positions would say if blind. It is not the marginal "
                        "distribution of what DSpark samples."))

    st.subheader("Sampled blocks")
    st.button(f"Sample {N_SAMPLES} two-token blocks from each drafter", on_click=sample, type="primary")
    if H.samples in S:
        counts = S[H.samples]
        named = {appkit.drafter_label(d): c for d, c in counts.items()}
        st.plotly_chart(figs.sample_bars(named, parallel.PHRASES, N_SAMPLES), key=H.samples_fig,
                        config=appkit.chart_config("lesson3-sampled-blocks"))
        st.markdown(" · ".join(f"{appkit.drafter_label(d)}: “of problem” **{c.get(' of problem', 0)}** of {N_SAMPLES}"
                               for d, c in counts.items()))
        st.markdown(parallel.answer(counts, asked, N_SAMPLES, OPTIONS, appkit.drafter_label))

st.markdown(f"**A longer memory costs latency** ({appkit.CHECKS_AHEAD}): DSpark's default Markov head models only "
            "the immediately preceding token beyond the backbone's shared context; an **alternative recurrent head** "
            "carries more within-block history. The design question is how much additional surviving prefix repays "
            "the head's latency: a cheap serial head can improve coherence while the expensive backbone work "
            "remains parallel. The embedded DSpark has the Markov head only.")

st.subheader("Suffix decay and drafting cost")
st.markdown("*Draft, Then Verify* says a parallel drafter's quality falls off toward the end of its block "
            "(**suffix decay**), while an autoregressive drafter conditions each token on the last but drafts "
            "sequentially, so its cost grows with the block. The left chart measures **conditional acceptance**: "
            "among rounds that kept positions 1..i−1, the share that also kept position i. (The plain share of "
            "rounds keeping position i falls for *any* drafter, since a position is only kept after every one "
            "before it, so it cannot show decay.) The autoregressive line is there to compare; what these small "
            "models show is this app's measurement, not the source's.")


def decay(bar):
    """Conditional acceptance per drafter, the bar naming the drafter and prompt being decoded."""
    drafters = [d for d in ("ar", *blocks) if d in m.drafter_models]
    start = time.perf_counter()
    measured = appkit.measure(parallel.decay_of, m, PRESETS[:3], drafters, k=6, progress=lambda done, total, d: bar.progress(
        done / total, f"{appkit.drafter_label(d)}: decoding prompt {done % len(PRESETS[:3]) + 1} of {len(PRESETS[:3])}…"))
    bar.empty()
    S[H.decay] = {**measured, "seconds": time.perf_counter() - start}


def drafting_cost(bar):
    drafters = [d for d in ("ar", *blocks) if d in m.drafter_models]
    start = time.perf_counter()
    rows = appkit.measure(parallel.draft_cost, m, PRESETS[0], drafters, [1, 2, 4, 8],
                          progress=lambda done, total, name: bar.progress(done / total, f"Run {done + 1} of {total}: {name}…"),
                          label=appkit.drafter_label)
    bar.empty()
    S[H.cost] = {"rows": rows, "seconds": time.perf_counter() - start}


c1, c2 = side_by_side(2)
if c1.button("Measure conditional acceptance by position (k = 6)"):
    decay(c1.progress(0.0, "Decoding three prompts per drafter…"))
if c2.button("Time drafting at k = 1, 2, 4, 8"):
    drafting_cost(c2.progress(0.0, "Warming up…"))
if H.decay in S:
    c1.plotly_chart(figs.position_lines({appkit.drafter_label(d): r for d, r in S[H.decay]["rates"].items()}),
                    key=H.decay_fig)
    c1.caption("Each drafter decoded the first three presets greedily at k = 6; "
               f"{S[H.decay]['seconds']:.0f} s on this machine.")
    for d, each in S[H.decay]["per_prompt"].items():   # what this run shows, drafter by drafter
        c1.markdown(parallel.decay_note(each, appkit.drafter_label(d)))
if H.cost in S:
    rows = S[H.cost]["rows"]
    c2.plotly_chart(figs.cost_lines(rows, appkit.drafter_label), key=H.cost_fig)
    c2.table(pd.DataFrame([{"drafter": appkit.drafter_label(r["drafter"]), "k": r["k"],   # every row, no inner scroll
                            "drafting per round": r["spread"].label(" ms"), "against the k before": step}
                           for r, step in zip(rows, parallel.cost_steps(rows))]), hide_index=True)
    c2.caption(f"Each drafter and k decoded the first preset {rows[0]['spread'].n} times after an uncounted warm-up, "
               f"alternated; {S[H.cost]['seconds']:.0f} s on this machine. A step “within this machine's noise” "
               "has overlapping ranges: its order is no finding.")
    c2.markdown(parallel.explain_cost(rows, blocks, appkit.drafter_label, m.device.type))

appkit.next_lesson(__file__)
