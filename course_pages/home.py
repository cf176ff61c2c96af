"""Home: draft-then-verify in a few sentences, a live race on one prompt, links to the lessons."""
import time

import streamlit as st

import appkit
from appkit import opening
from appkit.runtime import loading
from specviz.generator.settings import Settings
from specviz.lessons import readable
from specviz.lessons.presets import PRESETS
from specviz.viz.race import lane_html

K = appkit.keys("home")   # this page's session keys
appkit.defaults("home")   # each setting's first value, from its course record
H = appkit.keys("home", kept=False)   # what it computed, and its elements' keys


def race():
    """specviz.lessons.home, imported where first used: it brings the engine and transformers' model
    classes, seconds of a server's first run, and a newcomer's first page draws without them."""
    from specviz.lessons import home as module
    return module


REPLAY_SECONDS = 3.0   # the slower runner's measured decode time, stretched to this on screen
RACES = 5              # races per click: the speedup is shown as their median and range
RACE_ASKED = H.race_asked   # a press of Start the race, not yet run

appkit.css()
st.title("Draft, then verify")
st.markdown(
    "A language model writes one token at a time: token N+1 cannot start until token N is chosen. "
    "**Speculative decoding** lets a cheap *drafter* guess the next few tokens, and the expensive "
    "*target* model checks the whole guess in **one** pass. The target keeps the longest prefix it "
    "agrees with, then adds one token of its own: the **correction** at the first miss, or a **bonus** "
    "if every guess was right.")
st.caption(f"Sources: the articles {appkit.DRAFT_VERIFY} and {appkit.CHECKS_AHEAD}.")

st.subheader("A race on the same prompt")
st.markdown("Both runners use the same target model, greedy decoding, on this machine, now. Look at the two "
            "texts, and at which one finishes first.")
revealed = appkit.predict("home", "will the two texts be the same?",
                          ["yes, token for token", "mostly, a few words differ", "no, different texts"])
# the theory, whatever a race shows; what leads it is filled in below, once a race has (or has not) run
WHY_SAME = ("With greedy decoding the target's decisions stay identical, and with sampling the output follows the "
            "target's own distribution, both **within implementation numerics**: another computation graph can "
            "round differently and flip a greedy token. What changes is the work: fewer expensive target passes, "
            f"plus the drafter's own ({appkit.CHECKS_AHEAD}).")
answer = st.empty()
if revealed:
    answer.markdown(f"**Answer: the same.** {WHY_SAME} Start the race to see it on this machine.")
c1, c2, c3 = st.columns([2, 2, 1])
c1.text_input("Prompt", key=K.prompt)
m = appkit.models(wait=False)   # the page draws while the models load; only the race waits for them
if H.fastest_pending in st.session_state:   # a measurement asked for the setting it found (see below)
    st.session_state[K.drafter], st.session_state[K.k] = st.session_state.pop(H.fastest_pending)


opening.start()   # once per server: which setting wins here, measured in the background once the models load


def open_on():
    """The server's opening measurement (appkit.opening), its drafter and k this session's unless it chose
    its own; None while it runs."""
    found = opening.opening()
    if found:
        appkit.default(K.drafter, found[1][0])
        appkit.default(K.k, found[1][1])
    return found


found = open_on() if m else None
if found:
    c2.selectbox("Drafter", list(m.drafter_models), key=K.drafter, format_func=appkit.drafter_label)
    appkit.block_slider(c3, "Proposals per round (k)", "home")
else:
    with c2:
        appkit.loading_note("the drafters appear when they are ready, and a race started now waits for them.")


def find_fastest(bar):
    """Measure every drafter at k = 2 and 4 against plain decoding, now, and open the race on the fastest."""
    best = appkit.measure(race().fastest_now, m, PRESETS[0], list(m.drafter_models), progress=lambda done, total: bar.progress(
        done / total, f"Measuring every drafter on this machine: run {done + 1} of {total}…"))
    bar.empty()
    st.session_state[H.fastest] = best
    st.session_state.pop(H.race, None)   # an older race beside a fresh measurement would read as one figure
    st.session_state[H.fastest_pending] = (best["drafter"], best["k"])
    st.rerun()


if m and not appkit.following() and st.button(
        "Find the fastest setting on this machine", help="About half a minute: every drafter at k = 2 and 4 "
        "against plain decoding, three runs each; the race then opens with the fastest."):
    find_fastest(st.progress(0.0, "Warming up…"))
fastest_line = st.empty()   # filled below the race: a race run now replaces the measurement's figure


