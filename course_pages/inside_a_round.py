"""Lesson 9: inside a round: what the drafter sees and what the verifier needs, on the real models."""
import pandas as pd
import streamlit as st

import appkit
from specviz.generator.sampling import SamplingSettings
from specviz.lessons.presets import PRESETS
from specviz.lessons import inside
from specviz.lessons.markup import md_token
from specviz.viz import inside as figs
from specviz.viz.charts import num
from specviz.viz.stages import stage_rows

S = st.session_state
K = appkit.keys("inside")   # this page's session keys
appkit.defaults("inside")   # each setting's first value, from its course record
H = appkit.keys("inside", kept=False)   # what it computed, and its elements' keys
CHECKS = "*How speculative decoding checks ahead*"
HEAD = {i: title for i, (title, _) in enumerate(inside.SECTIONS, 1)}

appkit.header(
    __file__,
    f"{CHECKS}: “DFlash reuses the target's context work”, “Random sampling preserves the target's "
    "probabilities”, “DSpark budgets the target's work separately”, “DLoop buys more drafting before paying for a "
    f"target check”, “Measure elapsed time per committed token”; {appkit.DRAFT_VERIFY}.",
    "Six things the sources teach that the other lessons only touch: how a block drafter reads the target, which "
    "**q** the verifier must be handed, what “lossless” does and does not promise, scheduling "
    "by confidence, measuring a serving system, and DLoop's details. Each number below says whose it is: the "
    "source's, this app's measurement, or this app's worked example.")

m = appkit.require_models()
blocks = [d for d in ("dspark", "dflash") if d in m.drafter_models]
# the live parts below run the models on every visit; a follower's screen runs them only when asked
live = appkit.run_here("inside", "this lesson's live parts")
LATER = "A live part of this lesson: it runs when you press the button at the top."

# --- 1 ------------------------------------------------------------------------------------------
st.subheader(HEAD[1])
st.markdown(f"From {CHECKS}, on DFlash: the target processes the prompt; hidden representations from **selected "
            "target layers** are concatenated and projected into a compact context feature; each draft layer turns "
            "those features into attention keys and values and caches them. The drafter receives a **clean anchor** "
            "token followed by **mask slots** and predicts the masked positions together in **one pass**, with "
            "bidirectional attention inside the block. So integrating DFlash needs access to the target's "
            "internals (its hidden states), not only its output tokens, and draft-side caches.")
st.markdown(f"**How DFlash is trained, and what it saves** ({CHECKS}): its training aligns these predictions with a "
            "**frozen target** and prevents information from **leaking between training blocks**. Two savings "
            "combine: the drafter reuses the target's context representations, and its **backbone** (the network "
            "that produces its representations) is **not rerun for each proposed token**: one pass drafts the "
            "block.")
st.markdown(f"**Block-size conventions** ({CHECKS}): DFlash counts the anchor inside its block size and predicts "
            "from the mask slots, giving block size − 1 new predictions; DSpark's alignment gives one proposal per "
            "input position. **The embedded DFlash reads its proposals DSpark's way**, like the embedded DSpark "
            "(this app's choice): the anchor's own slot predicts the first proposal, so k slots give k proposals, "
            "and each slot was trained to predict the token one position after it. DFlash's own alignment drops the "
            "anchor slot's output and reads each proposal from the mask slot at that token's position: k + 1 slots "
            "for the same k proposals. So the embedded DFlash has DFlash's mechanics (target context features, "
            "anchor plus mask slots, one bidirectional pass) but not its read-out; a published DFlash drafter on a "
            "GPU host is read DFlash's way.")
if not blocks:
    st.info("This model set has no block drafter, so this section cannot run here.")
elif not live:
    appkit.run_row("inside", PRESETS, blocks, "Block drafter", "Proposals k")
    st.caption(LATER)
