"""AppTest: what the two source articles teach is on its page, credited to its source by title, and
what goes beyond them is gone.

Each case opens one page as a browser would (through app.py), answers its prediction or presses
its button where the passage waits for one, and reads every text element. A passage "cited"
must name *How speculative decoding checks ahead* in the same element; one that is the app's own
must say so. Widgets are found by their labels, not their keys.
"""

import pytest
from streamlit.testing.v1 import AppTest

from specviz.lessons import glossary
from tests.paths import ROOT

APP = str(ROOT / "app.py")
TITLE = "How speculative decoding checks ahead"

# page: (an option to choose in whichever radio offers it, or None; a button to press or None;
#        [(phrase, must the same element cite the source by title)], [phrases no longer on the page])
CASES = {
    "course_pages/sampling_lossless.py": ("the article's 0.4 / 0.2 example", None, [
        ("The other two tokens are **this app's**", False),
        ("**another** (target 0.5, drafter 0.3) and **a third** (0.3 and 0.3)", False),
    ], []),
    "course_pages/parallel_drafting.py": (None, None, [
        ("an **alternative recurrent head** carries more within-block history", True),
        ("how much additional surviving prefix repays the head's latency", True),
        ("The embedded DFlash has DFlash's mechanics but reads its proposals in DSpark's alignment", False),
    ], []),
    "course_pages/verification_budget.py": (None, "Draft, profile and allocate", [
        ("a default synthetic 8192-token context** that may need adjustment", True),
        ("**shape profiling, backend restrictions", True),
        ("**parallel backbone pass that produced it remains a cost of the round**", True),
        # neither source names Algorithm 1, SPS or Θ, nor an order of admission (was "From the DSpark paper")
        ("This app's notation, which neither source uses: the name Algorithm 1 for that scheduler, and "
         "Θ = τ · SPS(B)", True),
        ("This app's own too: the order of admission, likeliest first", True),
        ("this app's version admits the likeliest proposals first", False),
    ], ["This app's own: the name Algorithm 1", "From the DSpark paper", "The scheduler admits the likeliest"]),
    "course_pages/biased_admission.py": ("exactly p(A)", None, [
        ("it admits ℓ = 0 whatever x₁ is, so the target always draws afresh", True),
        ("the policy that speculates without bias", True),
        ("the names Algorithm 1 and Θ = τ · SPS(B) are this app's notation for the scheduler the source describes "
         "(neither source uses them)", False),
        # the argument is the DSpark authors', as the source reports it (was the source's own)
        ("gives the DSpark authors' argument for non-anticipating admission", True),
        ("“Their argument for preserving the target distribution rests on this historical capacity decision "
         "isolating admission from the current token's realization.”", True),
    ], ["Algorithm 1 with the stop", "and the names Algorithm 1, τ and Θ", "are the DSpark paper's",
        "rests the argument"]),
    "course_pages/dloop.py": (None, None, [
        ("**an early rejection discards every later block**", True),
        ("DSpark may **prune** a suffix while DLoop may **extend** a draft", True),
        ("the parallel backbone pass that produced it remains a cost of the round", True),
        ("**not call the confidence predictor, the step-rate cost table or load-aware prefix selection**", True),
        ("**no matched evaluation combining DLoop's stages with DSpark's global confidence scheduler**", True),
        ("This app's DLoop drafters are likewise DLoop's stages on the DSpark drafter", False),
        # the large-target profile: the source's example, this app's assumptions (was "built from the sources")
        ("This app's assumptions: 0.5 ms for each further position checked, 2 ms a drafting stage and k = 4", True),
    ], ["large-target profile built from the sources"]),
    "course_pages/cost_per_token.py": (None, None, [
        ("**small distributed communication operations that remain latency-bound**", True),
        ("a **large** model *can* spend much of a step moving weights", True),
        ("This profile is hypothetical, and this app's reading. From the worked example of", True),
        ("the example names no model, hardware or k. This app's assumptions: 0.5 ms", True),
        # all that moves the break-even point, not kernel shapes and padding alone
        ("“Longer contexts, model depth, kernel shapes, padding, and synchronization can move the break-even point "
         "too.”", True),
        ("load, context length, depth and synchronization are not varied", True),
    ], ["the step is dominated by reading the weights", "(from the sources)", "taken from the sources",
        "read from the sources", "built from the sources"]),
    "course_pages/reading_a_speedup.py": ("can't tell without measuring", None, [
        ("questions of that closing checklist, and a **result** row this app adds", False),
        ("Table A2's reported throughput (tok/s); not stated whether aggregate or per user", False),
        ("its 0.5 ms a further position and 2 ms a stage are this app's assumptions", True),
        # load reverses the gain on DFlash; DSpark at the same load is the base drafter mattering, not load
        ("“Load can reverse an incremental gain even within the same study.” Added to DFlash, DLoop's gain is "
         "reversed at concurrency 32.", True),
        ("“The operation's value changes with its base drafter as well as load.”", True),
        # the sources name one benchmark, not "each benchmark dataset"
        ("The only benchmark the sources name is MATH-500", True),
        # Draft, Then Verify's three ways, related to the other source's four questions
        ("*Draft, Then Verify* puts it as “exactly three ways to go faster: draft faster, draft better (accept more "
         "per cycle), or verify smarter”", False),
        ("In this app's reading, drafting faster is cheaper proposals", False),
        ("autoregressive drafters like EAGLE: “Quality is high and they accept a lot per cycle.", False),
    ], ["several concurrencies, up to 32", "aggregate throughput (tok/s), not per-user latency",
        "(from the sources)", "shows load reversing a gain", "while added to DSpark at the same load",
        "for each benchmark dataset"]),
    "course_pages/inside_a_round.py": (None, None, [
        ("aligns these predictions with a **frozen target**", True),
        ("**leaking between training blocks**", True),
        ("is **not rerun for each proposed token**", True),
        ("**The embedded DFlash reads its proposals DSpark's way**", True),
        ("DFlash's own alignment drops the anchor slot's output", True),
        # two assumptions behind the per-stream rate, not one (was "shared it equally (our assumption)")
        ("If that is an aggregate rate, which the source does not say (lesson 8 marks it not stated), and if the 32 "
         "streams shared it equally, each would see about **117.6 tok/s**: both ifs are this app's assumptions.",
         True),
        ("its method can also consider **multiple prefix boundaries**", True),
        ("table of target steps per second (this app calls it SPS)", True),   # the name is not the source's
    ], ["shared it equally (our assumption)", "steps per second (SPS)"]),
}


