"""The ecosystem seam: which ecosystem a repository is set up for, and Python behind it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchsmith.core import Ecosystem, Plan
from benchsmith.harness.render import render
from benchsmith.setup.ecosystems import (
    PythonEcosystem,
    choose_ecosystem,
    ci_testing,
    ecosystem_of,
    ecosystems,
)

SETUP_PY = "from setuptools import setup\nsetup(name='shelf', version='1.0', packages=['shelf'])\n"
PACKAGE_JSON = json.dumps({"name": "shelf-ui", "scripts": {"test": "jest"},
                           "devDependencies": {"jest": "^29.0.0"}})
NODE_CI = """
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/setup-node@v3
      - run: npm ci
      - run: npm test
"""
PYTHON_CI = """
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/setup-python@v4
      - run: pip install -e . && python -m pytest
"""


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_python_is_one_ecosystem_behind_the_protocol() -> None:
    python = ecosystems()["python"]
    assert isinstance(python, Ecosystem) and python.name == "python"
    assert list(ecosystems())[0] == "python"
    plan = Plan(python="3.11", exclude_newer="2023-06-01T00:00:00Z")
    assert plan.ecosystem == "python"
    assert isinstance(ecosystem_of(plan), PythonEcosystem)
    # the ecosystem renders exactly what the harness renders for Python plans
    assert ecosystem_of(plan, apt=True).render(plan) == render(plan, apt=True)


def test_a_python_project_is_set_up_as_one_and_its_ci_says_it_tests_it(tmp_path: Path) -> None:
    repo = _tree(tmp_path, {"setup.py": SETUP_PY, ".github/workflows/ci.yml": PYTHON_CI})
    ecosystem, evidence = choose_ecosystem(repo)
    assert ecosystem.name == "python"
    assert evidence.files == ["setup.py"] and evidence.ci_tests == [".github/workflows/ci.yml"]
    assert ci_testing(repo, "node") == []


def test_a_python_project_with_a_javascript_frontend_stays_python(tmp_path: Path) -> None:
    # a web application: its CI runs pytest; the package.json only builds assets
    repo = _tree(tmp_path, {"setup.py": SETUP_PY, "package.json": PACKAGE_JSON,
                            ".github/workflows/ci.yml": PYTHON_CI})
    assert choose_ecosystem(repo)[0].name == "python"


def test_ci_that_runs_node_tests_is_read_as_such(tmp_path: Path) -> None:
    repo = _tree(tmp_path, {"package.json": PACKAGE_JSON, ".github/workflows/node.yml": NODE_CI})
    assert ci_testing(repo, "node") == [".github/workflows/node.yml"]
    assert ci_testing(repo, "python") == []


def test_a_checkout_with_no_known_project_goes_to_python_which_names_what_is_missing(
        tmp_path: Path) -> None:
    ecosystem, evidence = choose_ecosystem(_tree(tmp_path, {"README.md": "hello\n"}))
    assert ecosystem.name == "python" and evidence.files == []


def test_an_unknown_or_absent_ecosystem_asked_for_is_one_line(tmp_path: Path) -> None:
    from benchsmith.core import BenchsmithError

    repo = _tree(tmp_path, {"setup.py": SETUP_PY})
    with pytest.raises(BenchsmithError, match="unknown ecosystem 'cobol'"):
        choose_ecosystem(repo, wanted="cobol")
    assert choose_ecosystem(repo, wanted="python")[0].name == "python"


def test_setup_with_an_unknown_ecosystem_exits_with_one_line(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "benchsmith.cli", "setup", str(tmp_path),
                          "--ecosystem", "cobol"], capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    assert "unknown ecosystem 'cobol'" in run.stderr and "Traceback" not in run.stderr
