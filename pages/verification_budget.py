"""Lesson 4: the verification budget: confidences, a profiled SPS table, Algorithm 1 under load."""
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import appkit
from specviz.hosting.app_state import PRESETS
from specviz.lessons import budget
from specviz.lessons.admission import algorithm1
from specviz.viz import stages
from specviz.viz.admission import theta_steps
from specviz.viz.charts import base_layout, num
from specviz.viz.style import TARGET

S = st.session_state

appkit.header(
    "4 · Verification budget",
    "seed 000, “DSpark budgets the target's work separately” (DSpark §3.2.2, §5.2); seed 004, “verifying a long "
    "block full of tokens that are probably going to be rejected burns capacity”.",
    "DSpark's confidence head estimates, for each proposal, the chance that it survives if everything before it "
    "did; multiplied along the block this gives **prefix survival a**. Algorithm 1 prices expected committed "
    "tokens τ against the target's measured speed **SPS(B)** at B verification tokens, admitting candidates in "
    "order of a while **Θ = τ · SPS(B)** improves. Watch how the allocation shrinks as more requests share the target.")

m = appkit.require_models()
if "dspark" not in m.drafter_models:
    st.info("This model set has no DSpark drafter (no confidence head), so this lesson cannot run here.")
    st.stop()
c1, c2 = st.columns(2)
appkit.default("keep_l4_R", 4)
appkit.default("keep_l4_k", 4)
R = c1.slider("live requests", 1, len(PRESETS), key="keep_l4_R")
k = c2.slider("proposals per draft (k)", 1, 6, key="keep_l4_k")
st.radio("**Predict:** as more requests share the target, does each request get more of its draft verified, "
         "or less?", ["more", "less", "the same"], horizontal=True, index=None, key="l4_guess")


def run():
    with st.spinner("Drafting one block per request and profiling the target…"), appkit.engine():
        rounds = budget.draft_requests(m, PRESETS[:R], "dspark", k)
        sps = budget.sps_table(m, PRESETS[0], R * (k + 1))
    S["l4"] = {"rounds": rounds, "sps": sps, "prompts": PRESETS[:R]}


st.button("Draft, profile and allocate", on_click=run, type="primary")
if "l4" not in S:
    st.stop()
res = S["l4"]
rounds, sps = res["rounds"], res["sps"]
conf = [r.drafter_info["confidence"] for r in rounds]

st.subheader("Each request's draft and its survival curve")
for i, (p, r) in enumerate(zip(res["prompts"], rounds), 1):
    st.markdown(f"**Request {i}** · `{p}` · the target then accepted **{r.accepted}** of {len(r.proposed)}")
    appkit.html(stages.survival_html(r.drafter_info, r.proposed_tokens))

st.subheader("The SPS table, profiled on the running target")
fig = go.Figure([go.Scatter(x=list(range(1, len(sps) + 1)), y=sps, mode="lines+markers", line={"color": TARGET})])
st.plotly_chart(base_layout(fig, "target steps per second at B verification tokens", xaxis_title="B",
                            yaxis_title="steps per second", yaxis_rangemode="tozero"), key="l4_sps")
st.caption("One forward over B tokens of one sequence, the fastest of 5 (this engine does not batch requests, so this "
           "stands in for a batched verification of B tokens).")

st.subheader("Algorithm 1, one candidate at a time")
alloc = algorithm1(conf, sps)
rows = [{"step": 0, "candidate": "anchors only", "a": None, "B": len(conf), "τ": float(len(conf)),
         "Θ": round(alloc["theta0"], 2), "decision": "start"}]
for n, s in enumerate(alloc["steps"], 1):
    rows.append({"step": n, "candidate": f"request {s.request + 1}, token {s.position}", "a": round(s.a, 3), "B": s.B,
                 "τ": round(s.tau, 3), "Θ": round(s.theta, 2),
                 "decision": "admit" if s.kept else "stop: Θ did not improve"})
st.dataframe(pd.DataFrame(rows), hide_index=True)
st.plotly_chart(theta_steps(alloc["theta0"], alloc["steps"], "Θ after each admission"), key="l4_theta")
st.markdown("Admitted per request: " + ", ".join(f"request {i + 1}: **{n}**" for i, n in enumerate(alloc["lengths"]))
            + f" · best Θ = {num(alloc['best_theta'], 2)}.")

st.subheader("The same drafts under growing load")
load = budget.by_load(conf, sps)
st.dataframe(pd.DataFrame([{"requests": x["requests"], "admitted per request": x["lengths"],
                            "tokens admitted": x["admitted"], "ragged slots": x["ragged"],
                            "padded slots": x["padded"], "slots wasted by padding": x["wasted"]} for x in load]),
             hide_index=True)
if S.get("l4_guess"):
    st.markdown("**Answer: usually less.** More anchors already fill the target's cheap slots, so a doubtful "
                "proposal buys less Θ. Padding every request back to the widest admitted draft spends the slots "
                "the scheduler saved: the last columns count them.")
