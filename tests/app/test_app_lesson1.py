"""AppTest for lesson 1: stepping a live round phase by phase, links, bad input, trace replay."""

from streamlit.testing.v1 import AppTest

from specviz.lessons.markup import md_token
from tests.paths import ROOT

APP = str(ROOT / "app.py")
PAGE = "course_pages/draft_and_verify.py"


def lesson(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    at.run().switch_page(PAGE).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def html(at: AppTest) -> str:
    return "\n".join(h.value for h in at.get("html"))


def md(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def press(at: AppTest, label: str) -> AppTest:
    next(b for b in at.button if b.label.startswith(label)).click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def phase(at: AppTest) -> str:
    on = html(at).split('sv-phase on">')[1]
    return on.split("<")[0]


def test_opens_on_a_live_generation_ready_to_step():
    at = lesson()
    assert "**Ready** (live)" in md(at)
    assert "The best way to learn is to" in html(at)


def test_next_phase_reveals_draft_then_verify_then_commit():
    at = lesson()
    press(at, "Next phase")
    assert phase(at) == "1. draft" and "not computed yet" in html(at)
    assert at.radio(key="keep_predict_draft_0") is not None          # predict before stepping
    press(at, "Next phase")
    assert phase(at) == "2. verify" and "not computed yet" not in html(at)
    assert "n_matches = sum(cumsum &lt; 1)" in html(at)
    press(at, "Next phase")
    assert phase(at) == "3. commit" and "from one target pass" in md(at)
    assert "processed" in html(at) and "committed, not yet processed" in html(at)


def test_a_prediction_is_compared_with_the_answer():
    at = lesson()
    press(at, "Next phase")
    at.radio(key="keep_predict_draft_0").set_value(0).run()
    assert phase(at) == "2. verify"                        # a prediction made, the verdicts are revealed
    assert "You predicted 0; the target kept" in md(at)
    press(at, "Next phase")
    assert "You predicted 0; the target kept" in md(at)


def test_the_round_log_holds_back_the_verdict_of_the_round_being_drafted():
    at = lesson()
    press(at, "Next round")
    press(at, "Next round")                                # round 2, draft phase
    assert "<b>round 2</b>" in html(at) and phase(at) == "1. draft"
    assert list(at.table[0].value["round"]) == [1]
    press(at, "Next phase")
    assert list(at.table[0].value["round"]) == [1, 2]


def test_next_round_back_and_reset_move_through_recorded_rounds():
    at = lesson()
    for _ in range(3):
        press(at, "Next round")                            # each stops at its round's question
    assert "<b>round 3</b>" in html(at) and phase(at) == "1. draft"
    assert at.radio(key="keep_predict_draft_2").value is None
    press(at, "◀ Back")
    assert "<b>round 2</b>" in html(at) and phase(at) == "3. commit"
    press(at, "↺ Reset")
    assert "**Ready**" in md(at)
    press(at, "Next round")
    assert "<b>round 1</b>" in html(at) and "3 recorded" in html(at)   # replayed, not re-run


def test_play_advances_and_turns_into_pause():
    at = lesson()
    press(at, "Play")
    assert any(b.label == "Pause" for b in at.button)
    assert "<b>round 1</b>" in html(at)


def test_play_and_pause_draw_their_symbols_from_the_icon_font():
    """The page's text font has no ⏸ (U+23F8): it drew as an empty box on the step row. Planted bug it
    catches: a label that carries the symbol itself instead of a Material icon."""
    at = lesson()
    play = next(b for b in at.button if b.label == "Play")
    assert play.proto.icon == ":material/play_arrow:"
    press(at, "Play")
    pause = next(b for b in at.button if b.label == "Pause")
    assert pause.proto.icon == ":material/pause:"
    assert not [b.label for b in at.button if "⏸" in b.label or "⏵" in b.label]


def test_the_round_log_shows_each_rounds_emitted_text_whole():
    """A table, whose cells wrap: a dataframe cut the "emitted" column with an ellipsis. Planted bug it
    catches: the log drawn as st.dataframe."""
    at = lesson()
    for _ in range(3):
        press(at, "Next round")
    assert not at.dataframe
    rounds = at.session_state["draft_state"]["stepper"].trace.rounds
    assert list(at.table[0].value["emitted"]) == [md_token("".join(e["text"] for e in r.emitted), spaces=False)
                                                  for r in rounds[:2]]


def test_a_refused_prompt_leaves_no_older_generation_to_step():
    """A prompt over the host's limit is refused, and the refusal is what is on screen: Next phase kept
    stepping the older prompt's generation beside it. Planted bug it catches: the refusal set beside the
    old trace instead of replacing it."""
    at = lesson()
    press(at, "Next round")
    at.text_area(key="keep_draft_prompt").set_value("a" * 3000).run()
    press(at, "Start with these settings")
    assert any("2,000" in e.value for e in at.error)
    assert not [b for b in at.button if b.label.startswith(("Next phase", "Next round"))]
    assert "<b>round 1</b>" not in html(at)
    at.text_area(key="keep_draft_prompt").set_value("The best way to learn is to").run()
    press(at, "Start with these settings")                 # a prompt within the limit starts again
    assert not at.error and any(b.label.startswith("Next phase") for b in at.button)


def test_round_log_lists_the_rounds_shown():
    at = lesson()
    for _ in range(3):
        press(at, "Next round")
    assert len(at.table[0].value) == 2                 # round 3 waits for its verdict


def test_a_link_restores_prompt_and_settings():
    at = lesson(prompt="He said, he said, he said,", verifier="sampling", k="2", drafter="lookup", seed="5")
    assert at.text_area(key="keep_draft_prompt").value == "He said, he said, he said,"
    assert at.selectbox(key="keep_draft_verifier").value == "sampling"
    assert at.slider(key="keep_draft_k").value == 2
    press(at, "Next phase")
    press(at, "Next phase")
    assert "He said" in html(at)
    assert at.query_params["k"] == ["2"] or at.query_params["k"] == "2"


def test_a_bad_link_value_gives_a_message_not_a_traceback():
    at = lesson(k="99", temperature="warm")
    warnings = " ".join(w.value for w in at.warning)
    assert "block size k must be between 1 and 12, got 99" in warnings
    assert "temperature must be a number" in warnings
    assert at.slider(key="keep_draft_k").value == 4


def test_an_empty_prompt_is_a_clear_message():
    at = lesson()
    at.text_area(key="keep_draft_prompt").set_value("   ").run()
    press(at, "Start with these settings")
    assert "The prompt is empty" in " ".join(e.value for e in at.error)


def test_a_prompt_longer_than_the_context_is_cut_from_the_left_with_a_notice():
    at = lesson()
    at.text_area(key="keep_draft_prompt").set_value("q# " * 600).run()   # 1,800 characters, about 1,200 tokens
    press(at, "Start with these settings")
    notice = " ".join(i.value for i in at.info)
    assert "only its last 474 were kept (context 512 tokens, 32 reserved for the answer)" in notice
    press(at, "Next round")
    assert "round 1" in html(at)


def test_emoji_unusual_unicode_and_control_characters_run_and_show():
    at = lesson()
    at.text_area(key="keep_draft_prompt").set_value("Café 🙂 ∑ naïve\x07\x00 and\ttabs, she said").run()
    press(at, "Start with these settings")
    press(at, "Next round")
    assert not at.error
    assert "Café 🙂 ∑ naïve" in html(at)


def test_token_text_is_escaped():
    at = lesson(prompt="<b>bold</b> & <script>x</script>")
    body = html(at)
    assert "&lt;script&gt;" in body and "<script>" not in body


def test_sampling_verifier_shows_the_uniform_draw_against_the_ratio():
    at = lesson(verifier="sampling", k="3")
    press(at, "Next phase")
    press(at, "Next phase")
    assert "u = " in html(at) and "min(1, " in html(at)


def test_a_saved_trace_replays_without_a_model_and_a_bad_file_is_refused():
    at = lesson()
    press(at, "Next round")
    press(at, "Next round")
    saved = at.session_state["draft_state"]["stepper"].trace.to_json().encode()
    at.file_uploader(key="draft_upload").set_value(("broken.json", b"{not json", "application/json")).run()
    assert "Could not load broken.json: not a specviz trace" in " ".join(e.value for e in at.error)
    at.file_uploader(key="draft_upload").set_value(("good.json", saved, "application/json")).run()
    assert not at.error
    assert at.session_state["draft_state"]["stepper"].gen is None
    press(at, "Next round")
    press(at, "Next round")
    assert "replaying a saved trace" in html(at) and "<b>round 2</b>" in html(at)
    press(at, "Next round")
    assert "End of the recorded trace." in " ".join(i.value for i in at.info)


def test_the_trace_and_settings_survive_a_page_switch():
    at = lesson(k="3")
    press(at, "Next round")
    press(at, "Next round")
    at.switch_page("course_pages/biased_admission.py").run()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert "<b>round 2</b>" in html(at) and at.slider(key="keep_draft_k").value == 3


def test_the_candidate_histories_say_why_one_pass_can_score_them_all():
    """Catches the table asserting that one target pass scores every candidate history without the source's
    reason: attention restricts each position to its history within a layer; the layers stay sequential."""
    at = press(lesson(), "Next phase")
    said = [c.value for c in at.caption if c.value.startswith("Why one target pass can score every history")]
    assert said and "(*How speculative decoding checks ahead*)" in said[0]
    assert "“Within each layer, the supplied positions can be processed together, while attention restricts each " \
           "position to its allowed history." in said[0]
    assert "There are still sequential layers inside the model" in said[0]
    assert "What disappears is the need to complete a separate target invocation and token choice" in said[0]
