"""The README's lesson map ("Where each lesson lives") says where each page's code and tests are.

Each row is read against the course (appkit.course: the page's file and id) and against the page's own
imports: a page that starts using another lessons or viz module, or a module or test file that moves,
fails here until its row says so.
"""
import ast
from pathlib import Path

import pytest

from appkit import course

ROOT = Path(__file__).resolve().parents[2]


def map_rows() -> dict:
    """{page file: [lesson, page, id, lessons modules, viz modules, tests]} of the README's map."""
    text = (ROOT / "README.md").read_text()
    table = text.split("### Where each lesson lives", 1)[1].split("\n\n")[2]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()[2:]]
    return {row[1].strip("`"): row for row in rows}


def names(cell: str) -> set:
    return {n.strip().strip("`") for n in cell.split(",") if n.strip()}


def imported(page_file: str, package: str) -> set:
    """The modules of `package` (specviz.lessons or specviz.viz) a page imports."""
    found = set()
    for node in ast.walk(ast.parse((ROOT / page_file).read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == package:
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(package + "."):
            found.add(node.module.split(".")[2])
    return found


def test_the_map_has_one_row_a_page_in_course_order():
    assert list(map_rows()) == [p.file for p in course.COURSE]


@pytest.mark.parametrize("page", course.COURSE, ids=lambda p: p.id)
def test_a_pages_row_names_its_id_its_modules_and_test_files_that_exist(page):
    """Planted bugs it catches: lesson 6's row naming `dloop` as its lessons module while the page imports
    `sweep`; a row left out of date when a page imports a new viz module; a test file named that is not there."""
    _, _, page_id, lessons, viz, tests = map_rows()[page.file]
    assert page_id.strip("`") == page.id
    assert names(lessons) == set(page.lessons) == imported(page.file, "specviz.lessons")   # README, record, page
    assert names(viz) == set(page.viz) == imported(page.file, "specviz.viz")
    for module in names(lessons):
        assert (ROOT / "specviz" / "lessons" / f"{module}.py").exists(), module
    for module in names(viz):
        assert (ROOT / "specviz" / "viz" / f"{module}.py").exists(), module
    assert names(tests) and all((ROOT / t).exists() for t in names(tests)), tests


@pytest.mark.parametrize("page", course.COURSE, ids=lambda p: p.id)
def test_a_pages_id_names_its_lessons_module_and_its_test_file(page):
    """One name from page to module: lesson 6 (id `dloop`) computes in specviz/lessons/dloop.py, tested in
    tests/unit/lessons/test_dloop.py. Planted bug it catches: a lesson's module renamed back to `sweep`,
    or its tests filed under another lesson's name."""
    assert page.id in imported(page.file, "specviz.lessons")
    assert (ROOT / "tests" / "unit" / "lessons" / f"test_{page.id}.py").exists()
