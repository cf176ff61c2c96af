"""Imports run one way: pages -> appkit -> viz -> lessons -> generator, with hosting and training
above lessons on the generator (the cards read the workloads' held-out prompts, as hosting reads
the lessons' presets); inside appkit, each module imports only the layers below it.
A module that reaches up (the generator importing a lesson, runtime importing the classroom) is a
circle waiting to happen, and fails here with its name."""
import ast
import subprocess
import sys

import pytest

from tests.paths import ROOT

# what each part of the library may import besides itself (and third-party packages)
LIBRARY = {"generator": set(), "training": {"generator", "lessons"}, "lessons": {"generator"},
           "hosting": {"generator", "lessons"}, "viz": {"generator", "lessons"}}
# appkit's modules from the bottom up: each may import only those before it
APPKIT = ["state", "screen", "fields", "course", "engine_code", "runtime", "opening", "waiting", "links", "classroom", "votes", "widgets", "predict", "frame"]


def imported(path) -> set[str]:
    """Every dotted module name `path` imports, at any depth (an import inside a function counts)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


@pytest.mark.parametrize("part", LIBRARY)
def test_the_library_imports_downward_only(part):
    allowed = LIBRARY[part] | {part}
    for path in (ROOT / "specviz" / part).rglob("*.py"):
        upward = {n for n in imported(path) if n.startswith("specviz.") and n.split(".")[1] not in allowed}
        assert not upward, f"{path.relative_to(ROOT)} imports {sorted(upward)}"
        assert not {n for n in imported(path) if n.split(".")[0] in ("appkit", "streamlit", "course_pages")}, path


def test_appkit_modules_import_the_layers_below_them_only():
    assert sorted(APPKIT) == sorted(p.stem for p in (ROOT / "appkit").glob("*.py") if p.stem != "__init__")
    for i, name in enumerate(APPKIT):
        used = {n.split(".")[1] for n in imported(ROOT / "appkit" / f"{name}.py") if n.startswith("appkit.")}
        assert used <= set(APPKIT[:i]), f"appkit/{name}.py imports {sorted(used - set(APPKIT[:i]))}"


def test_no_appkit_module_is_over_250_lines():
    long = {p.name: n for p in (ROOT / "appkit").glob("*.py") if (n := len(p.read_text().splitlines())) > 250}
    assert not long, long


def test_the_first_page_draws_before_transformers_model_classes_are_imported():
    """A newcomer's first page (app.py's frame and the home page) imports only what it draws with:
    transformers' model classes take seconds to import, so they come with the models, in the
    loading thread (appkit.runtime.loader), and a page run imports them where it first runs a model."""
    home = ast.parse((ROOT / "course_pages" / "home.py").read_text())
    imports = "; ".join(ast.unparse(n) for n in home.body if isinstance(n, (ast.Import, ast.ImportFrom)))
    code = (f"import sys; import appkit; {imports}; "
            "print(sorted(m for m in ('transformers.modeling_utils', 'specviz.generator.models', "
            "'specviz.generator.engine') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", f"the first page imports {out.stdout.strip()}"