def elements(at: AppTest) -> list[str]:
    """Every text a learner can read on the page, one string per element."""
    out = [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    out += [f"{m.label} {m.value}" for m in at.metric] + [str(t.value.to_dict()) for t in at.table]
    return out


def opened(page: str, choice: str | None, press: str | None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    if choice:   # a prediction's answer, or which distributions to show
        next(r for r in at.radio if choice in r.options).set_value(choice).run()
    if press:
        next(b for b in at.button if b.label.startswith(press)).click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("page", list(CASES))
def test_each_source_point_is_on_its_page_with_its_source(page):
    choice, press, present, absent = CASES[page]
    texts = elements(opened(page, choice, press))
    for phrase, cited in present:
        holding = [t for t in texts if phrase in t]
        assert holding, f"{page}: {phrase!r} is not on the page"
        if cited:
            assert any(TITLE in t for t in holding), f"{page}: {phrase!r} does not name its source"
    for phrase in absent:
        assert not any(phrase in t for t in texts), f"{page}: still says {phrase!r}"


def test_the_glossary_credits_each_name_to_whoever_gave_it():
    source = {term: glossary.lookup(term)["source"] for term in (
        "Algorithm 1", "τ and Θ", "retrospective policy", "retrospective search", "top-k", "temperature",
        "token", "leading space")}
    assert source["Algorithm 1"] == source["τ and Θ"] == glossary.APP        # neither source uses these names
    assert source["retrospective policy"] == glossary.CHECKS_AHEAD     # the article's words
    assert source["retrospective search"] == source["top-k"] == source["temperature"] == glossary.APP
    assert source["leading space"] == glossary.APP and "leading space" not in glossary.lookup("token")["definition"]
    draft_verify = next(w for w in glossary.WORKS if w[0] == glossary.DRAFT_VERIFY)
    assert "chef" not in draft_verify[3]                                # no page tells the analogy


def test_the_glossary_pads_back_to_the_original_width_as_the_source_does():
    """Catches "every request is widened to the longest": the source pads "every shortened request back to the
    original width", which differs whenever no request is admitted its whole draft."""
    said = glossary.lookup("ragged and padded slots")["definition"]
    assert "widened back to its original width (its anchor and whole draft)" in said
    assert "can spend the slots the scheduler intended to save" in said and "longest" not in said


def test_the_glossary_names_algorithm_1_sps_and_theta_as_this_app_s_notation():
    """Catches "The DSpark paper's name for its prefix scheduler" and "SPS" credited to *How speculative decoding
    checks ahead*: neither source contains these names."""
    for term in ("Algorithm 1", "SPS", "τ and Θ"):
        entry = glossary.lookup(term)
        assert entry["source"] == glossary.APP and "(neither source uses it)" in entry["definition"], term
        assert "DSpark paper" not in entry["definition"], term


def test_the_glossary_states_no_admission_order_for_the_source():
    """Catches "which the source describes: admit candidates in order of prefix survival": the source states no
    admission order; the order is this app's."""
    said = glossary.lookup("Algorithm 1")["definition"]
    assert "stops at the first non-improving extension" in said
    assert "The order in which this app admits candidates, by prefix survival, is this app's too: the source " \
           "states none." in said


def test_the_glossary_credits_dspark_with_what_its_source_says():
    """Catches "DFlash's parallel backbone" (in neither source) and "(released with DeepSpec)" credited to *How
    speculative decoding checks ahead*: the release is *Draft, Then Verify*'s, and the works list says so."""
    entry = glossary.lookup("DSpark")
    assert entry["source"] == glossary.CHECKS_AHEAD
    assert "DFlash's" not in entry["definition"] and "DeepSpec" not in entry["definition"]
    assert "expensive backbone stays parallel" in entry["definition"]
    dspark = next(w for w in glossary.WORKS if w[0].startswith("DSpark"))
    assert dspark[0] == "DSpark, released with its training code as DeepSpec"
    assert dspark[4] == "the title and DeepSeek are *Draft, Then Verify*'s words; the link is this app's"


def test_the_works_list_says_which_identifiers_the_sources_give_and_which_this_app_adds():
    """Catches arXiv numbers, organisations and links listed as if the sources gave them, and the works list's
    old "with the paper's own names Algorithm 1 and Θ = τ · SPS(B)"."""
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.switch_page("course_pages/glossary.py").run()
    works = next(m.value for m in at.markdown if m.value.startswith("- *How speculative decoding checks ahead"))
    assert "Identifiers: both sources name DFlash; z-lab, the arXiv number and the link are this app's." in works
    assert ("Identifiers: *How speculative decoding checks ahead* names DLoop and its tables; NAVER AI, the arXiv "
            "number and the link are this app's.") in works
    assert "Identifiers: the version is *How speculative decoding checks ahead*'s (v4.46.0)" in works
    assert "paper's own names" not in works and "the DSpark paper" not in "\n".join(m.value for m in at.markdown)


def test_lesson_2_says_where_the_two_sources_disagree_on_what_lossless_promises():
    """Catches lesson 2 quoting *Draft, Then Verify*'s "Speculative decoding buys speed, not a different answer"
    with nothing beside it: for sampling, the other source promises a distribution, not the same sentence."""
    texts = elements(opened("course_pages/sampling_lossless.py", "p (the target)", None))
    said = next(t for t in texts if t.startswith("Here the two sources promise different things."))
    assert "*Draft, Then Verify* says speculative decoding produces “the exact same text, faster”: “You get the " \
           "same output you would have gotten the slow way.”" in said
    assert "overstates the sampling case" in said and "In this app's reading" in said
    assert f"*{TITLE}* promises the target's distribution" in said
    assert "“do not require two random runs to produce the same sentence, even with the same nominal seed”" in said
