"""Moving an installed checkout to another commit reinstalls the project only when the install
could be stale there: an editable install whose build did not change serves every commit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchsmith.harness.prepare import reinstall_between

SETUP = """
from setuptools import setup
setup(name="calc", version="1.0",
      packages=["calc", "calc.parsing"],
      package_data={"calc": ["*.txt"]})
"""
EDITABLE = "uv pip install --no-deps --reinstall -e ."


def _head(repo: Any) -> str:
    return subprocess.run(["git", "-C", str(repo.path), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture
def calc(make_repo: Any) -> Any:
    return make_repo("calc", {"setup.py": SETUP, "calc/__init__.py": "", "calc/core.py": "X = 1\n",
                              "calc/parsing/__init__.py": "", "setup.cfg": "[flake8]\nignore = E1\n"})


def _moved(repo: Any, files: dict[str, str | None], reinstall: str = EDITABLE) -> str | None:
    first = _head(repo)
    second = repo.commit(files)
    return reinstall_between(reinstall, repo.path / ".git", first, second)


@pytest.mark.parametrize("files", [
    {"calc/core.py": "X = 2\n"},  # code
    {"calc/parsing/latex.py": "Y = 1\n", "calc/parsing/sub/__init__.py": ""},  # a subpackage
    {"setup.py": SETUP.replace('"calc.parsing"]', '"calc.parsing", "calc.parsing.sub"]')},
    {"setup.py": SETUP.replace('["*.txt"]', '["*.txt", "*.g4"]')},  # package data
    {"setup.cfg": "[flake8]\nignore = E2\n"},  # another tool's settings
    {"setup.cfg": None},
])
def test_an_editable_install_serves_a_commit_whose_build_did_not_change(
        calc: Any, files: dict[str, str | None]) -> None:
    assert _moved(calc, files) is None


@pytest.mark.parametrize("files", [
    {"setup.py": SETUP.replace('version="1.0"', 'version="1.1"')},
    {"setup.py": SETUP.replace(")\n", ', entry_points={"console_scripts": ["calc=calc.core:main"]})\n')},
    {"setup.cfg": "[options.entry_points]\nconsole_scripts =\n    calc = calc.core:main\n"},
    {"pyproject.toml": '[build-system]\nrequires = ["setuptools", "cython"]\n'},
    {"setup.py": SETUP.replace("setup(", 'setup(install_requires=["six"],')},  # a dependency
    {"setup.cfg": "[options]\ninstall_requires =\n    six\n"},
    {"pyproject.toml": '[project]\ndependencies = [\n    "six>=1.15",\n]\n'},
    {"calc/_speedups.pyx": "def f(): pass\n"},  # a compiled source, the first
    {"other/__init__.py": ""},  # a new top-level package
    {"tool.py": "print(1)\n"},  # a new top-level module
])
def test_a_commit_whose_build_changed_is_reinstalled(calc: Any, files: dict[str, str | None]) -> None:
    assert _moved(calc, files) == EDITABLE


def test_an_install_that_copies_or_leaves_files_in_the_checkout_is_always_reinstalled(
        calc: Any) -> None:
    # copied into site-packages; metadata and extensions left in the checkout, where moving
    # it (git clean) may remove them; a Node build
    for command in ("uv pip install --no-deps --reinstall .", "python setup.py develop --no-deps",
                    "python -m pip install --no-deps -e .", "npm run build"):
        assert _moved(calc, {"calc/core.py": f"X = {len(command)}\n"}, command) == command
    assert _moved(calc, {"calc/core.py": "X = 0\n"}, "CFLAGS=-O0 " + EDITABLE) is None


def test_a_project_with_compiled_sources_is_always_reinstalled(calc: Any) -> None:
    calc.commit({"calc/_speedups.c": "int f(void) { return 0; }\n"})
    assert _moved(calc, {"calc/core.py": "X = 2\n"}) == EDITABLE  # its .so is built in place


def test_what_git_cannot_tell_is_reinstalled(calc: Any, tmp_path: Path) -> None:
    assert reinstall_between(EDITABLE, calc.path / ".git", "0" * 40, _head(calc)) == EDITABLE
    assert reinstall_between(EDITABLE, None, _head(calc), _head(calc)) == EDITABLE
    assert reinstall_between(None, calc.path / ".git", _head(calc), _head(calc)) is None


@pytest.mark.slow
def test_a_checkout_moved_without_reinstall_imports_the_new_commits_code(
        calc: Any, tmp_path: Path) -> None:
    """Really installed: the venv imports the moved files, and the entry point a later commit
    adds is there only after the reinstall that move asks for."""
    venv = tmp_path / "venv"
    env = {**os.environ, "VIRTUAL_ENV": str(venv)}
    subprocess.run(["uv", "venv", "-q", "--python", sys.executable, str(venv)], check=True, env=env)
    run = lambda *args: subprocess.run(args, cwd=calc.path, env=env, capture_output=True, text=True)  # noqa: E731
    installed = run("uv", "pip", "install", "-q", "--no-deps", "-e", ".")
    if installed.returncode:
        pytest.skip(f"setuptools is not reachable: {installed.stderr[-300:]}")
    first = _head(calc)
    second = calc.commit({"calc/core.py": "X = 2\n\ndef main():\n    print('calc', X)\n"})
    assert reinstall_between(EDITABLE, calc.path / ".git", first, second) is None
    python = str(venv / "bin" / "python")
    assert run(python, "-c", "import calc.core; print(calc.core.X)").stdout.strip() == "2"

    third = calc.commit({"setup.py": SETUP.replace(
        ")\n", ', entry_points={"console_scripts": ["calc=calc.core:main"]})\n')})
    again = reinstall_between(EDITABLE, calc.path / ".git", second, third)
    assert again == EDITABLE and not (venv / "bin" / "calc").exists()
    assert run(*again.split()).returncode == 0
    assert run(str(venv / "bin" / "calc")).stdout.strip() == "calc 2"
