"""Lesson 4: the verification budget: confidences, a profiled SPS table, Algorithm 1 under load."""
import time

import pandas as pd
import streamlit as st

import appkit
from specviz.lessons.presets import PRESETS
from specviz.lessons import budget
from specviz.lessons.admission import algorithm1
from specviz.viz import stages
from specviz.viz.admission import sps_figure, theta_steps
from specviz.viz.charts import num

S = st.session_state
K = appkit.keys("budget")   # this page's session keys
appkit.defaults("budget")   # each setting's first value, from its course record
H = appkit.keys("budget", kept=False)   # what it computed, and its elements' keys
PROFILE_REPEATS = 5   # counted passes over the widths; each width keeps its fastest call

appkit.header(
    __file__,
    f"{appkit.CHECKS_AHEAD}, “DSpark budgets the target's work separately”; "
    f"{appkit.DRAFT_VERIFY}, “verifying a long block full of tokens that are probably going to be "
    "rejected burns capacity”.",
    "When several requests share one target, every drafted token it checks takes room another request could use. "
    "DSpark's confidence head estimates, for each proposal, the chance that it passes if everything before it did; "
    "multiplied along the block, that is its **prefix survival a**: the chance it ends up in the surviving prefix. "
    "The scheduler prices the output it expects against the target's measured speed and stops at the first "
    "admission that would not raise expected tokens per second; this app's version admits the likeliest proposals "
    "first. Look at how many "
    "proposals of each request it admits as more requests share the target.")

m = appkit.require_models()
confident = m.block_drafters(confidence=True)
if not confident:
    st.info("This model set has no drafter with a confidence head (DSpark), so this lesson cannot run here.")
    appkit.stop()
c1, c2 = st.columns(2)
R = c1.slider("live requests", *appkit.bounds("budget", "R"), key=K.R)
k = appkit.block_slider(c2, "proposals per draft (k)", "budget")
revealed = appkit.predict("budget", "as more requests share the target, does each request get more of its draft "
                          "verified, or less?", ["more", "less", "the same"])


def run(bar):
    """Draft each request, then profile the target, the bar naming the step: one per request, one per
    pass over the widths."""
    width, steps, drafter = R * (k + 1), R + PROFILE_REPEATS + 1, appkit.drafter_label(confident[0])

    def drafting(done, total):
        bar.progress(done / steps, f"Drafting request {done + 1} of {total} with {drafter}…")

    def profiling(done, total):
        bar.progress((R + done) / steps, f"Profiling the target at B = 1 to {width}: pass {done + 1} of {total}"
                                         + (" (a warm-up)…" if done == 0 else "…"))

    start = time.perf_counter()
    rounds, table = appkit.measure(budget.requests_and_profile, m, PRESETS[:R], confident[0], k, width,
                                   PROFILE_REPEATS, drafting, profiling)
    bar.empty()
    S[H.result] = {"rounds": rounds, "sps": table["sps"], "raw": table["raw"], "prompts": PRESETS[:R],
               "seconds": time.perf_counter() - start}


if st.button("Draft, profile and allocate", type="primary"):
    run(st.progress(0.0, "Drafting one block per request…"))
if H.result not in S:
    appkit.next_lesson(__file__)   # the page stops here until the first allocation
    appkit.stop()
res = S[H.result]
rounds = res["rounds"]
conf = [r.drafter_info["confidence"] for r in rounds]

st.subheader("Each request's draft and its survival curve")
for i, (p, r) in enumerate(zip(res["prompts"], rounds), 1):
    st.markdown(f"**Request {i}** · `{p}` · the target then accepted **{r.accepted}** of {len(r.proposed)}")
    appkit.html(stages.survival_html(r.drafter_info, r.proposed_tokens))

