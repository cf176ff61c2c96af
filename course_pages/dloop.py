"""Lesson 6: DLoop: draft more stages before paying for a target check."""
import time

import pandas as pd
import streamlit as st

import appkit
from specviz.lessons.presets import PRESETS
from specviz.lessons import pricing, dloop
from specviz.viz import stages, tokens

S = st.session_state
K = appkit.keys("dloop")   # this page's session keys
appkit.defaults("dloop")   # each setting's first value, from its course record
H = appkit.keys("dloop", kept=False)   # what it computed, and its elements' keys
THRESHOLDS = [-2.0, -4.0, -6.0, -8.0, -10.0, -12.0, -16.0]   # sums over k tokens of a small drafter run low
REPEATS = 3                    # counted runs per setting: enough to see the spread, short enough for a class

appkit.header(
    __file__,
    f"{appkit.CHECKS_AHEAD}, “DLoop buys more drafting before paying for a target check”, and the DLoop paper's "
    "Table 2 as that article reports it.",
    "After each drafting stage DLoop sums the log-probabilities of that stage's proposals. If the sum clears a "
    "threshold **g**, it drafts another stage, using its **own hidden states as provisional context** where the "
    "target has not looked yet; otherwise the target checks everything at once. Look at what a later stage costs "
    "and what a single check gives up: the bonus tokens of the checks it skipped.")

st.subheader("S·k + 1 against S(k + 1)")
c1, c2 = st.columns(2)
# where a second stage adds tokens with the shipped drafters (dloop.OPENING, measured there)
S_ = c1.slider("stages S", *appkit.bounds("dloop", "S"), key=K.S)
k = appkit.block_slider(c2, "proposals per stage k", "dloop")
b = dloop.bonus_bound(S_, k)
m1, m2, m3 = st.columns(3)
m1.metric("one check of S stages commits at most", f"S·k+1 = {b['one_check']}")
m2.metric("S separate checks commit at most", f"S(k+1) = {b['separate_checks']}")
m3.metric("target passes saved", f"{b['target_passes_saved']}",
          help="…in exchange for the bonus tokens those checks would have added")
st.markdown(f"One check for every stage has a second price ({appkit.CHECKS_AHEAD}): **an early rejection discards "
            "every later block**, drafted but never committed.")
st.markdown(f"**Pruning against extending** ({appkit.CHECKS_AHEAD}): DSpark may **prune** a suffix while DLoop may "
            "**extend** a draft. Trimming a suffix can save target computation, but the parallel backbone pass that "
            "produced it remains a cost of the round; extending spends draft work to amortise a target call. The "
            "useful choice is the one that buys more surviving output for its elapsed cost.")

m = appkit.require_models()
loops = list(m.looping)
if not loops:
    st.info("This model set has no DLoop drafter, so the live parts of this lesson are not available.")
    appkit.stop()

st.subheader("One round, stage by stage")
c1, c2 = st.columns(2)   # halves: the drafters' labels are long, and a projector's 1024 pixels cut a narrow box
appkit.default(K.drafter, loops[0])
c1.selectbox("Prompt", PRESETS, key=K.prompt, format_func=appkit.prompt_label)
c2.selectbox("Drafter", loops, key=K.drafter, format_func=appkit.drafter_label)
st.slider("threshold g", *appkit.bounds("dloop", "g"), step=0.5, key=K.g)
revealed = appkit.predict("dloop", "with a lower (more permissive) g, will a round draft more stages or fewer?",
                          ["more", "fewer", "the same"])


def one_round():
    S[H.round] = appkit.measure(dloop.one_round, m, S[K.prompt], S[K.drafter], S[K.k], S[K.g], S[K.S],
                                      appkit.new_tokens(64))


st.button("Draft and check one round", on_click=one_round, type="primary")
if H.round in S:
    r = S[H.round]
    loop = stages.stages_html(r.drafter_info, r.proposed_tokens)
    if loop:   # S = 1 drafts one stage and runs no gate: there is no stage table to draw
        appkit.html(loop)
    appkit.html(tokens.block_html(r, "commit"))
    st.markdown(tokens.summary(r) + ".")

st.subheader("A live sweep of g, with and without loop-aware training")
chosen = st.multiselect("thresholds", THRESHOLDS, key=K.sweep)
st.caption("Plain decoding, each drafter with one stage a round, and each drafter at every chosen g, for the prompt, "
           f"k and S above: {REPEATS} runs each after an uncounted warm-up, alternated so that a busy moment of a "
           "shared machine falls on all of them.")


def run_sweep(bar):
    start = time.perf_counter()
    res = appkit.measure(dloop.threshold_sweep, m, S[K.prompt], loops, sorted(chosen), k=S[K.k],
                         max_stages=S[K.S], max_new_tokens=appkit.new_tokens(32), repeats=REPEATS,
                         progress=lambda done, total, name: bar.progress(done / total, f"Run {done + 1} of {total}: {name}…"),
                         label=appkit.drafter_label)
    bar.empty()
    S[H.sweep] = {**res, "prompt": S[K.prompt], "k": S[K.k], "S": S[K.S],
                     "seconds": time.perf_counter() - start}


# the sweep answers the prediction (its table counts stages per round at each g), so it waits for it
if not revealed:
    st.info("Answer the prediction above first: the sweep shows how many stages a round drafts at each g.")
elif st.button("Run the sweep", disabled=not chosen, type="primary"):
    run_sweep(st.progress(0.0, "Warming up…"))
