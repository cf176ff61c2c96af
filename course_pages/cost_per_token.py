"""Lesson 7: cost per committed token, from the source's worked example to a live measurement."""
import pandas as pd
import streamlit as st

import appkit
from specviz.generator import cpu_linear
from specviz.generator.settings import Settings
from specviz.lessons.presets import PRESETS
from specviz.lessons import cost, pricing
from specviz.viz import costs as figs, regimes as regime_figs

S = st.session_state
K = appkit.keys("cost")   # this page's session keys
appkit.defaults("cost")   # each setting's first value, from its course record
H = appkit.keys("cost", kept=False)   # what it computed, and its elements' keys
WIDTHS = [1, 2, 3, 4, 6, 8, 12, 16]
REPEATS = 5          # runs per side of the live measurement

appkit.header(
    __file__,
    f"{appkit.CHECKS_AHEAD}, “Measure elapsed time per committed token” and “Why can doing extra calculations save "
    f"time?”; {appkit.DRAFT_VERIFY}, “per-token latency is roughly the drafting time plus the verification time, divided by that "
    "acceptance length”.",
    "A speculative round costs **more** than one plain step: it drafts, and the target checks several positions. "
    "The one number to look at: **total decode time ÷ committed tokens**, counting accepted proposals plus the "
    "target's correction or bonus, and nothing that was thrown away, against plain decoding's time per token.")

# --- the source's worked example, editable ----------------------------------------------------
st.subheader("A worked example")
st.caption(f"The numbers are the example in {appkit.CHECKS_AHEAD}; change them to try others.")
EXAMPLE = cost.Calculator()     # the source's example: the question's numbers and the calculator's first ones
revealed = appkit.predict("cost", f"plain decoding costs {EXAMPLE.baseline_ms:g} ms per token. A speculative round "
                          f"takes {EXAMPLE.round_ms:g} ms. If it commits only **one** token, is speculation faster or "
                          "slower?", ["faster", "slower", "the same"])
if revealed:   # the one-token answer first: the calculator below starts at several tokens, where speculation wins
    st.markdown(cost.one_token_answer(EXAMPLE))
c1, c2, c3 = st.columns(3)
base = c1.number_input("plain decoding, ms per token", *appkit.bounds("cost", "base"), step=0.5, key=K.base)
rnd = c2.number_input("one speculative round, ms", *appkit.bounds("cost", "round"), step=0.5, key=K.round)
tok = c3.number_input("tokens the round commits", *appkit.bounds("cost", "tokens"), step=1, key=K.tokens)
calc = cost.Calculator(base, rnd, tok)
if revealed:   # the calculator's verdict and its break-even
    m1, m2, m3 = st.columns(3)
    m1.metric("ms per token", f"{calc.ms_per_token:.2f} ms", help=f"{rnd:g} ms ÷ {tok} tokens")
    said, colour = cost.calculator_delta(calc)
    m2.metric("speedup", f"{calc.speedup:.2f}×", delta=said, delta_color=colour,
              delta_arrow="off" if colour == "off" else "auto")
    m3.metric("break-even, tokens a round", f"{calc.break_even_tokens:.2f}", help="round ms ÷ plain ms per token")

# --- a live measurement --------------------------------------------------------------------------
st.subheader("Measured on this machine, now")
m = appkit.require_models()
appkit.run_row("cost", PRESETS, list(m.drafter_models), "Drafter", "k (proposals per round)")


def run_measurement():
    settings = Settings.greedy(S[K.drafter], appkit.new_tokens(32), k=S[K.k])
    bar = st.progress(0.0, "Measuring plain and speculative decoding…")
    S[H.measurement] = {"prompt": S[K.prompt], "settings": settings,
                        **appkit.measure(cost.measure, m, S[K.prompt], settings, REPEATS,
                                         progress=lambda done, total, side: bar.progress(
                                             done / total, f"Run {done + 1} of {total}: {side} decoding…"))}
    bar.empty()


