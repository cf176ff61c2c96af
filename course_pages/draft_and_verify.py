"""Lesson 1: draft and verify, one round at a time, phase by phase.

The engine runs each round whole and records it; this page reveals the recorded round in three
phases (draft, verify, commit), so back and reset never call a model. A trace can be saved as
JSON and loaded back to replay without any model.
"""
from dataclasses import fields

import streamlit as st

import appkit
from specviz.generator.settings import VERIFIERS
from specviz.generator.trace import Trace
from specviz.lessons.presets import PRESETS
from specviz.lessons.cursor import Cursor
from specviz.lessons.draft import Stepper, prompt_read, prompt_texts
from specviz.viz import cache, export, histories, stages, tokens

S = st.session_state
HERE = appkit.page_of_file(__file__).url_path   # the class's view and its shared link name it
K = appkit.keys("draft")   # this page's session keys
H = appkit.keys("draft", kept=False)   # what it computed, and its elements' keys
SETTINGS = {f.name: K[f.name] for f in fields(appkit.LessonSettings)}   # the generation's settings: field -> key
TICK_S = 0.7

appkit.header(
    __file__,
    f"{appkit.CHECKS_AHEAD}, “A known candidate history can be evaluated before it is accepted” (with its excerpt "
    "of the assisted generation code in Hugging Face transformers, version 4.46, and its cache bookkeeping); "
    f"{appkit.DRAFT_VERIFY}, “Draft, then verify”.",
    "The drafter proposes a block **a b c …**; the target scores every candidate history **H, H a, H a b, …** "
    "in one pass. Look at each row: the prediction after *H a* checks **b**, not a. The target keeps proposals "
    "up to its first disagreement, then adds its own token. Watch the cache strip too: which committed tokens "
    "has the target already processed?")

m = appkit.models()
limits = appkit.limits()
drafters = list(m.drafter_models) if m else ["ar"]
state = S.setdefault(H.state, {"stepper": Stepper(measure=appkit.measure), "params_read": False})
stepper: Stepper = state["stepper"]


def start():
    """Prefill a fresh generation with the chosen settings (no round runs yet)."""
    s = appkit.LessonSettings(**{f: S[k] for f, k in SETTINGS.items()})
    try:
        appkit.check(s.prompt, s.engine_settings())
    except ValueError as e:
        stepper.refuse(str(e))
        return
    if stepper.start(appkit.require_models(), s.prompt, s.engine_settings()):
        state["link"] = appkit.to_params(s) | {"set": S[appkit.MODEL_SET]}
        appkit.forget_predictions("draft_")   # a new generation asks again, round by round


def load_upload():
    """Replay an uploaded trace: no model needed, only the recorded rounds."""
    f = S.get(H.upload)
    if f is not None and stepper.load(f.getvalue(), f.name, limits.max_new_tokens):
        appkit.forget_predictions("draft_")


def live_link() -> dict | None:
    """This page's link while it shows a live generation (its address then names the round and
    phase on screen); None while replaying a trace, which puts no round in the address."""
    return None if stepper.replay else state.get("link")


def move(action: str):
    """A step from the screen the browser shows: a request carries the address of the screen it came
    from (`live_link`), so a click delivered twice, or made on a screen the browser had not yet
    replaced, moves once."""
    seen = appkit.read_cursor(dict(st.query_params), limits.max_new_tokens)[0] if live_link() else None
    S[H.toast] = stepper.move(action, seen)


def use_preset():
    if S.get(H.preset):
        S[K.prompt] = S[H.preset]


# --- settings: a shared link fills them in once; later edits stay in session state ---------------
if not state["params_read"]:
    state["params_read"] = True
    base = appkit.LessonSettings(**{f: S[k] for f, k in SETTINGS.items() if k in S})
    linked, errors = appkit.from_params(dict(st.query_params), drafters, base, limits)
    state["link_cursor"], cursor_errors = appkit.read_cursor(dict(st.query_params), limits.max_new_tokens)
    state["param_errors"] = errors + cursor_errors
    for f, key in SETTINGS.items():
        S[key] = getattr(linked, f)
for err in state.get("param_errors", []):
    st.warning(f"A setting in the link was ignored: {err}. The default is used instead.")
appkit.defaults("draft")   # each setting's first value, from its course record
appkit.at_most(K.max_new, limits.max_new_tokens)
if S[K.drafter] not in drafters:
    S[K.drafter] = drafters[0]