else:
    k = appkit.run_row("inside", PRESETS, blocks, "Block drafter", "Proposals k")
    view = appkit.remember(H.view, (m.name, str(m.device), S[K.prompt], S[K.drafter], k),
                           lambda: inside.drafter_view(m, S[K.prompt], S[K.drafter], k))
    layers = ", ".join(str(i) for i in view["target_layers"])
    st.markdown(
        f"**Live, on the embedded models:** the drafter reads the outputs of target layers **{layers}** (counting "
        f"from 0, of {view['target_depth']}) at the **{view['context_positions']}** positions the target has "
        f"processed (0–{view['context_positions'] - 1}): {len(view['target_layers'])} × {view['target_width']} = "
        f"{view['feature_in']} numbers per position, projected to its width of {view['drafter_width']}. Its block "
        f"input is {' '.join(md_token(t) for t in view['block_inputs'])} at positions "
        f"{view['block_positions'][0]}–{view['block_positions'][-1]}: the anchor {md_token(view['anchor'])} is the newest "
        f"committed token, which the target has not processed yet, so it enters as a token, not as features. "
        f"One pass proposed {' '.join(md_token(t) for t in view['proposals'])}; the target kept "
        f"**{view['accepted']}**.")
    st.plotly_chart(figs.attention_map(view), key=H.attention,
                    config=appkit.chart_config("lesson9-attention"))
    st.caption("This app's measurement: the first draft layer's attention weights for this round, averaged over "
               "heads, over the last context positions and the block itself (no causal mask inside the block, so "
               "every slot may attend to every slot).")
    st.markdown(inside.block_attention_note(view["block_share"]))
    way = ("DFlash's way: the anchor slot predicts nothing, and the mask slots give" if view["read_from_slot"]
           else "DSpark's way: every slot, the anchor's included, gives one of")
    st.markdown(f"**This round:** {len(view['block_inputs'])} inputs, read {way} the **k = {view['k']}** "
                f"proposals. In DFlash's convention that is **block size {view['dflash_block_size']}** (and back: "
                f"{view['dflash_block_size']} − 1 = {view['dflash_back']}). Compare proposal lengths only after "
                "translating.")

# --- 2 ------------------------------------------------------------------------------------------
st.subheader(HEAD[2])
st.markdown("Below, DSpark's second proposal is drawn from its true q (its Markov head's distribution, after "
            "temperature and top-k); the verifier is handed either that q or a wrong one, and the emitted "
            "distribution is computed **exactly** (no sampling) and compared with the target's p.")
revealed = appkit.predict("inside", "the verifier is handed the backbone's q without the Markov head instead of the q "
                          "the proposal was really drawn from. Does the output still follow p exactly?",
                          ["yes, the ratio rule corrects any q", "no, it moves away from p"])
SOURCE_RULE = (f"{CHECKS}: the ratio-and-residual verifier needs “the actual proposal probabilities”, including the "
               "temperature and other sampling transformations; a parallel generator or refinement procedure must "
               "supply the normalised probabilities of the sampling process it really used.")
if "dspark" not in m.drafter_models:
    if revealed:
        st.markdown(inside.wrong_q_answer(None) + " " + SOURCE_RULE)
    st.info("This model set has no DSpark drafter, so this section cannot run here.")
elif revealed and not live:
    st.markdown(inside.wrong_q_answer(None) + " " + SOURCE_RULE)
    st.caption(LATER)
elif revealed:   # the distances are the answer
    c1, c2 = st.columns(2)
    temp = c1.slider("Temperature", *appkit.bounds("inside", "temp"), step=0.1, key=K.temp)
    top_k = c2.slider("Top-k (0 = off)", *appkit.bounds("inside", "topk"), key=K.topk)
    prompt = S.get(K.prompt, PRESETS[0])
    wq = appkit.remember(H.wrong_q, (m.name, str(m.device), prompt, temp, top_k),
                         lambda: inside.wrong_q(m, prompt, SamplingSettings(temperature=temp, top_k=top_k)))
    names = {"true": "true q (Markov head, after temperature and top-k)",
             "raw": "q before temperature and top-k",
             "marginal": "backbone marginal (no Markov head), transformed"}
    cols = st.columns(3)
    for col, (name, case) in zip(cols, wq["cases"].items()):
        col.metric(names[name], f"{case['distance']:.4f}", border=True,
                   help="total-variation distance of the emitted distribution from p (0 = lossless)")
    st.markdown(inside.wrong_q_answer(wq["cases"]["marginal"]["distance"]) + " " + SOURCE_RULE)
    st.markdown(inside.wrong_q_note(wq["first"], wq["cases"]))
    st.plotly_chart(figs.emitted_bars(wq, names), key=H.emitted)
    st.caption("This app's computation on the embedded models: p and every q are the real distributions at this "
               "candidate history; the emitted distribution is q·min(1, p/q′) plus the rejected mass times "
               "normalize(max(0, p − q′)), with q′ the q the verifier was handed.")