def show_measurement(res: dict):
    """The last measurement taken apart: per-token costs, the speedup and its spread, each round's cost."""
    p, s = res["plain"]["costs"], res["speculative"]["costs"]
    st.caption(f"Greedy, {res['settings'].max_new_tokens} new tokens, drafter "
               f"{appkit.drafter_label(res['settings'].drafter)}, "
               f"k = {res['settings'].k}, prompt “{res['prompt']}”. Prefill is outside the timed boundary. "
               f"Each side ran {len(res['plain']['runs_ms'])} times after an uncounted warm-up, alternating, so a busy "
               f"moment of a shared machine falls on both; the run pair of median speedup is shown and taken apart below.")
    speed = res["speedup_spread"]
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("plain decoding, per token", f"{p['ms_per_token']:.2f} ms", help=res["plain"]["ms_per_token"].label(" ms"))
    m2.metric("speculative, per token", f"{s['ms_per_token']:.2f} ms", help=res["speculative"]["ms_per_token"].label(" ms"))
    m3.metric("measured speedup", f"{speed.median:.2f}×",
              help=f"{p['ms_per_token']:.2f} ms ÷ {s['ms_per_token']:.2f} ms: the run pair of median speedup, "
                   f"whose rounds every figure below takes apart ({speed.label(unit='×')})")
    m4.metric("tokens per round", f"{s['acceptance_length']:.2f}")
    if revealed:   # faster or slower is the worked example's question: the measured verdict waits for its answer
        st.markdown(cost.speedup_sentence(speed))
    else:
        st.caption("Whether these runs were faster or slower than plain decoding is said here once the question "
                   "above is answered.")
    st.markdown(
        f"Speculative: **{s['decode_ms']:.1f} ms ÷ {s['tokens']} committed tokens = {s['ms_per_token']:.2f} ms/token** "
        f"over {s['rounds']} rounds (draft {s['draft_ms']:.1f} ms, verify {s['verify_ms']:.1f} ms, overhead "
        f"{s['overhead_ms']:.1f} ms). Plain: {p['decode_ms']:.1f} ms ÷ {p['tokens']} tokens.")
    st.markdown(
        f"Verification alone costs {s['verify_ms']:.1f} ms ÷ {s['tokens']} tokens = {s['verify_ms_per_token']:.2f} ms/token. "
        + (cost.if_drafting_were_free(p["ms_per_token"], s["verify_ms_per_token"]) if revealed else ""))
    st.plotly_chart(figs.round_costs(res["speculative"]["trace"].rounds, p["ms_per_token"]), key=H.rounds)
    if revealed:   # the break-even line answers the worked example's question too
        st.markdown("A round must commit more tokens than **round time ÷ plain ms per token** to pay for itself. "
                    "The green dot is where this measurement landed.")
        st.plotly_chart(figs.break_even(s["mean_round_ms"], p["ms_per_token"], res["settings"].k + 1,
                                        s["acceptance_length"]), key=H.break_even,
                        config=appkit.chart_config("lesson7-break-even"))


def gpu_profile():
    """The large-target profile, each number editable beside the document and phrase it comes from."""
    with st.expander(f"The profile “{pricing.LARGE_GPU.name}”: one source's example and this app's assumptions, "
                     "editable"):
        st.markdown(pricing.LARGE_GPU_ORIGIN)
        c = st.columns(2)
        for i, (name, label) in enumerate(pricing.FIELDS.items()):
            appkit.default(appkit.GPU_EDIT + name, getattr(pricing.LARGE_GPU, name))
            c[i % 2].number_input(label, 0.0 if name != "step_ms" else 0.1, 1000.0, step=0.5, key=appkit.GPU_EDIT + name)
        edited = appkit.gpu_profile()
        for name, label in pricing.FIELDS.items():
            st.caption(f"**{label} = {getattr(edited, name):g}**: {edited.sources[name]}.")
    return edited


def show_regimes(res: dict):
    """The measured rounds priced on this machine and on a hypothetical large target on a GPU, side by side."""
    st.subheader("The same rounds on a hypothetical large target")
    st.markdown("The papers measure on a **large target on a GPU**. Below, the rounds just measured, with the same "
                "committed tokens, are priced twice: with this machine's own costs, read off the runs, and with the "
                f"costs of a **hypothetical** large target: the step and round of {appkit.CHECKS_AHEAD}'s worked "
                "example, completed with this app's assumptions (the profile below says which number is which). "
                "Speedup = tokens a round ÷ **a round's cost in one-token steps**: the tokens are the same in both "
                "columns, so that is the one quantity that differs.")
    c = cost.regimes(res, gpu_profile())
    st.table(pd.DataFrame(pricing.comparison_rows(c)), hide_index=True)   # wraps to fit a projector's column
    st.caption(f"Both columns are priced from a round's parts. “{c.here_median.label}” uses the costs measured in "
               f"these runs, so it gives back their measured time (speedup over the runs: "
               f"{c.here_speedup.label(unit='×')}); “{c.there.label}” is a model, not a measurement: "
               + pricing.LARGE_GPU_ORIGIN)
    st.plotly_chart(regime_figs.round_steps(c), key=H.regimes_chart,
                    config=appkit.chart_config("lesson7-priced-two-regimes"))
    st.markdown(f"**{pricing.why_question(c)}** " + pricing.why_smaller(c))