with st.expander("Prompt and settings", expanded=m is None or bool(stepper.error)):
    c1, c2 = st.columns([3, 2])
    c1.selectbox("Preset prompts", PRESETS, index=None, placeholder="Pick a preset…", key=H.preset,
                 format_func=appkit.prompt_label,
                 on_change=use_preset)
    c1.text_area("Prompt (free text)", key=K.prompt, height=80)
    c2.selectbox("Drafter", drafters, key=K.drafter, format_func=appkit.drafter_label)
    c2.selectbox("Verifier", VERIFIERS, key=K.verifier, format_func=appkit.VERIFIER_LABELS.get)
    c3, c4, c5, c6 = st.columns(4)
    appkit.block_slider(c3, "Block size k (proposals)", "draft")
    c4.slider("Temperature", *appkit.bounds("draft", "temperature"), step=0.05, key=K.temperature,
              disabled=S[K.verifier] == "greedy", help="Greedy verification decodes at temperature 0.")
    c5.number_input("Random seed", *appkit.bounds("draft", "seed"), step=1, key=K.seed)
    c6.number_input("Max new tokens", appkit.bounds("draft", "max_new")[0], limits.max_new_tokens, step=1, key=K.max_new)
    st.button("Start with these settings", type="primary", on_click=start, disabled=m is None)
    st.caption("Starting puts the prompt and settings into this page's address: share the link to restore them.")

view = appkit.class_view()   # following a class: replay the presenter's recorded rounds, at its round and phase
if view and view.get("trace") and appkit.following() and state.get("class_view") is not view:
    state["class_view"] = view
    stepper.follow(view["trace"], appkit.read_cursor(view.get("params", {}), limits.max_new_tokens)[0], limits.max_new_tokens)
if not appkit.following():
    stepper.limit = None   # exploring alone: a student may step through every recorded round
if stepper.trace is None and m is not None and stepper.error is None:
    start()   # first visit: open on a live generation, not an empty page
    linked = state.pop("link_cursor", None)   # a shared link's round and phase: run the rounds up to it
    if linked and stepper.trace is not None:
        missed = stepper.go_to(linked)
        if missed:
            state["param_errors"].append(missed)
            st.warning(f"A setting in the link was ignored: {missed}.")
if stepper.error:
    st.error(appkit.plain(stepper.error))
if m is None and stepper.trace is None:
    st.error(f"The models are not available ({appkit.models_error()}). You can still replay a saved trace below.")


def panel():
    """Step controls and everything that changes when stepping."""
    trace: Trace | None = stepper.trace
    if trace is None:
        return
    if stepper.due(TICK_S):
        move("forward")
    if stepper.playing != playing_at_start:
        st.rerun()   # start or stop the timer: the fragment's run_every is fixed per full run
    b = st.columns(5)   # \u00a0: a narrow button wraps its label at a word, never leaving an arrow alone
    b[0].button("◀ Back", on_click=move, args=("back",), shortcut="Left", width="stretch")
    b[1].button("Next phase\u00a0▶", on_click=move, args=("forward",), shortcut="Right", type="primary",
                width="stretch")
    b[2].button("Next round\u00a0»", on_click=move, args=("round",), shortcut="N", width="stretch")
    # the icon font's pause and play: the page's text font has no ⏸, which drew as an empty box
    b[3].button("Pause" if stepper.playing else "Play", on_click=stepper.toggle_play, shortcut="P",
                icon=":material/pause:" if stepper.playing else ":material/play_arrow:",
                width="stretch")
    b[4].button("↺ Reset", on_click=move, args=("reset",), shortcut="Home", width="stretch")
    if S.get(H.toast):
        st.info(S.pop(H.toast))

    cur: Cursor = stepper.cursor
    if live_link():
        appkit.set_link(live_link() | appkit.cursor_params(cur))   # the address links to this round and phase
    verifier = trace.settings.verifier
    source = "following the presenter" if stepper.limit is not None else "replaying a saved trace" if stepper.replay else "live"
    prompt = prompt_read(trace)
    if cur.shown == 0:
        appkit.html(tokens.committed_html(prompt, trace.rounds, 0, "commit"))
        st.markdown(f"**Ready** ({source}). Press **Next phase** (→) to let the drafter propose its first block.")
        for n in trace.notices:
            st.info(n)
        if live_link():
            appkit.share(live_link() | appkit.cursor_params(cur), HERE)
        return
    r = trace.rounds[cur.shown - 1]
    appkit.html(f'{tokens.phase_badges(cur.phase)} <b>round {r.index + 1}</b> · {source} · '
                f'{len(trace.rounds)} recorded')
    appkit.html(tokens.committed_html(prompt, trace.rounds, cur.shown, cur.phase))

    st.markdown("**The drafted block**")
    appkit.html(tokens.block_html(r, cur.phase))
    loop = stages.stages_html(r.drafter_info, r.proposed_tokens)
    if loop:
        st.markdown("**DLoop's gate: one more stage, or check now?**")
        appkit.html(loop)
    survival = stages.survival_html(r.drafter_info, r.proposed_tokens)
    if survival:
        st.markdown("**DSpark's confidence head: how likely each proposal is to survive**")
        appkit.html(survival)
    guess_key = f"draft_{r.index}"
    if cur.phase == "draft" and r.proposed:
        # the answer is this round's verify phase: picking (or Reveal) steps there
        appkit.predict(guess_key, "how many of these proposals will the target keep?",
                       list(range(len(r.proposed) + 1)), on_reveal=lambda: move("forward"))
    elif cur.phase != "draft":
        guess = appkit.prediction(guess_key)
        st.markdown(tokens.verdict(r, guess, committed=cur.phase == "commit"))
        appkit.class_result(guess_key, list(range(len(r.proposed) + 1)))

    st.markdown("**Candidate histories: what the target predicts after each**")
    appkit.html(histories.histories_html(r, cur.phase, verifier))
    st.caption(f"Why one target pass can score every history ({appkit.CHECKS_AHEAD}): “Within each layer, the "
               "supplied positions can be processed together, while attention restricts each position to its "
               "allowed history. The output after input a predicts what follows H a; it checks b, not a. There are "
               "still sequential layers inside the model, and each prediction still depends on its preceding "
               "candidate tokens. What disappears is the need to complete a separate target invocation and token "
               "choice before starting each later prediction.”")
    if r.greedy and cur.phase != "draft":
        st.markdown("**How the library counts the kept proposals, with this round's values.** In Hugging Face "
                    "transformers (version 4.46), assisted generation compares each proposal with the target's "
                    "choice, counts the mismatches so far at every position, and keeps the proposals before the "
                    "first one: its variable `n_matches`.")
        appkit.html(histories.n_matches_html(r))

    st.markdown("**The target's cache**")
    before = prompt_texts(trace) + [e["text"] for x in trace.rounds[:r.index] for e in x.emitted]
    appkit.html(cache.strip_html(before, r, cur.phase))

    with st.expander("Round log", expanded=False):
        # in the draft phase the round on screen has no verdict yet: the log stops before it
        done = cur.shown - (cur.phase == "draft")
        # a table, not a dataframe: its cells wrap, where a dataframe's cut the emitted text with an ellipsis
        st.table(tokens.log_rows(trace.rounds[:done]), hide_index=True)
    # inside the fragment, so the file always holds the rounds stepped so far
    # a callable: the JSON is built when the button is clicked, not on every step
    st.download_button("Download the recorded rounds (JSON)", trace.to_json, file_name="specviz-trace.json",
                       mime="application/json", on_click="ignore")
    slides(r, cur.phase, verifier, before)
    if live_link():
        appkit.share(live_link() | appkit.cursor_params(cur), HERE)


