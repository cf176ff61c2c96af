"""Lesson 5: biased admission. Pure arithmetic and simulation: no model is needed."""
import streamlit as st

import appkit
from specviz.lessons import admission
from specviz.viz import admission as figs
from specviz.viz.charts import num

K = appkit.keys("admission")   # this page's session keys
appkit.defaults("admission")   # each setting's first value, from its course record
H = appkit.keys("admission", kept=False)   # what it computed, and its elements' keys
A = admission.APPENDIX_A          # the source's numbers: p, q and 0.85
W = admission.WORKED_EXAMPLE      # this app's worked example: a₁, SPS, c₂

appkit.header(
    __file__,
    f"{appkit.CHECKS_AHEAD}, “DSpark budgets the target's work separately”, on the DSpark paper's Appendix A.",
    "A scheduler decides which drafted tokens enter verification. If that decision **looks at the token it has "
    "just drafted** (or at what follows from it), it can prefer some token values, and the output stops following "
    "the target's distribution, even though the verifier itself is exact. Look at how often the first output "
    "token is **A**, against the target's 0.7.")

st.subheader("The stopping scheduler on a worked example")
st.caption(f"Which numbers are whose: the source gives the target p = {A['p']}, the proposal q = {A['q']} and the "
           "resulting P(A) (shown below, after your prediction); the names Algorithm 1 and Θ = τ · SPS(B) are "
           "this app's notation for the scheduler the source describes (neither source uses them). Every other "
           "number in this section (a₁, the SPS values, c₂, the Θ values) is **this "
           "app's worked example**, chosen so that a search without the stop admits A and not B.")
st.markdown(
    f"One request (R = 1), two drafted tokens. The confidence head says the first survives with "
    f"a₁ = {W['a1']}. Target speed: SPS = {W['sps'][0]}, {W['sps'][1]}, {W['sps'][2]} steps per second at "
    f"B = 1, 2, 3 verification tokens. The value of an allocation is **Θ = τ · SPS(B)**, where τ counts "
    f"expected committed tokens.")
cols = st.columns(2)
cases = [("x₁ = A, so c₂ = 0.9", W["c2_after_a"]), ("x₁ = B, so c₂ = 0", W["c2_after_b"])]
for col, (title, c2) in zip(cols, cases):
    r = admission.algorithm1([[W["a1"], c2]], W["sps"], stop_at_first_non_improvement=False)
    col.plotly_chart(figs.theta_steps(r["theta0"], r["steps"], f"search without the stop: {title}"),
                     key=H[f"theta_{c2}"])
    col.markdown(f"Θ₀ = {num(r['theta0'])}, Θ₁ = {num(r['steps'][0].theta)}, **Θ₂ = {num(r['steps'][1].theta)}** "
                 f"→ admits ℓ = **{r['lengths'][0]}** token{'s' if r['lengths'][0] != 1 else ''}.")
stop = admission.algorithm1([[W["a1"], W["c2_after_a"]]], W["sps"])
st.markdown(f"With the **stop at the first non-improvement**, the scan ends at Θ₁ = {num(stop['steps'][0].theta)} "
            f"< Θ₀ = {num(stop['theta0'])} whatever x₁ is: ℓ = {stop['lengths'][0]}. c₂ is never consulted, and c₂ "
            f"is what depends on the drafted token.")

st.subheader("What that does to the output")
st.markdown("The target wants **A** with probability p(A); the drafter proposes A with probability q(A). "
            "An admitted token is verified with the exact speculative-sampling rule; if nothing is admitted, "
            "the target draws afresh. The sliders start at the source's p(A) = 0.7 and q(A) = 0.5.")
c1, c2 = st.columns(2)
pa = c1.slider("target p(A)", *appkit.bounds("admission", "p"), step=0.05, key=K.p)
qa = c2.slider("drafter q(A)", *appkit.bounds("admission", "q"), step=0.05, key=K.q)
p, q = (pa, round(1 - pa, 10)), (qa, round(1 - qa, 10))
revealed = appkit.predict("admission", "the retrospective search admits x₁ only when it is A (its continuation looks "
                          "confident). How often will the first output token be A?",
                          ["less than p(A)", "exactly p(A)", "more than p(A)"])
exact = {pol: admission.exact_p_a(pol, p, q) for pol in admission.POLICIES}
labels = {"retrospective": "retrospective (search without the stop)",
          "non_anticipating": "stopping scheduler (admits nothing here)",
          "two_steps_earlier": "capacity from confidences two steps earlier"}
if revealed:   # every P(A) below is the answer
    t = admission.retrospective_terms(p, q)
    st.markdown(f"**Answer:** P(A) = q(A)·min(1, p(A)/q(A)) + q(B)·p(A) = {num(t['q_a'])}·{num(t['kept'])} + "
                f"{num(t['q_b'])}·{num(t['p_a'])} = **{num(t['p_of_a'])}**, against the target's {num(pa)}.")
    for pol in admission.POLICIES:   # one under another: three abreast cut "P(A) = …" at a laptop's 1024 px
        off = admission.bias(exact[pol], pa)
        st.metric(labels[pol], f"P(A) = {num(exact[pol])}", border=True,
                  delta="equals the target" if off is None else f"{off:+.3g} vs target",
                  delta_color="off" if off is None else "inverse", delta_arrow="off" if off is None else "auto")

    st.subheader("Simulated, round by round")
    n, seed = appkit.rounds_and_seed("admission")
    runs = {pol: admission.running_frequency(admission.simulate(pol, n, p, q, seed=seed)) for pol in admission.POLICIES}
    st.plotly_chart(figs.running(runs, pa, every=max(1, n // 400)), key=H.running,
                    config=appkit.chart_config("lesson5-running-frequency"))
    st.markdown(" · ".join(f"{labels[pol]}: **{runs[pol][-1]:.3f}**" for pol in admission.POLICIES)
                + f" after {n:,} rounds (exact: {exact['retrospective']:.3g} / {pa:g} / {pa:g}).")
    st.markdown("**Why the stopping scheduler is unbiased here:** in this worked example it admits ℓ = 0 whatever x₁ "
                "is, so the target always draws afresh: its P(A) = p(A) comes from never speculating. "
                f"{appkit.CHECKS_AHEAD} gives the DSpark authors' argument for non-anticipating admission with the "
                "capacity decided from predictions **two steps earlier**: “Their argument for preserving the target "
                "distribution rests on this historical capacity decision isolating admission from the current "
                "token's realization.” Here that is the policy "
                "that speculates without bias: it admits x₁ whenever the older draw makes room, and P(A) stays p(A).")
    st.info("Why the two-steps-earlier capacity is safe: the confidences it reads belong to tokens drafted before "
            "the current one, so how much is admitted cannot depend on the current token's value. The current "
            "scores may still *rank* candidates; only the capacity has to come from the past.")

appkit.next_lesson(__file__)
