"""An editable setuptools project is on sys.path as a path, as `setup.py develop` put it."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsmith.core import Plan
from benchsmith.harness.render import render_install, render_reinstall
from benchsmith.sandbox import LocalSandboxConfig
from benchsmith.setup.context import gather_context
from benchsmith.setup.engine import SetupEngine, SetupOptions
from benchsmith.setup.planner import RulePlanner
from benchsmith.setup.pyversion import choose_python

from .conftest import PIN_DATE

# A flat layout beside other top-level directories: setuptools >= 64 installs it editable
# behind an import hook, which puts no directory of the checkout on sys.path.
PYPROJECT = """
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "shelf"
version = "0.1.0"

[project.optional-dependencies]
test = ["pytest"]

[tool.setuptools]
packages = ["shelf", "shelf.checkers"]
"""

# How a linter finds its own plugin modules: from a file path to a module name, by the
# sys.path entry the file is under, in a fresh interpreter started somewhere else.
TESTS = """
import os
import subprocess
import sys

import shelf


def test_plugins_are_found_by_their_path(tmp_path):
    code = (
        "import os, sys, shelf.checkers as c\\n"
        "d = os.path.dirname(os.path.dirname(os.path.dirname(c.__file__)))\\n"
        "sys.exit(0 if any(os.path.abspath(p or '.') == d for p in sys.path) else 1)\\n"
    )
    assert subprocess.run([sys.executable, "-c", code], cwd=tmp_path).returncode == 0


def test_import():
    assert shelf.NAME == "shelf"
"""


def test_an_editable_setuptools_install_is_rendered_in_compat_mode(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    context = gather_context(tmp_path)
    from datetime import date

    choice = choose_python(context, date(2023, 6, 1), {"3.11": "python3.11"})
    plan = RulePlanner().plan(context, choice, "2023-06-01T00:00:00Z")
    assert plan.config_settings == {"shelf:editable_mode": "compat"}
    assert "--config-settings-package shelf:editable_mode=compat" in render_install(plan)[-1]
    assert "--config-settings-package shelf:editable_mode=compat" in (render_reinstall(plan) or "")
    other = Plan(python="3.11", exclude_newer="2023-06-01T00:00:00Z")  # no settings: no flags
    assert "--config-settings" not in render_install(other)[-1]
    two = Plan(python="2.7", exclude_newer="2019-06-01T00:00:00Z",
               config_settings={"shelf:editable_mode": "compat"})
    assert "--config-settings" not in render_install(two)[-1]  # pip of Python 2 has none


@pytest.mark.slow
def test_tests_that_find_the_project_by_path_pass(make_repo, tmp_path: Path) -> None:
    repo = make_repo("shelf", {"pyproject.toml": PYPROJECT,
                               "shelf/__init__.py": "NAME = 'shelf'\n",
                               "shelf/checkers/__init__.py": "",
                               "tests/test_shelf.py": TESTS, "docs/index.md": "shelf\n"})
    options = SetupOptions(sandbox=LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")),
                           max_iterations=0)
    record = SetupEngine(options).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", (record.failure_reason, record.iterations[-1].commands)
    assert record.tests.PASSED == 2
    assert "config_settings" in record.sources