st.subheader("The SPS table, profiled on the running target")
st.plotly_chart(sps_figure(res["sps"], res["raw"], PROFILE_REPEATS), key=H.sps)
st.caption(f"One forward over B tokens of one sequence, the fastest of {PROFILE_REPEATS} calls (this engine does not "
           "batch requests, so this stands in for a batched verification of B tokens). The faint points are the calls "
           "themselves, with this machine's noise; a wider check cannot really be cheaper, so Algorithm 1 prices with "
           "the straight cost line closest to them, whose speed never rises as B grows. "
           f"Drafting and profiling took {res['seconds']:.0f} s on this machine.")
st.markdown(f"**A profile belongs to its engine** ({appkit.CHECKS_AHEAD}): for savings to reach the hardware, the "
            "serving engine must actually reduce verification work, and cost profiles depend on the engine and the "
            "context regime. vLLM's October 2026 adaptive-verification documentation describes **shape profiling, "
            "backend restrictions, and a default synthetic 8192-token context** that may need adjustment for "
            "long-context deployments. This app's table above comes from one sequence after one prompt, on this "
            "machine.")
raw = st.toggle("A lesson about measurement: price with the raw points instead", key=H.raw,
                help="The same drafts, priced with the noisy profile: admissions can then jump up and down with load.")
sps = res["raw"] if raw else res["sps"]

st.subheader("Algorithm 1, one candidate at a time")
st.caption(f"From {appkit.CHECKS_AHEAD}: a scheduler that prices expected committed output against a table of target "
           "steps per second and stops at the first non-improving extension. This app's notation, which neither "
           "source uses: the name Algorithm 1 for that scheduler, and Θ = τ · SPS(B) for the quantity it weighs "
           "(τ: tokens the admitted candidates are expected to commit; B: tokens the target checks; SPS(B): its "
           "steps per second at that width). This app's own too: the order of admission, likeliest first, and "
           "every number here (confidences from the embedded DSpark drafter and "
           "SPS measured on this machine, now).")
alloc = algorithm1(conf, sps)
rows = [{"step": 0, "candidate": "anchors only", "a": None, "B": len(conf), "τ": float(len(conf)),
         "Θ": round(alloc["theta0"], 2), "decision": "start"}]
for n, s in enumerate(alloc["steps"], 1):
    rows.append({"step": n, "candidate": f"request {s.request + 1}, token {s.position}", "a": round(s.a, 3), "B": s.B,
                 "τ": round(s.tau, 3), "Θ": round(s.theta, 2),
                 "decision": "admit" if s.kept else "stop: Θ did not improve"})
st.table(pd.DataFrame(rows), hide_index=True)   # every step on screen: no inner scroll
st.plotly_chart(theta_steps(alloc["theta0"], alloc["steps"], "Θ after each admission"), key=H.theta,
                config=appkit.chart_config("lesson4-algorithm1"))
st.markdown("Admitted per request: " + ", ".join(f"request {i + 1}: **{n}**" for i, n in enumerate(alloc["lengths"]))
            + f" · best Θ = {num(alloc['best_theta'], 2)}.")
st.markdown(budget.head_versus_check(conf, [r.accepted for r in rounds], alloc["lengths"]))
st.markdown(f"What the trimming saves ({appkit.CHECKS_AHEAD}): a suffix left out of the check can save target "
            "computation, but the **parallel backbone pass that produced it remains a cost of the round**.")

if revealed:   # the allocation under load is the answer
    st.subheader("The same drafts under growing load")
    load = budget.by_load(conf, sps)
    st.table(pd.DataFrame([{"requests": x["requests"], "admitted per request": x["lengths"],
                            "tokens admitted": x["admitted"], "ragged slots": x["ragged"],
                            "padded slots": x["padded"], "slots wasted by padding": x["wasted"]} for x in load]),
             hide_index=True)
    st.markdown(budget.load_heading(load) + " " + budget.load_answer(load))
    st.markdown(budget.load_reason(load) + " " + budget.padding_note(load))

appkit.next_lesson(__file__)
