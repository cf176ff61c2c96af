"""Home: draft-then-verify in a few sentences, a live race on one prompt, links to the lessons."""
import time

import streamlit as st

import appkit
from specviz.generator.engine import Settings
from specviz.hosting.app_state import PRESETS
from specviz.lessons import race
from specviz.viz.race import lane_html

REPLAY_SECONDS = 3.0   # the slower runner's measured decode time, stretched to this on screen

appkit.css()
st.title("Draft, then verify")
st.markdown(
    "A language model writes one token at a time: token N+1 cannot start until token N is chosen. "
    "**Speculative decoding** lets a cheap *drafter* guess the next few tokens, and the expensive "
    "*target* model checks the whole guess in **one** pass. The target keeps the longest prefix it "
    "agrees with, then adds one token of its own: the **correction** at the first miss, or a **bonus** "
    "if every guess was right. The text is exactly what the target would have written alone; only the "
    "number of expensive passes changes.")
st.caption("Sources: *Draft, Then Verify* (seed 004) and *How speculative decoding checks ahead* (seed 000).")

st.subheader("A race on the same prompt")
st.markdown("Both runners use the same target model, greedy decoding, on this machine, now. "
            "**Predict first:** will the two texts be the same? Which one finishes first?")
appkit.default("keep_home_prompt", PRESETS[0])
c1, c2, c3 = st.columns([3, 1, 1])
c1.text_input("Prompt", key="keep_home_prompt")
m = appkit.models()
drafters = list(m.drafter_models) if m else []
if drafters:
    appkit.default("keep_home_drafter", drafters[0])
    c2.selectbox("Drafter", drafters, key="keep_home_drafter", format_func=appkit.drafter_label)
appkit.default("keep_home_k", 4)
appkit.block_slider(c3, "Proposals per round (k)", 8, "keep_home_k")


def run_race(lanes):
    """Run the race under the engine lock, then replay it in the two lanes in slow motion."""
    settings = Settings.greedy(st.session_state["keep_home_drafter"], appkit.new_tokens(40),
                               block_size=st.session_state["keep_home_k"])
    appkit.check(st.session_state["keep_home_prompt"], settings)
    with appkit.engine():
        runners = race.finish(race.start(m, st.session_state["keep_home_prompt"], settings))
    start = time.perf_counter()
    for at, i, n, ms in race.frames(runners, REPLAY_SECONDS):
        time.sleep(max(0.0, start + at - time.perf_counter()))
        r = runners[i]
        lanes[i].html(lane_html(r.name, r.texts[:n], ms, n == len(r.texts), plain=i == 0))
    return runners


go = st.button("Start the race", type="primary", disabled=m is None)
lanes = [st.empty(), st.empty()]
if go:
    try:
        runners = run_race(lanes)
        st.session_state["home_race"] = [(r.name, r.texts, r.ms_per_token, r.elapsed_ms) for r in runners]
    except ValueError as e:
        st.error(str(e))
result = st.session_state.get("home_race")
if result:
    for i, (lane, (name, texts, mspt, _)) in enumerate(zip(lanes, result)):
        lane.html(lane_html(name, texts, mspt, True, plain=i == 0))
    (_, plain_texts, plain_ms, plain_total), (_, spec_texts, spec_ms, spec_total) = result
    same = [t for t, _ in plain_texts] == [t for t, _ in spec_texts]
    st.markdown(f"**Same text:** {'yes, token for token' if same else 'no'} · "
                f"**plain** {plain_ms:.1f} ms/token · **speculative** {spec_ms:.1f} ms/token · "
                f"**speedup** {plain_ms / spec_ms:.2f}×")
    st.caption("Colours in the speculative lane: green = drafted and accepted, orange = the target's correction, "
               "violet = bonus. Decode time only: both runners process the prompt before the start line. "
               f"Shown in slow motion: the race ran first with nothing drawn ({plain_total:.0f} ms against "
               f"{spec_total:.0f} ms of decoding), then replayed over {REPLAY_SECONDS:g} seconds with each lane at its "
               "measured pace. Lesson 7 takes the time apart; lesson 8 asks what such a number can and cannot tell you.")

st.subheader("Lessons")
for path, title in appkit.LESSONS:
    st.page_link(path, label=title)
