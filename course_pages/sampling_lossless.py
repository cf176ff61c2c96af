"""Lesson 2: speculative sampling keeps the target's distribution, shown on one position."""
import pandas as pd
import streamlit as st

import appkit
from specviz.lessons.presets import PRESETS
from specviz.lessons import sampling
from specviz.viz import distributions as figs
from specviz.viz.charts import num

S = st.session_state
K = appkit.keys("sampling")   # this page's session keys
appkit.defaults("sampling")   # each setting's first value, from its course record
H = appkit.keys("sampling", kept=False)   # what it computed, and its elements' keys
SOURCES = ["the real models, after this prompt", "the article's 0.4 / 0.2 example", "typed by hand"]
SEED_EXAMPLE = {"labels": ["the token", "another", "a third"], "p": [0.2, 0.5, 0.3], "q": [0.4, 0.3, 0.3]}

appkit.header(
    __file__,
    f"{appkit.CHECKS_AHEAD}, “Random sampling preserves the target's probabilities”; {appkit.DRAFT_VERIFY}, "
    "“Draft, then verify” (“Speculative decoding buys speed, not a different answer”).",
    "The drafter samples from its own distribution **q**, which differs from the target's **p**. The rule: "
    "*accept x with probability min(1, p(x)/q(x)); at the first rejection draw from the normalized "
    "max(0, p − q)*. Look at which distribution the emitted tokens follow, and at the two coloured parts of "
    "each bar once they appear.")

m = appkit.require_models()
drafters = list(m.drafter_models)
appkit.default(K.source, SOURCES[0])
appkit.default(K.drafter, drafters[0])
source = st.radio("Distributions from", SOURCES, horizontal=True, key=K.source)
if source == SOURCES[0]:
    c1, c2, c3 = st.columns([2, 2, 1])
    c1.selectbox("Prompt", PRESETS, key=K.prompt, format_func=appkit.prompt_label)
    c2.selectbox("Drafter", drafters, key=K.drafter, format_func=appkit.drafter_label)
    c3.slider("Temperature", *appkit.bounds("sampling", "temp"), step=0.1, key=K.temp,
              help=f"Both models sample from their {sampling.READABLE.top_k} likeliest tokens (top-k), so that "
                   "sampled text reads as words; the rule holds for any such cut-off applied to both.")
    lump = st.toggle("Show the rest of the vocabulary as one “(other)” bar", key=K.other)

    def distributions() -> dict:
        """p and q after the prompt, coarsened; {} when the drafter proposes nothing there."""
        p_full, q_full = sampling.next_token_distributions(m, S[K.prompt], S[K.drafter], sampling.readable(S[K.temp]))
        return {} if q_full is None else sampling.coarse(p_full, q_full, m.token_text, n=5, other=lump)

    dist = appkit.shared(H.dist, [m.name, str(m.device), S[K.prompt], S[K.drafter],
                                     S[K.temp], lump], distributions, "the models on this prompt")
    if dist == {}:
        st.warning("This drafter proposes nothing after this prompt (prompt lookup found no earlier match). "
                   "Pick another prompt or drafter.")
        appkit.stop()
    st.caption("The likeliest tokens under either model. "
               + ("Everything else is lumped into one “(other)” bar; the rule holds exactly on this coarser "
                  "vocabulary too." if lump else
                  "p and q are renormalised over these tokens (each conditioned on the next token being one of "
                  "them), so the bars are readable; the rule holds exactly for those distributions too."))
elif source == SOURCES[1]:
    dist = SEED_EXAMPLE
    st.markdown(f"The example in {appkit.CHECKS_AHEAD}: the drafter proposes **the token** with probability "
                "**0.4**, the target wants **0.2**. The other two tokens are **this app's**, added so that each "
                "distribution sums to 1: **another** (target 0.5, drafter 0.3) and **a third** (0.3 and 0.3).")