def slides(r, phase: str, verifier: str, before: list[str]):
    """This round's three figures as SVG images for slides, each as the page draws it now."""
    st.markdown("**This round for slides** (SVG images, drawn as on this page)")
    lines = 1 + (len(r.proposed) + 2) // 8   # about eight chips fit a line 1000 pixels wide
    figures = [("Drafted block", "block", lambda: tokens.block_html(r, phase), 40 + 56 * lines),
               ("Candidate histories", "histories", lambda: histories.histories_html(r, phase, verifier),
                90 + 80 * (len(r.proposed) + 1)),   # a row's chips take up to two lines
               ("Cache strip", "cache", lambda: cache.strip_html(before, r, phase), 150)]
    cols = st.columns(len(figures))
    for col, (label, name, markup, height) in zip(cols, figures):
        col.download_button(label, lambda markup=markup, height=height: export.figure_svg(markup(), 1000, height),
                            file_name=f"specviz-round{r.index + 1}-{phase}-{name}.svg", mime="image/svg+xml",
                            on_click="ignore", icon=":material/download:", key=H[f"svg_{name}"])


def panel_for_the_class():
    """The panel, then what a class following this screen should draw (a step reruns only this
    fragment, not app.py, so the panel shares its round and numbers the screen itself)."""
    panel()
    if appkit.leading() and stepper.trace is not None:
        appkit.share_trace(stepper.trace.to_json())
        appkit.show_class(HERE)
    if appkit.fragment_run():   # a step or a vote redrew the panel alone: number the screen (see appkit.mark_seen)
        appkit.mark_seen()


playing_at_start = stepper.playing
# a fragment's reruns run outside app.py's apology: it gets its own; held alone in a container (appkit.hold)
appkit.hold(st.fragment(run_every=TICK_S if playing_at_start else None)(appkit.apology()(panel_for_the_class)))

with st.expander("Replay a saved trace", expanded=m is None):
    st.file_uploader("A trace downloaded from this page (no model needed)", type=["json"], key=H.upload,
                     on_change=load_upload)

appkit.next_lesson(__file__, with_share=False)   # lesson 1 shares its round from the panel