if revealed and H.sweep in S:
    res = S[H.sweep]
    st.caption(f"The last sweep took {res['seconds']:.0f} s on this machine: prompt “{res['prompt']}”, "
               f"k = {res['k']}, S = {res['S']}.")
    st.plotly_chart(stages.sweep_figure(res, appkit.drafter_label), key=H.fig,
                    config=appkit.chart_config("lesson6-threshold-sweep"))
    st.table(pd.DataFrame(dloop.sweep_rows(res, appkit.drafter_label)), hide_index=True)   # wraps to fit a projector
    st.caption(f"Plain decoding: {res['baseline']['ms_per_token']:.2f} ms/token on this machine. Stages per round "
               "above 1 are rounds in which the gate opened and DLoop drafted again before the check. Where two "
               "speedups' ranges overlap, their order is within this machine's noise.")
if revealed:   # below the sweep, so that the answer is drawn after the run that counts its stages
    st.markdown((dloop.stages_answer(S[H.sweep], appkit.drafter_label) if H.sweep in S else
                 "**Answer: more.** Run the sweep above to count the stages on this prompt.")
                + " " + dloop.stages_reason(S.get(H.sweep), appkit.drafter_label,
                                            S.get(H.sweep, {}).get("S")))

st.subheader("Does a later stage earn its cost?")
st.markdown(f"“Every additional drafting stage must earn its cost” ({appkit.CHECKS_AHEAD}). Priced from the "
            "sweep's own runs, so the two cannot disagree: against the same drafter with one stage a round, what "
            "each stage beyond the first cost (the longer round, spread over the extra stages) and how many tokens "
            "it added, worth what a token costs with one stage a round. It pays exactly where looping made a token "
            "cheaper, and the verdict reads that off the sweep's speedups, run by run.")
if not revealed or H.sweep not in S:
    st.info("Run the sweep above: the price comes from its runs.")
else:
    prices = dloop.stage_prices(S[H.sweep])
    st.table(pd.DataFrame(dloop.price_rows(prices, appkit.drafter_label)), hide_index=True)
    for d in S[H.sweep]["one_stage"]:
        st.markdown(dloop.price_verdict(prices, d, appkit.drafter_label(d)))

st.subheader("The same stages on a hypothetical large target on a GPU")
st.markdown("The paper's Table 2 was measured on a large target on a GPU, where checking several positions can be "
            f"“only modestly slower than a one-token step” ({appkit.CHECKS_AHEAD}). The sweep's own rounds, "
            "priced twice: with this machine's costs, read off its plain and one-stage runs, and with lesson 7's "
            "large-target profile. A later stage pays where it adds more tokens than its cost is worth in one-stage "
            "tokens.")
st.caption(pricing.LARGE_GPU_ORIGIN)
if not revealed or H.sweep not in S:
    st.info("Run the sweep above: both prices come from its rounds.")
else:
    gpu = appkit.gpu_profile()
    regimes = dloop.stage_in_regimes(S[H.sweep], gpu, "this machine")
    for d in S[H.sweep]["one_stage"]:
        st.markdown(dloop.regime_verdict(regimes, d, appkit.drafter_label(d), "this machine",
                                         "the large-target profile"))
        st.table(pd.DataFrame(dloop.regime_rows(regimes, d)), hide_index=True)   # wraps to fit a projector
    st.caption(f"Every “needs” and “pays” here is priced, not measured: “priced, this machine” with this machine's "
               f"costs from the sweep's runs (a range where its runs differ; “noise” where they disagree, or where a "
               f"range reaches zero), “priced, large target” with “{gpu.label}”.")

st.subheader("The paper's ablation, and the same three rows measured here")
paper, here = st.columns(2)
paper.table(pd.DataFrame({
    "configuration (Gemma4-12B multi-token predictor)": ["no loop", "loop, no loop-aware training",
                                                         "loop with loop-aware training"],
    "mean acceptance length": ["4.86", "6.06", "7.50"],
    "speedup": ["3.17×", "2.90×", "3.68×"]}))
paper.caption(f"DLoop Table 2, as {appkit.CHECKS_AHEAD} reports it: looping without loop-aware training accepted "
              "more tokens yet ran slower: the extra accepted output did not repay the extra drafting work.")
res = S.get(H.sweep) if revealed else None
if res is None or not {"dloop", "dloop-plain"} <= set(res["one_stage"]):
    here.info("Run the sweep above with both DLoop drafters to measure the same three rows on this machine.")
else:
    g = min(sorted({r["threshold"] for r in res["rows"]}), key=lambda t: abs(t - S[K.g]))  # nearest the g above
    here.table(pd.DataFrame(dloop.paper_rows(res, g)))
    here.markdown(dloop.training_note(res, g))
    here.caption("“No loop” is the drafter without loop-aware training run one stage a round (DSpark's drafter). "
                 "Loop-aware training teaches the later stages to draft from the drafter's own hidden states where "
                 "the target's features are missing.")

st.subheader("What DLoop's released code combines, and what was never evaluated")
st.markdown(f"{appkit.CHECKS_AHEAD}, on the inspected released benchmark: DLoop's non-tree DSpark branch samples "
            "through the Markov head, gates extra stages using the corrected proposal logits, and submits the "
            "accumulated sequence to one greedy target check. It does **not call the confidence predictor, the "
            "step-rate cost table or load-aware prefix selection**: it combines dependency-head sampling with "
            "extension, while confidence-based prefix allocation remains a separate operation. The article's "
            "evidence includes **no matched evaluation combining DLoop's stages with DSpark's global confidence "
            "scheduler**.")
st.caption("This app's DLoop drafters are likewise DLoop's stages on the DSpark drafter: lesson 4's scheduler never "
           "trims their rounds, so this app does not measure the two together either.")

appkit.next_lesson(__file__)