else:
    appkit.default(H.table, pd.DataFrame({"token": ["A", "B", "C"], "p": [0.6, 0.3, 0.1], "q": [0.2, 0.3, 0.5]}))
    edited = st.data_editor(S[H.table], num_rows="dynamic", key=H.editor, hide_index=True)
    try:
        edited = edited.dropna()
        dist = {"labels": [str(t) for t in edited["token"]],
                "p": sampling.check_distribution([float(x) for x in edited["p"]], "p"),
                "q": sampling.check_distribution([float(x) for x in edited["q"]], "q")}
    except (ValueError, TypeError) as e:
        st.error(f"Those numbers are not distributions: {e}.")
        appkit.stop()
    st.caption("Each column is normalised to sum to 1.")

c1, c2 = st.columns(2)
with c2:
    revealed = appkit.predict("sampling", "the drafter's q is wrong. After many rounds, the emitted tokens follow…",
                              ["q (the drafter)", "something between p and q", "p (the target)"], horizontal=False)
if dist is None:   # a follower with other settings than the presenter's, who has not asked to run the models
    appkit.next_lesson(__file__)
    appkit.stop()
labels, p, q = dist["labels"], dist["p"], dist["q"]
c1.plotly_chart(figs.pq_bars(labels, p, q), key=H.pq)


def sample_sentences():
    out = appkit.measure(sampling.sentences, m, S[K.prompt], drafters[0], sampling.readable(S[K.temp]),
                         S[K.gen_seed], k=min(4, appkit.limits().max_k), max_new_tokens=appkit.new_tokens(20))
    S[H.sentences] = (S[K.prompt], out)


if revealed:   # everything below carries the answer
    if source == SOURCES[1]:
        st.markdown("Accepting half of the drafter's **the token** proposals supplies exactly the target's 0.2: "
                    f"0.4 × min(1, 0.2/0.4) = 0.4 × 0.5 = **{num(0.4 * 0.5)}**.")
    st.plotly_chart(figs.rebuild_bars(labels, p, q), key=H.rebuild,
                    config=appkit.chart_config("lesson2-rebuild-p"))
    r = sampling.rebuild(p, q)
    st.markdown(f"Green: accepted proposals, q(x)·min(1, p(x)/q(x)) = **min(p(x), q(x))**; they add up to the "
                f"acceptance rate **{r['accept_rate']:.3f}**. Orange: the remaining {1 - r['accept_rate']:.3f} of "
                f"rounds reject and redraw from the residual, supplying **max(0, p(x) − q(x))**: exactly what the drafter "
                f"under-proposes.")

    st.subheader("Draw it many times")
    n, seed = appkit.rounds_and_seed("sampling")
    runs = {rule: sampling.simulate(p, q, n, rule, seed=seed) for rule in sampling.RULES}
    freqs = {sampling.RULE_NAMES[rule]: sampling.histogram(runs[rule]["outputs"], len(p)) for rule in sampling.RULES}
    st.plotly_chart(figs.convergence(labels, p, freqs, n), key=H.hist,
                    config=appkit.chart_config("lesson2-convergence"))
    st.dataframe(pd.DataFrame(sampling.rule_rows(p, q, runs)), hide_index=True)
    st.markdown(sampling.lossless_answer(p, q, runs))

    st.subheader("Same distribution, different sentences")
    st.markdown("Equal distributions do not mean equal sentences. Speculative execution consumes random numbers "
                "differently from plain sampling, so runs are not required to match, even with the same nominal "
                f"random seed ({appkit.CHECKS_AHEAD}): the same random seed *can* give another sentence.")
    st.markdown(f"Here the two sources promise different things. {appkit.DRAFT_VERIFY} says speculative decoding "
                "produces “the exact same text, faster”: “You get the same output you would have gotten the slow "
                "way.” In this app's reading that holds for greedy decoding, within implementation numerics, and "
                f"overstates the sampling case. {appkit.CHECKS_AHEAD} promises the target's distribution, and says "
                "its guarantees “do not require two random runs to produce the same sentence, even with the same "
                "nominal seed”.")
    st.number_input("random seed", *appkit.bounds("sampling", "gen_seed"), step=1, key=K.gen_seed)

    st.button("Sample three continuations", on_click=sample_sentences, type="primary")
    if H.sentences in S:
        prompt, out = S[H.sentences]
        for name, text in out:
            st.markdown(f"**{name}:**")
            st.text(prompt + text)
        appkit.result_caption(H.same_seed, sampling.same_seed_caption(out[0][1], out[1][1]))

appkit.next_lesson(__file__)
