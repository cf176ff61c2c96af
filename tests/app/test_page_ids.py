"""Stable page ids (appkit.course): a page's session keys and link settings use the id declared
with it, never its title, so renumbering or renaming a lesson breaks no key and no shared link."""
import ast
import dataclasses
import re

import pytest
from streamlit.testing.v1 import AppTest

from appkit import course
from appkit.fields import write

from tests.paths import ROOT
APP = str(ROOT / "app.py")


def test_every_page_is_declared_once_with_a_unique_id_and_file():
    ids, files = [p.id for p in course.COURSE], [p.file for p in course.COURSE]
    assert len(set(ids)) == len(ids) and len(set(files)) == len(files)
    assert {p.file for p in course.COURSE} == {f"course_pages/{f.name}" for f in (ROOT / "course_pages").glob("*.py")}
    assert [p.id for p in course.COURSE if p.links_itself] == ["draft"]   # lesson 1 links its generation itself


# the keys a page reads of another page's: lesson 8 measures what lesson 7 was set to
READS = {"speedup": {"cost"}}


@pytest.mark.parametrize("page", course.COURSE, ids=lambda p: p.id)
def test_a_page_writes_no_session_key_by_hand_and_its_keys_are_its_own(page):
    """A page's kept keys come from `appkit.keys(<its id>)`: no "keep_…" text in a page, and no page
    takes another's keys except where READS says it reads them. Planted bugs it catches: a key typed
    as "keep_dloop_k" (it drifts from the id when the course changes), or lesson 6's keys asked for on
    lesson 7's page (the two pages would share one slider's value)."""
    tree = ast.parse((ROOT / page.file).read_text())
    typed = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str) and "keep_" in n.value]
    assert typed == []
    asked = {ast.literal_eval(n.args[0]) for n in ast.walk(tree)
             if isinstance(n, ast.Call) and ast.unparse(n.func) == "appkit.keys"}
    assert asked <= {page.id} | READS.get(page.id, set()), asked
    assert not re.search(r"[\"']l[0-9]+[_\"']", ast.unparse(tree))   # the old title-digit prefixes (l1 … l9)


def literal_keys(tree) -> list[str]:
    """The session keys a page writes as text: a string subscript of S or st.session_state, a string
    `in` either, a string handed to their get/pop/setdefault, to appkit.default or appkit.at_most, or
    as a widget's key=."""
    state = ("S", "st.session_state")
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Subscript) and ast.unparse(n.value) in state:
            found.append(n.slice)
        elif isinstance(n, ast.Compare) and any(ast.unparse(c) in state for c in n.comparators):
            found.append(n.left)
        elif isinstance(n, ast.Call):
            f = ast.unparse(n.func)
            if n.args and (f.rsplit(".", 1)[0] in state and f.rsplit(".", 1)[-1] in ("get", "pop", "setdefault")
                           or f in ("appkit.default", "appkit.at_most")):
                found.append(n.args[0])
            found += [k.value for k in n.keywords if k.arg == "key"]
    return [ast.unparse(x) for x in found if isinstance(x, (ast.Constant, ast.JoinedStr))]


@pytest.mark.parametrize("page", course.COURSE, ids=lambda p: p.id)
def test_every_session_key_of_a_page_comes_from_its_keys_helper(page):
    """Kept or not, a page's session keys come from `appkit.keys(<its id>)` (`kept=False` for what it
    computed and its charts' keys): never typed. Planted bugs it catches: lesson 7's measurement kept
    under a bare "measurement" (lesson 8 wrote the same key), a chart keyed "dloop_fig" by hand, lesson
    1 reading appkit's "class_view" as raw text."""
    assert literal_keys(ast.parse((ROOT / page.file).read_text())) == []


def test_the_key_finder_finds_each_way_a_key_is_typed():
    """The property above can fail: each way a page could type a key is found."""
    typed = ast.parse('S["a"]; "b" in S; S.get("c"); st.session_state.pop("d"); appkit.default("e", 1); '
                      'st.button("x", key="f"); st.plotly_chart(fig, key=f"g_{n}"); S[K.k]; S.get(H.sweep)')
    assert literal_keys(typed) == ["'a'", "'b'", "'c'", "'d'", "'e'", "'f'", "f'g_{n}'"]


ENGINE = ("specviz.generator.engine", "specviz.generator.models", "specviz.generator.threads", "torch", "transformers")


@pytest.mark.parametrize("page", course.COURSE, ids=lambda p: p.id)
def test_a_page_only_draws_it_neither_imports_the_engine_nor_takes_its_lock(page):
    """A page runs the models only through appkit.measure, appkit.remember or appkit.shared, each of which
    takes the engine lock, calling a function of its lessons module. Planted bugs it catches: a page that
    builds a Generation itself, or holds `appkit.engine()` around its own loop."""
    tree = ast.parse((ROOT / page.file).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not {m for m in imported if m and m.startswith(ENGINE)}, imported
    assert "appkit.engine" not in ast.unparse(tree)


def test_renumbering_and_renaming_the_lessons_keeps_every_key_and_shared_link(monkeypatch):
    renamed = [dataclasses.replace(p, title=f"{len(course.LESSONS) - i} · renamed {p.title[::-1]}")
               for i, p in enumerate(course.LESSONS)]
    monkeypatch.setattr(course, "LESSONS", renamed)
    monkeypatch.setattr(course, "COURSE", [course.HOME, *renamed])
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"p": "0.6", "q": "0.4", "n": "500", "seed": "3"})
    at.switch_page("course_pages/biased_admission.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert (at.session_state["keep_admission_p"], at.session_state["keep_admission_q"],
            at.session_state["keep_admission_n"], at.session_state["keep_admission_seed"]) == (0.6, 0.4, 500, 3)
    assert not at.warning
    nxt = [pl.proto for pl in at.get("page_link") if pl.proto.label.startswith("Next: ")][-1]
    assert nxt.label == "Next: " + renamed[5].title   # the course's own order, under the new titles


def test_the_ids_are_not_read_off_the_titles():
    tree = ast.parse((ROOT / "appkit" / "course.py").read_text())
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "Page"):
        assert isinstance(call.args[0], ast.Constant), ast.unparse(call)   # an id is written, not derived


# the settings whose first value only the run knows: the set's drafters, a radio's own labels, and the
# home race's setting, measured once per server (appkit.opening)
FIRST_AT_RUN = {"drafter", "source"} | {"home.k"}


@pytest.mark.parametrize("page", [p for p in course.COURSE if p.settings], ids=lambda p: p.id)
def test_each_setting_opens_on_its_records_first_value_which_its_own_link_would_accept(page):
    """The record holds a setting's first value beside its bounds (read from a lessons module where the
    source or a measurement gives it). Planted bugs it catches: lesson 6 opening on k = 9 where its
    bound is 8, or a first value a shared link of the same setting would be refused."""
    for name, f in page.settings.items():
        first = f.first()
        if first is None:
            assert name in FIRST_AT_RUN or f"{page.id}.{name}" in FIRST_AT_RUN, (page.id, name)
            continue
        assert f.read(name, write(first), {f.among: [first]}) == first, (page.id, name)   # a drafter: one the set has
