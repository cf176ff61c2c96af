"""Lesson 8: reading a speedup: our live measurement and the papers' reported figures, item by item."""
import pandas as pd
import streamlit as st

import appkit
from specviz.generator.settings import Settings
from specviz.lessons.presets import PRESETS
from specviz.lessons import speedup, cost, workloads

S = st.session_state
H = appkit.keys("speedup", kept=False)   # what it computed, and its elements' keys
COST = appkit.keys("cost")   # lesson 7's settings: this page measures what lesson 7 was set to
COST_HELD = appkit.keys("cost", kept=False)   # and shows lesson 7's measurement, or takes one

appkit.header(
    __file__,
    f"{appkit.CHECKS_AHEAD}, “Read a speedup together with its denominator” and its closing checklist.",
    "A speedup is a ratio: it means little without its **denominator** (the baseline) and the conditions it was "
    f"measured under. Below, the {len(speedup.ITEMS) - 1} questions of that closing checklist, and a **result** "
    "row this app adds, are answered for the measurement this app just made and for figures the papers report. "
    "Look for the cells that say *not stated*: a claim can only "
    "transfer as far as its conditions are known.")

m = appkit.require_models()


def run_measurement():
    drafter = S.get(COST.drafter, list(m.drafter_models)[0])
    settings = Settings.greedy(drafter, appkit.new_tokens(32), k=S.get(COST.k, 4))
    prompt = S.get(COST.prompt, PRESETS[0])
    with st.spinner("Measuring plain and speculative decoding…"):
        S[COST_HELD.measurement] = {"prompt": prompt, "settings": settings, **appkit.measure(cost.measure, m, prompt, settings)}


# a follower's screen measures only when the student presses the button (the presenter's screen measures its own)
if COST_HELD.measurement not in S and not appkit.following():
    run_measurement()
res = S.get(COST_HELD.measurement)
measured = f"**{res['speedup']:.2f}×**" if res else "a speedup (on the presenter's screen)"
revealed = appkit.predict("speedup", f"this app measured {measured} on this machine. Would the same "
                          "drafter give the same speedup on a GPU serving 32 users at once?",
                          ["yes, a speedup is a property of the drafter", "no, it would be lower",
                           "can't tell without measuring"], horizontal=False)
if revealed:   # the answer, and the reported rows: load reversing a gain, and the base drafter mattering too
    st.markdown("**Answer: can't tell without measuring.** Hardware, engine and load all move the break-even point: "
                "on a busy server, speculative positions compete with other requests' productive positions; with "
                "enough available resources, checking several positions can be only modestly slower than a "
                f"one-token step ({appkit.CHECKS_AHEAD}). On DLoop's Table A2 it says: “Load can reverse an "
                "incremental gain even within the same study.” Added to DFlash, DLoop's gain is reversed at "
                "concurrency 32. The same table shows the base drafter mattering as well: added to DSpark at "
                "concurrency 32, DLoop gains about 4.5% against DSpark alone. “The operation's value changes with "
                "its base drafter as well as load.” Each row below names its own denominator.")

    ours = speedup.ours(m, res, appkit.drafter_label) if res else {i: "measure on this screen" for i in speedup.ITEMS}
    # one reported row at a time beside ours: five columns of sentences would not fit a projector's width
    for tab, r in zip(st.tabs([r["source"] for r in speedup.REPORTED]), speedup.REPORTED):
        tab.table(pd.DataFrame({"this app, measured now": [ours[i] for i in speedup.ITEMS],
                                r["source"] + " · reported": [r[i] for i in speedup.ITEMS]}, index=speedup.ITEMS))
    st.caption(f"Reported rows quote the papers' own figures as {appkit.CHECKS_AHEAD} gives them; nothing here "
               "re-runs them. DLoop Table 2: looping raises acceptance length 4.86 → 6.06 yet lowers speedup "
               "3.17× → 2.90×; loop-aware training gives 7.50 and 3.68×.")
st.button("Measure again", on_click=run_measurement)