# --- 3 ------------------------------------------------------------------------------------------
st.subheader(HEAD[3])
st.markdown(f"{CHECKS} separates three claims: **equal sampling distributions** (lesson 2), **identical "
            "deterministic decisions**, and **similar task scores**. The guarantees hold “within implementation "
            "numerics”: different computation graphs can change floating-point results, and a single changed "
            "greedy token can send later text along another path. Below, the same target weights run in float32 "
            "and in bfloat16 on the same prompts, greedy, and speculative decoding (DSpark, float32) runs beside "
            "them.")


def search():
    with st.spinner("Greedy decoding every preset in float32, in bfloat16 and speculatively…"):
        S[H.precision] = appkit.measure(inside.precision_on_presets, m, PRESETS, appkit.new_tokens(12))


st.button("Search the presets: float32 against bfloat16", on_click=search, type="primary")
if H.precision in S:
    rows = S[H.precision]
    parted = [r for r in rows if r["first_difference"] is not None]
    st.markdown(inside.precision_note(rows, appkit.new_tokens(12)))
    for r in parted[:2]:
        st.markdown(inside.parted_note(r))
        st.text(f"float32 : {r['float32']}\nbfloat16: {r['bfloat16']}")
    same = [r["speculative_equals_plain"] for r in rows if r["speculative_equals_plain"] is not None]
    if same:
        st.markdown(inside.speculative_note(same, CHECKS))
    st.table(pd.DataFrame(inside.precision_table(rows)), hide_index=True)   # wraps to fit

# --- 4 ------------------------------------------------------------------------------------------
st.subheader(HEAD[4])
ex = inside.SCHEDULE_EXAMPLE
res = inside.schedule_example()
strong, doubtful = res["survival"]["strong"], res["survival"]["doubtful"]
st.markdown(f"{CHECKS}, on DSpark: multiplying the confidence head's conditional estimates gives each position's "
            "probability of belonging to the surviving prefix, so **a later token of a strong request can be worth "
            "more than an early token of a doubtful one**. The scheduler prices expected committed output against a "
            "table of target steps per second (this app calls it SPS) **profiled at engine initialisation**, and "
            "uses it to change the allocation as load changes; this needs **calibrated** probability magnitudes. Lesson 4 runs it live.")
st.markdown(f"**This app's worked example** (numbers ours): a strong request with confidences {ex['strong']} "
            f"(survival {', '.join(num(a) for a in strong)}) and a doubtful one with {ex['doubtful']} (survival "
            f"{', '.join(num(a) for a in doubtful)}), SPS = {ex['sps']} at B = 1…{len(ex['sps'])}. The scheduler "
            f"admits **{res['calibrated']['lengths'][0]}** tokens of the strong request and "
            f"**{res['calibrated']['lengths'][1]}** of the doubtful one: the strong request's third token "
            f"(survival {num(strong[2])}) beats the doubtful request's first ({num(doubtful[0])}). Θ = "
            f"{num(res['calibrated']['real_theta'], 2)}.")
st.markdown(f"If the doubtful request's head were **uncalibrated**, saying {ex['overconfident']} while its tokens "
            f"really survive as above, the scheduler would admit {res['overconfident']['lengths']} and expect Θ = "
            f"{num(res['overconfident']['believed_theta'], 2)}, but really earn **"
            f"{num(res['overconfident']['real_theta'], 2)}**, less than the calibrated allocation's "
            f"{num(res['calibrated']['real_theta'], 2)}.")

# --- 5 ------------------------------------------------------------------------------------------
st.subheader(HEAD[5])
worked = inside.per_token([(14.0, 4), (14.0, 1)])
overlap = inside.elapsed([(0, 3), (2, 12), (12, 13)])
st.markdown(f"{CHECKS}: divide **total elapsed decode time by total committed tokens**; across unequal rounds this "
            "weights each round by the output it actually delivers. **This app's worked example** with the source's "
            f"14 ms round: one round committing 4 tokens and one committing 1 take 28 ms for 5 tokens, "
            f"**{num(worked['total_over_total'])} ms/token**; averaging the two rounds' own ratios (3.5 and 14) would "
            f"say {num(worked['mean_of_rounds'])} ms/token, overweighting the poor round.")