st.button("Measure again", on_click=run_measurement, type="primary")
# a follower's screen measures only when the student presses the button (the presenter's screen measures its own)
if H.measurement not in S and not appkit.following():
    run_measurement()
if H.measurement in S:
    show_measurement(S[H.measurement])
    show_regimes(S[H.measurement])
else:
    appkit.not_measured_here()

# --- verification cost against width ---------------------------------------------------------------
st.subheader("How much more does checking several positions cost?")
st.markdown("One target forward over *w* new tokens, on top of the prompt, timed here: each width's fastest of 5 "
            "calls (the faint points; a forward only gets slower when something else runs), and the straight cost "
            "line closest to them, which smooths the remaining noise.")
st.markdown(f"Why can checking several positions cost little more than one? {appkit.CHECKS_AHEAD}: with small "
            "batches and short blocks, a **large** model *can* spend much of a step moving weights and cached "
            "context through memory, and several candidate positions can share those reads while using arithmetic "
            "capacity that was otherwise underused. Chen and colleagues also describe **small distributed "
            "communication operations that remain latency-bound** as the short block grows. With enough available "
            "resources, these conditions can make checking several positions only modestly slower than a one-token "
            "step. The embedded models are far smaller than the models those conditions describe, and they run on "
            "one device, with no communication between devices to measure: the timing below says what a wider "
            "check costs them on this machine.")
st.markdown(f"What else moves the break-even point ({appkit.CHECKS_AHEAD}): when many requests already occupy the "
            "machine, speculative positions compete with productive positions from other requests. “Longer "
            "contexts, model depth, kernel shapes, padding, and synchronization can move the break-even point "
            "too.” Lesson 4 counts padding, and the weight layouts at the foot of this page are kernel shapes on "
            "this machine. The measurement here is one request at a time, on one target, with short contexts: "
            "load, context length, depth and synchronization are not varied.")


def run_widths():
    with st.spinner(f"Timing the target at {len(WIDTHS)} widths, 6 calls each…"):
        S[H.widths] = appkit.measure(cost.cost_by_width_after, m, S[K.prompt], WIDTHS)


st.button("Time the target at widths " + ", ".join(map(str, WIDTHS)), on_click=run_widths)
if H.widths in S:
    rows = S[H.widths]
    st.plotly_chart(figs.width_cost(rows), key=H.width)
    st.markdown(cost.width_sentence(rows))
    if H.measurement in S:   # the same quantity in the rounds measured above, which the round table prices
        res = S[H.measurement]
        st.markdown(cost.probe_versus_rounds(rows, cost.regimes(res, pricing.LARGE_GPU).here_median.steps("check_ms"),
                                             res["settings"].k + 1))

with st.expander("About the code: how this app multiplies a few rows fast on this CPU"):
    layouts = cpu_linear.report(m.target, rows=(1, S[K.k] + 1))
    if layouts:
        st.markdown(
            "Each layer of the model multiplies the rows it is given (one per token) by a matrix of weights W. "
            "The library (torch) can get the same numbers four ways: with W **as stored**, against a **Wᵀ copy** "
            "(W transposed: rows and columns swapped, so it is read in another order), as **W·xᵀ** (the same "
            "product taken the other way round), or with oneDNN, Intel's library of fast maths routines, against a "
            "copy it **packed** for a few rows. For the few rows of a one-token step or a verification their speeds "
            "can differ, and which wins depends on the CPU, the layer's shape and the number of rows. So this "
            "app times all four for every shape when the models load, and each layer uses the fastest for the rows "
            "it is given, the plain step as much as the check (the code: `specviz/generator/cpu_linear.py`). "
            f"This is {appkit.CHECKS_AHEAD}'s “kernel shapes … can move the break-even point”, measured on this "
            f"machine for the target's layers, at 1 row and at k + 1 = {S[K.k] + 1}:")
        st.table(layouts, hide_index=True)
        st.markdown(cost.layout_gap(layouts))
    else:
        st.markdown("On a GPU the models are left as they are: cuBLAS has no such gap between layouts.")

appkit.next_lesson(__file__)