st.subheader("Where did our speedup come from?")
if res is None:
    appkit.not_measured_here()
    appkit.next_lesson(__file__)
    appkit.stop()
p, s = res["plain"]["costs"], res["speculative"]["costs"]
c = st.columns(4)
said = cost.forwards_help(p["rounds"], s["rounds"], s["tokens"])   # a drafter that proposes nothing saves no round
c[0].metric("target forwards", f"{p['rounds']} → {s['rounds']}", help=said["rounds"])
c[1].metric("tokens per target forward", f"{s['acceptance_length']:.2f}", help=said["per_forward"])
c[2].metric("drafting share of decode time", f"{s['draft_share']:.0%}", help="cost of proposals")
c[3].metric("mean verify forward", f"{s['mean_verify_ms']:.1f} ms",
            help=f"against {p['mean_verify_ms']:.1f} ms for a one-token step")
st.markdown(f"Ask of any claim ({appkit.CHECKS_AHEAD}): does the gain come from **cheaper proposals**, a **longer "
            "surviving prefix**, **less verification**, or **fewer target rounds**? Each answer transfers to a "
            "different workload.")
st.markdown(f"{appkit.DRAFT_VERIFY} puts it as “exactly three ways to go faster: draft faster, draft better (accept "
            "more per cycle), or verify smarter”, since per-token latency is “roughly the drafting time plus the "
            "verification time, divided by that acceptance length”. In this app's reading, drafting faster is "
            "cheaper proposals; drafting better is a longer surviving prefix, and so fewer target rounds; verifying "
            "smarter is less verification. Its example of the trade between the first two is autoregressive drafters "
            "like EAGLE: “Quality is high and they accept a lot per cycle. But the drafting itself is sequential, so "
            "its cost grows with the block size.”")

st.subheader("Same models, another workload")
st.markdown("A speedup belongs to its workload too. The only benchmark the sources name is MATH-500 (DLoop's "
            f"Table A2), and {appkit.CHECKS_AHEAD} asks what “might transfer to another "
            "workload—and what must be measured again”. Here the same target and "
            f"the same drafter, **{appkit.drafter_label(res['settings'].drafter)}** at k = {res['settings'].k}, "
            "run on held-out prose and on held-out Python code, which no training stage read.")


def run_workloads():
    with st.spinner("Measuring plain and speculative decoding on prose and on code…"):
        S[H.workloads] = {"settings": res["settings"], **appkit.measure(workloads.compare, m, res["settings"])}


st.button("Compare prose and code", on_click=run_workloads)
both = S.get(H.workloads)
if both:
    shown = both["settings"]
    st.table(pd.DataFrame({w: {"speedup": f"{both[w]['speedup']['median']:.2f}× ({both[w]['speedup']['low']:.2f}–"
                                          f"{both[w]['speedup']['high']:.2f}×)",
                               # the medians workloads.explain cites below, so table and sentence agree
                               "tokens per target forward": f"{both[w]['spreads']['per_forward']['median']:.2f}",
                               "drafting a round": f"{both[w]['spreads']['draft_ms']['median']:.1f} ms",
                               "verifying a round": f"{both[w]['spreads']['verify_ms']['median']:.1f} ms",
                               "plain decoding": f"{both[w]['spreads']['plain_ms']['median']:.1f} ms a token",
                               "prompts": " · ".join(appkit.prompt_label(p)[:40] + "…"
                                                     for p in workloads.WORKLOADS[w][:workloads.LESSON_PROMPTS])}
                           for w in workloads.WORKLOADS}))
    st.markdown(workloads.explain(both))
    st.caption(f"{appkit.drafter_label(shown.drafter)}, k = {shown.k}, greedy, {shown.max_new_tokens} new "
               f"tokens; speedups are medians with their range over {both['code']['speedup']['runs']} paired runs "
               f"({workloads.LESSON_PROMPTS} prompts a workload, {both['code']['speedup']['runs'] // workloads.LESSON_PROMPTS} "
               "runs each). `python -m specviz bench` measures every drafter on every "
               "held-out prompt of both workloads.")

appkit.next_lesson(__file__)