st.markdown(f"With **overlapping phases**, measure the elapsed critical path instead of adding concurrent work "
            f"twice. Worked example (ours): drafting 0–3 ms, verification 2–12 ms, bookkeeping 12–13 ms: the phases "
            f"add up to {overlap['sum_of_phases']} ms, the round took **{overlap['critical_path']} ms**.")
st.markdown(f"**System against user:** aggregate tok/s measures the system's output rate; tok/s per user describes "
            "one generation stream. DLoop's Table A2 reports autoregressive decoding at 3763 tok/s at concurrency 32 "
            f"({CHECKS}). If that is an aggregate rate, which the source does not say (lesson 8 marks it not "
            "stated), and if the 32 streams shared it equally, each would see about "
            f"**{num(3763 / 32, 1)} tok/s**: both ifs are this app's assumptions. Time to first token and "
            "request-arrival-to-completion latency include further stages; the inspected DLoop evaluator records "
            "target prefill separately and resets its decode timer after the first draft backbone pass.")
if blocks and not live:
    st.caption(LATER)
elif blocks:
    trace = appkit.measure(inside.timed_trace, m, S.get(K.prompt, PRESETS[0]), blocks[0], appkit.new_tokens(24))
    t = inside.trace_timing(trace)
    c = st.columns(4)
    c[0].metric("ms per token, total ÷ total", f"{t['total_over_total']:.2f}")
    c[1].metric("ms per token, mean of rounds", f"{t['mean_of_rounds']:.2f}")
    c[2].metric("time to first token", f"{t['first_token_ms']:.1f} ms")
    c[3].metric("whole request", f"{t['request_ms']:.1f} ms")
    st.caption(f"This app's measurement, now: {appkit.drafter_label(blocks[0])}, greedy, k = 4, {t['tokens']} tokens in "
               f"{t['rounds']} rounds, one request at a time on {m.device}. Time to first token = prefill "
               f"({t['prefill_ms']:.1f} ms) + the first round; no queueing, model loading excluded.")

# --- 6 ------------------------------------------------------------------------------------------
st.subheader(HEAD[6])
st.markdown(f"{CHECKS}, on DLoop: **loop-aware training** unrolls extra drafting stages and supervises the first "
            "and last stages, reproducing the hidden-state chain alongside ground-truth tokens; the parameter count "
            "stays the same, but the extra draft passes cost training time and memory (and inference time when the "
            "loop continues). When a stage passes the gate, the preceding stage's **last proposed token becomes the "
            "next anchor**, and the drafter's own final-layer hidden states stand in as provisional features. "
            "**D-Loop**, with a hyphen, is a different method: it keeps a prefix of a proposed block and reruns the "
            "same drafter to regenerate that block's suffix with the prefix revealed; its method can also consider "
            "**multiple prefix boundaries**. D-Loop refines within a block; DLoop extends across whole stages "
            "before verification.")
if "dloop" in m.drafter_models and not live:
    st.caption(LATER)
elif "dloop" in m.drafter_models:
    prompt = S.get(K.prompt, PRESETS[0])
    loop = appkit.remember(H.dloop, (m.name, str(m.device), prompt), lambda: inside.dloop_round(m, prompt))
    st.table(pd.DataFrame(stage_rows(loop)), hide_index=True)   # token text shown as itself
    st.caption(f"This app's live round: the loop-aware drafter, k = 3, up to S = {loop['max_stages']} stages, threshold g = "
               f"{loop['threshold']:g}; the target then kept {loop['accepted']} of {loop['proposed']} proposals. "
               "Each later stage's anchor is the previous stage's last proposal.")
    cost = inside.training_cost(m.paths.get("drafters", {}))
    if cost:
        st.markdown(f"**This app's training records** (2 CPU cores): loop-aware steps with "
                    f"{cost['loop_stages']} stages unrolled took **{cost['loop_s']:.2f} s** each "
                    f"({cost['loop_steps']} steps, one drafter); the one-stage steps took {cost['one_stage_s']:.2f} s "
                    f"each ({cost['one_stage_steps']} steps, training DFlash and DSpark together on the same batches).")

appkit.next_lesson(__file__)
