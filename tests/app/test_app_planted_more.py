"""AppTest: more planted measurements, and the sentence each page draws from them.

As in test_app_planted_lessons.py, each test chooses the side of a verdict by what it plants and reads
what a learner sees. A measurement the page keeps in session state is planted there (lesson 2's three
continuations, lesson 7's widths, lesson 8's measurement, lesson 9's precision search, lesson 6's round);
lesson 1 is planted through its own trace upload; lesson 7's weight layouts are planted where the page
reads them, the process's layout timings (specviz.generator.cpu_linear.PROFILES), and put back after.
Traces and rounds are real runs of the app's own loaded models, chosen by what they did.
"""
import copy

from appkit.runtime import loader
from appkit.state import DEVICE, MODEL_SET
from specviz.generator import cpu_linear
from specviz.generator.engine import Generation
from specviz.generator.sampling import SamplingSettings
from specviz.generator.settings import Settings
from specviz.lessons import speedup, cost, sampling, inside
from specviz.lessons.presets import PRESETS
from specviz.viz import tokens
from specviz.viz.tokens import esc
from tests.app.test_app_lesson1 import APP, PAGE, html, md, press
from tests.app.test_app_pages import open_page, predict, text

PROMPT = "The best way to learn is to"


def app_models(at):
    """The models the app under test loaded (shared by every session), so no second copy is loaded."""
    return loader(at.session_state[MODEL_SET], at.session_state[DEVICE]).wait()[0]


def test_lesson2_says_same_text_only_when_plain_and_speculative_with_one_seed_match():
    """coupling.same_seed_caption under lesson 2's three continuations, on each side. The third line (the next
    seed) is planted opposite to the verdict each time: equal to plain sampling's where the same seed parted,
    different where it matched. Catches a fixed caption, and one comparing the wrong two lines."""
    at = predict(open_page("course_pages/sampling_lossless.py"), "sampling", "p (the target)")
    for plain, same_seed, next_seed, said in (
            (" and then he", " and then he", " and so", "gave the same text"),
            (" and then he", " and then she", " and then he", "gave different texts")):
        at.session_state["sampling_sentences"] = (PROMPT, [("plain sampling, random seed 1", plain),
                                                           ("speculative sampling, random seed 1", same_seed),
                                                           ("speculative sampling, random seed 2", next_seed)])
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        captions = [c.value for c in at.caption if c.value.startswith("Measured here, now: with the same random seed")]
        assert captions == [f"Measured here, now: with the same random seed, plain and speculative sampling {said}. "
                            "Either outcome is allowed."]
        assert [t.value for t in at.text][-3:] == [PROMPT + plain, PROMPT + same_seed, PROMPT + next_seed]