def run_race(lanes, bar):
    """Race RACES times under the engine lock (the models have arrived: appkit.pressed waits for them),
    then replay the median race in slow motion."""
    models = appkit.require_models()
    open_on()   # a race pressed while they loaded opens where the page does
    settings = Settings.greedy(st.session_state[K.drafter], appkit.new_tokens(40),
                               k=st.session_state[K.k])
    appkit.check(st.session_state[K.prompt], settings)
    res, threads = appkit.measure(race().run_now, models, st.session_state[K.prompt], settings, RACES,
                                  progress=lambda done, total: bar.progress(done / total, f"Race {done} of {total} run…"))
    bar.empty()
    runners = res["races"][res["median"]]
    start = time.perf_counter()
    for at, i, n, ms in race().frames(runners, REPLAY_SECONDS):
        time.sleep(max(0.0, start + at - time.perf_counter()))
        r = runners[i]
        lanes[i].html(lane_html(r.name, r.texts[:n], ms, n == len(r.texts), plain=i == 0))
    return {"lanes": [(r.name, r.texts, r.ms_per_token, r.elapsed_ms) for r in runners],
            "speedup": res["speedup"], "verdict": race().verdict(*runners), "threads": threads,
            "prompt": st.session_state[K.prompt]}


failed = m is None and loading().done   # the load failed: the sidebar says why
# kept until the models are there: a press made while they load runs once they arrive (appkit.waiting)
st.button("Start the race", type="primary", disabled=failed or not revealed,
          help=None if revealed else "Make your prediction first (or press Reveal).", **appkit.keep_press(RACE_ASKED))
stuck = st.empty()   # above the lanes: why they hold no text, where the models cannot continue the prompt
# side by side: both lanes in view once the race starts (one above the other, a projector's 768 rows held one)
lanes = [column.empty() for column in st.columns(2)]
# kept, too, while the opening is measured: the race then opens where the page does
measuring = opening.measuring_note("the drafters appear when it is done" + (
    ", and the race you started runs then." if st.session_state.get(RACE_ASKED) else "."))
if not measuring and appkit.pressed(RACE_ASKED, "the race you started is queued, and runs as soon as they have arrived."):
    try:
        st.session_state[H.race] = run_race(lanes, st.progress(0.0, f"Racing {RACES} times…"))
        st.session_state.pop(H.fastest, None)   # the race is the fresher figure
        if m is None:
            st.rerun()   # the models arrived during the race: draw the page with its drafter box
    except ValueError as e:   # a prompt over the host's limit: said here, and kept on screen
        st.error(str(e))
fastest = st.session_state.get(H.fastest)
if fastest and revealed:   # which setting wins is part of the answer
    fastest_line.markdown(race().fastest_caption(fastest, appkit.drafter_label))
elif found and H.race not in st.session_state and (
        st.session_state[K.drafter], st.session_state[K.k]) == found[1]:   # where it opens, and why
    fastest_line.markdown(race().opening_sentence(found[0], found[1], appkit.drafter_label))
result = st.session_state.get(H.race)
if result and revealed:
    for i, (lane, (name, texts, mspt, _)) in enumerate(zip(lanes, result["lanes"])):
        lane.html(lane_html(name, texts, mspt, True, plain=i == 0))
    (_, plain_texts, plain_ms, plain_total), (_, spec_texts, spec_ms, spec_total) = result["lanes"]
    plain_tokens, spec_tokens = [t for t, _ in plain_texts], [t for t, _ in spec_texts]
    # the answer above must agree with this race: where the texts part, it says so (race.same_answer)
    answer.markdown(f"{race().same_answer(plain_tokens, spec_tokens)} {WHY_SAME}")
    speed, why = result["speedup"], result["verdict"]
    st.markdown(race().same_text(plain_tokens, spec_tokens))
    note = readable.stuck_note(result["prompt"], spec_tokens)
    if note:
        stuck.warning(note)
    st.markdown(f"**plain** {plain_ms:.1f} ms/token · **speculative** {spec_ms:.1f} ms/token · "
                f"**speedup** {speed.label(unit='×')}")
    tone, said = race().explain(speed, why)
    if tone == "won":
        appkit.result_caption("race_verdict", said)
    else:
        {"noise": st.info, "lost": st.warning}[tone](said)
    appkit.result_caption("race_replay", f"The lanes replay the median of the {speed.n} races; the models used "
                          f"{result['threads']['threads']} thread(s) of the {result['threads']['cores']} free cores, "
                          "the count measured fastest just before the race.")
    appkit.result_caption("race_legend", "Colours in the speculative lane: green = drafted and accepted, orange = the "
                          "target's correction, violet = bonus, blue = the token the target supplies itself when a "
                          "stop rule fires (it equals the proposal). Decode time only: both runners process the prompt "
                          f"before the start line. {race().replay_sentence(plain_total, spec_total, REPLAY_SECONDS)} "
                          "Lesson 7 takes the time apart; lesson 8 asks what such a number can and cannot tell you.")

st.subheader("Lessons")
for lesson in appkit.LESSONS:
    st.page_link(lesson.file, label=lesson.title)

appkit.next_lesson(__file__)
