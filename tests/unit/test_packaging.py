"""The installable library (pyproject.toml) agrees with the checkout: what it depends on is pinned as
requirements.txt pins it, its `specviz` command is `python -m specviz`, and nothing in the repository
reaches the library by editing sys.path.

What it leaves out: building and installing the package (it needs setuptools from the network and a
minute; `pip install -e .` is a developer's step, not CI's).
"""
import re
import tomllib

import pytest

from specviz import __main__ as cli
from tests.paths import ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_every_dependency_is_pinned_as_requirements_txt_pins_it():
    # one torch for the README's install and for `pip install -e .`
    required = {line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()}
    declared = PROJECT["dependencies"] + [d for extra in PROJECT["optional-dependencies"].values() for d in extra]
    assert sorted(set(declared) - required) == []


def test_the_specviz_command_is_python_m_specviz(capsys):
    assert PROJECT["scripts"] == {"specviz": "specviz.__main__:main"}
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    assert done.value.code == 0 and "generate" in capsys.readouterr().out


def test_no_file_edits_sys_path():
    # scripts run as modules from the root (python -m scripts.race_check) or after pip install -e .
    edit = re.compile(r"sys\.path\.(insert|append|extend)|sys\.path\s*(\+=|=(?!=))")
    files = [p for p in ROOT.rglob("*.py") if not {".git", "models", ".venv"} & set(p.relative_to(ROOT).parts)]
    assert [str(p.relative_to(ROOT)) for p in files if edit.search(p.read_text(errors="replace"))] == []