def test_lesson7_states_free_drafting_width_and_layout_gap_from_planted_numbers(monkeypatch):
    """Three sentences of lesson 7, each on both sides, from planted numbers:
    cost.if_drafting_were_free from the measurement's costs (a check at 4.0 ms a token against plain's 10.0:
    2.50× faster; at 12.5: 0.80×, never "faster"); cost.width_sentence from planted widths (16 tokens at
    2.50 steps: less than 16; at 17.00: no less); cost.layout_gap from planted layout timings (one shape's
    layouts 3.0× apart at 1 row, every layout alike: 1.0×, and 3.0× on a torch without oneDNN, whose
    untimed layout reads as infinitely slow). Catches a sentence written in advance, a verdict read from the
    other side of a comparison, a gap or width read from anything but the numbers on screen, and a page that
    fails on a host whose torch lacks a layout (report rounded its infinite time)."""
    from tests.app.test_app_pricing import planted_measurement
    at = open_page()
    res = planted_measurement(app_models(at))
    at.session_state["cost_measurement"] = res
    at.switch_page("course_pages/cost_per_token.py").run()
    predict(at, "cost", "slower")   # what free drafting would give waits for the answer
    assert not at.exception, [e.value for e in at.exception]
    tokens_ = res["speculative"]["costs"]["tokens"]
    for verify, said in ((4.0, "If drafting and bookkeeping cost nothing, these rounds would be **2.50×** faster than "
                               "plain decoding"),
                         (12.5, "Even if drafting and bookkeeping cost nothing, these rounds would run at **0.80×** "
                                "plain decoding's speed: their checks alone cost more a committed token than a plain "
                                "step")):
        planted = dict(res, plain=dict(res["plain"], costs=dict(res["plain"]["costs"], ms_per_token=10.0)),
                       speculative=dict(res["speculative"], costs=dict(
                           res["speculative"]["costs"], verify_ms=verify * tokens_, verify_ms_per_token=verify)))
        at.session_state["cost_measurement"] = planted
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        line = [m.value for m in at.markdown if m.value.startswith("Verification alone costs")]
        assert line == [f"Verification alone costs {verify * tokens_:.1f} ms ÷ {tokens_} tokens = {verify:.2f} "
                        f"ms/token. " + cost.if_drafting_were_free(10.0, verify)]
        assert said in line[0] and ("faster than plain decoding" in line[0]) == (verify < 10.0)

    for widest, said in ((2.5, "Checking **16 tokens costs 2.50×** a one-token step here (on the fitted line): less "
                               "than the 16 steps of checking them one at a time, 0.16 of a step a token."),
                         (17.0, "Checking **16 tokens costs 17.00×** a one-token step here (on the fitted line): no "
                                "less than the 16 steps of checking them one at a time, so on this machine a wider "
                                "check shares nothing.")):
        at.session_state["cost_widths"] = [{"width": w, "ms": 4.0 * r, "fitted_ms": 4.0 * r, "relative": r}
                                           for w, r in ((1, 1.0), (4, 1.3), (16, widest))]
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert said in [m.value for m in at.markdown]

    k1 = at.slider(key="keep_cost_k").value + 1
    shapes = list(cpu_linear.PROFILES)
    assert (384, 6144) in shapes                                      # the LM head: the shape planted apart
    inf = float("inf")   # what time_layouts records for a layout this torch lacks (oneDNN): never timed
    for others, head, said in (([100.0] * 4, [30.0, 90.0, 45.0, 60.0],
                                "differ by up to **3.0×** (the 384 → 6144 layer at 1 row)."),
                               ([100.0] * 4, [100.0] * 4, "differ by up to **1.0×**"),
                               ([100.0] * 3 + [inf], [30.0, 90.0, 45.0, inf],
                                "differ by up to **3.0×** (the 384 → 6144 layer at 1 row).")):
        for shape in shapes:
            monkeypatch.setitem(cpu_linear.PROFILES, shape, {r: list(others) for r in cpu_linear.PROFILED_ROWS})
        cpu_linear.PROFILES[(384, 6144)][1] = head
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        table = next(t.value for t in at.table if "in use" in t.value.columns)
        assert set(table["rows"]) == {1, k1}
        row = table[(table["layer"] == "384 → 6144") & (table["rows"] == 1)].iloc[0]
        timed = [name for name, t in zip(cpu_linear.LAYOUTS, head) if t < inf]
        assert [row[f"{name}, µs"] for name in timed] == [round(t) for t in head if t < inf]
        assert ("oneDNN packed, µs" in table.columns) == (len(timed) == 4)   # an untimed layout shows no time
        sentence = [m.value for m in at.markdown if m.value.startswith("On this machine the layouts")]
        assert len(sentence) == 1 and said in sentence[0], sentence


def test_lesson9_counts_the_planted_prompts_that_parted_and_names_where(short_runs):
    """inside.precision_note and parted_note under lesson 9's float32/bfloat16 search, planted: two of three
    prompts parted (the second at new token 1, with a markup-looking token that must stay literal), then none.
    Catches a count written in advance, a "no prompt here shows a flipped token" beside prompts that parted,
    a token position off by one, a gap rounded to a judgement, and a speculative-equals-plain count written
    in advance (inside.speculative_note: one planted prompt's speculative output parted)."""
    at = open_page("course_pages/inside_a_round.py")

    def row(prompt, first, f32="", bf16="", gap=None):
        return {"prompt": prompt, "first_difference": first, "float32_token": f32, "bfloat16_token": bf16,
                "gap": gap, "float32": prompt + f32, "bfloat16": prompt + bf16, "speculative_equals_plain": True}
    parted = [row("He said", 2, " the", " a*", 0.0421), row("Once upon", None), row("def f(", 0, "x", "**", 0.5)]
    parted[1]["speculative_equals_plain"] = False   # and one prompt's speculative output parted from plain's
    for rows, count, notes in (
            (parted, "**2 of 3**", ["'He said' parts at new token **3**: float32 takes '␣the', bfloat16 '␣a\\*'. "
                                    "The float32 logits of the two tokens chosen there differ by **0.042**.",
                                    "'def f\\(' parts at new token **1**: float32 takes 'x', bfloat16 '\\*\\*'. The "
                                    "float32 logits of the two tokens chosen there differ by **0.500**."]),
            ([row("He said", None), row("Once upon", None)], "**0 of 2**", [])):
        at.session_state["inside_precision"] = rows
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        said = [m.value for m in at.markdown if m.value.startswith("**Measured here, now:** greedy float32")]
        assert said == [inside.precision_note(rows, short_runs)]
        assert said[0].startswith(f"**Measured here, now:** greedy float32 and bfloat16 outputs differ on {count} "
                                  f"prompts ({short_runs} new tokens each).")
        assert ("No prompt here shows a flipped greedy token" in said[0]) == (not notes)
        assert [m.value for m in at.markdown if " parts at new token " in m.value] == notes
        # inside.speculative_note counts the planted rows: 2 of 3 equal, then 2 of 2
        same = [r["speculative_equals_plain"] for r in rows]
        assert inside.speculative_note(same, "*How speculative decoding checks ahead*") in [m.value for m in at.markdown]
        assert f"**{sum(same)} of {len(same)}** prompts" in inside.speculative_note(same, "")


def greedy_rows(html_: str) -> tuple[int, int, int]:
    """(rows that matched, rows that did not, unused rows) in a greedy histories table."""
    return (html_.count('= proposal <span class="sv-mark ok">✓ keep'),
            html_.count('≠ proposal <span class="sv-mark no">✗ reject'), html_.count("unused: this history"))


def upload(at, name: str, trace):
    at.file_uploader(key="draft_upload").set_value((name, trace.to_json().encode(), "application/json")).run()
    assert not at.error, [e.value for e in at.error]


def whole(at, n: int):
    """Lesson 1 at round `n`'s commit phase, through Next round (which stops at a round's question, in
    its draft phase) and two Next phase, no guess made."""
    for _ in range(n):
        press(at, "Next round")
    press(at, "Next phase")
    press(at, "Next phase")


def test_lesson1_states_each_planted_round_s_outcome_and_each_row_s_comparison():
    """tokens.verdict (after a guess and without one, at verify and at commit: a bonus, a correction, a drafter
    that proposed nothing) and the candidate-history rows (greedy: "=" keeps, "≠" rejects, then unused; sampling:
    "u < min(1, p/q)" keeps, "≥" rejects), from real traces planted through the page's upload and chosen by
    what their rounds did. Catches counts or endings written from anything but the round on screen, a guess
    echoed as the answer, and a comparison sign taken from a flag rather than the numbers the row shows."""
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(APP, default_timeout=120).run().switch_page(PAGE).run()
    assert not at.exception, [e.value for e in at.exception]
    m = app_models(at)
    def endings(trace) -> list[str]:
        return [r.emitted[-1]["kind"] for r in trace.rounds]

    runs = (Generation(m, p, Settings.greedy("ar", 24, k=3)).run() for p in PRESETS)
    # the first preset with a round whose proposals all survived and one that failed
    greedy = next(t for t in runs if {"bonus", "correction"} <= set(endings(t)))
    b, c = endings(greedy).index("bonus"), endings(greedy).index("correction")
    upload(at, "greedy.json", greedy)
    for _ in range(b + 1):
        press(at, "Next round")                      # round b + 1's draft phase: guess one fewer than it kept
    n = len(greedy.rounds[b].proposed)
    at.radio(key=f"keep_predict_draft_{b}").set_value(n - 1).run()
    assert not at.exception, [e.value for e in at.exception]
    assert f"You predicted {n - 1}; the target kept **{n}** of {n} proposals." in md(at)   # at verify
    assert greedy_rows(html(at)) == (n, 0, 0)
    press(at, "Next phase")                          # at commit: the whole round, the guess kept beside it
    assert (f"You predicted {n - 1}; the target kept **{n}** of {n} proposals + 1 bonus = {n + 1} tokens from one "
            "target pass.") in md(at)
    assert greedy_rows(html(at)) == (n, 0, 0) and "bonus: the target's argmax here" in html(at)
    press(at, "↺ Reset")
    whole(at, c + 1)                                 # round c + 1 shown whole, never guessed
    rc = greedy.rounds[c]
    kept, n = rc.accepted, len(rc.proposed)
    assert (f"The target kept **{kept}** of {n} proposals + 1 correction = {kept + 1} token{'s' if kept else ''} from "
            "one target pass.") in md(at)
    assert "You predicted" not in md(at)
    assert greedy_rows(html(at)) == (kept, 1, n - kept - 1) and "bonus: the target" not in html(at)

    lookup = Generation(m, "Once upon a time", Settings.greedy("lookup", 4, k=3)).run()
    assert not lookup.rounds[0].proposed                 # the premise: no earlier match, nothing to propose
    upload(at, "lookup.json", lookup)
    whole(at, 1)
    assert "The drafter proposed nothing: the target supplied 1 token of its own from one target pass." in md(at)
    assert "kept **" not in md(at)

    sampled = Generation(m, PROMPT, Settings(drafter="ar", verifier="sampling", k=3, max_new_tokens=12,
                                             sampling=SamplingSettings(temperature=1.0), seed=1)).run()
    i = next(i for i, r in enumerate(sampled.rounds) if 0 < r.accepted < len(r.proposed))   # kept some, then failed
    upload(at, "sampled.json", sampled)
    whole(at, i + 1)
    r = sampled.rounds[i]
    body = html(at)
    for j, d in enumerate(r.decisions[:r.accepted + 1]):
        sign, mark = ("&lt;", "ok\">✓ keep") if j < r.accepted else ("≥", "no\">✗ reject")
        assert (d["u"] < d["ratio"]) == (j < r.accepted)   # the premise: the rule's own test
        assert (f"u = {d['u']:.3f} {sign} min(1, p/q) = min(1, {d['p']:.3f}/{d['q']:.3f}) = {d['ratio']:.3f} "
                f"<span class=\"sv-mark {mark}") in body, j
    assert tokens.verdict(r, None, committed=True) in md(at)


def test_lesson6_sums_up_a_planted_dloop_round_by_how_it_ended():
    """tokens.summary under lesson 6's one round, from real DLoop rounds planted in its place: one whose
    proposals all survived (a bonus), one that failed (a correction) and one cut by the stop rule, drafted with
    S = 1 (one stage, no gate), which the page's slider allows. Catches a fixed "+ 1 correction", counts read
    from anything but the round on screen, and the page failing on a round with no stage table (it drew an
    empty st.html)."""
    at = open_page("course_pages/dloop.py")
    trace = Generation(app_models(at), PROMPT, Settings.greedy("dloop", 24, k=2, loop_threshold=0.0,
                                                               max_stages=1)).run()
    ending = {"bonus": "1 bonus", "correction": "1 correction", "stop": "1 token the target supplies at the stop rule"}
    seen = set()
    for r in trace.rounds:
        last = r.emitted[-1]["kind"]
        if last in seen:
            continue
        seen.add(last)
        at.session_state["dloop_round"] = r
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        n = len(r.emitted)
        said = (f"kept {r.accepted} of {len(r.proposed)} proposals + {ending[last]} = {n} token{'s' if n != 1 else ''} "
                "from one target pass.")
        assert said in [x.value for x in at.markdown], last
    assert seen == {"bonus", "correction", "stop"}       # the premise: the trace ended rounds all three ways


def test_lesson8_checklist_says_no_when_the_planted_baseline_s_output_differs(short_runs):
    """checklist.ours's sampling row on both sides in lesson 8's table: the page's own greedy measurement
    (identical: yes), then the same measurement with its baseline's trace planted from another prompt's real
    run (NO). Catches a row that says "yes" without comparing the two outputs."""
    at = predict(open_page("course_pages/reading_a_speedup.py"), "speedup", "can't tell without measuring")
    res = at.session_state["cost_measurement"]
    assert res["plain"]["trace"].new_ids == res["speculative"]["trace"].new_ids      # the premise: greedy, lossless
    rule = "greedy (temperature 0); output identical to the baseline: "
    assert at.table[0].value["this app, measured now"]["sampling rule"] == rule + "yes"
    other = Generation(app_models(at), "Once upon a time", Settings.greedy(None, short_runs)).run()
    assert other.new_ids != res["speculative"]["trace"].new_ids                      # the premise: they differ
    planted = copy.copy(res)
    planted["plain"] = dict(res["plain"], trace=other)
    at.session_state["cost_measurement"] = planted
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    ours = at.table[0].value["this app, measured now"]
    assert ours["sampling rule"] == rule + "NO"
    assert ours["sampling rule"] == speedup.ours(app_models(at), planted)["sampling rule"]
    assert "baseline: yes" not in text(at)
