"""Packages a CI job installs from a git forge (test data, an unreleased fork): taken at the date
from the mirror next to the project's, written into the checkout, installed from there, in the
engine's sandbox and in any later checkout of the plan (real git, real uv installs)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchsmith.harness.checkout import resolve
from benchsmith.harness.prepare import prepare_sandbox
from benchsmith.harness.vendored import DEPS_DIR, hosted, vendored_in
from benchsmith.sandbox import LocalSandboxConfig
from benchsmith.setup.engine import SetupEngine, SetupOptions
from benchsmith.setup.sources.commands import is_non_test_job

from .conftest import PIN_DATE

PYPROJECT = """
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{name}"
version = "0.1.0"
requires-python = ">=3.8"
[project.optional-dependencies]
test = ["pytest"]
"""

WORKFLOW = """
jobs:
  tests:
    steps:
      - run: pip install -e .[test]
      - run: pip install git+https://github.com/acme/refdata
      - run: pip install git+https://git.example.invalid/acme/gone.git
      - run: pytest tests
  docs:
    steps:
      - run: pip install git+https://github.com/acme/theme
"""
# a workflow that runs another project's tests against this one: not this project's environment
DOWNSTREAM = """
name: Downstream tests
jobs:
  tests:
    steps:
      - run: pip install git+https://github.com/acme/theme
"""

TESTS = """
import refdata


def test_reference_values_of_the_date():
    assert refdata.VALUES[:3] == [1, 2, 3]
"""


def test_hosted_requirements_are_told_from_other_lines() -> None:
    assert hosted("git+https://github.com/pydicom/pydicom-data") == ("github.com", "pydicom", "pydicom-data", None)
    assert hosted("name @ git+https://gitlab.com/o/n.git@v1.2#egg=name") == ("gitlab.com", "o", "n", "v1.2")
    assert hosted("git+ssh://git@github.com/o/n.git") == ("github.com", "o", "n", None)
    assert hosted("pydicom-data>=1") is None and hosted("https://files.example/x.tar.gz") is None
    assert vendored_in([f"uv pip install -e . ./{DEPS_DIR}/o+n.x-0123456789ab pytest"]) == [("o", "n.x", "0123456789ab")]
    assert [is_non_test_job(n) for n in ("build", "tests (3.8)", "test-core-only", "Build docs",
                                         "pr-type-lint-spell", "benchmarks", "Publish to PyPI",
                                         "downstream", "Check development branches of dependencies")
            ] == [False, False, False, True, True, True, True, True, True]


def _mirror(repo: Path, mirrors: Path, slug: str) -> Path:
    target = mirrors / slug / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(target)], check=True)
    return target


@pytest.mark.slow
def test_a_ci_jobs_git_package_comes_from_its_mirror_at_the_date(make_repo, tmp_path: Path) -> None:
    refdata = make_repo("refdata", {"pyproject.toml": PYPROJECT.format(name="refdata"),
                                    "refdata/__init__.py": "VALUES = [1, 2, 3]\n"})
    before = subprocess.run(["git", "rev-parse", "HEAD"], cwd=refdata.path, capture_output=True,
                            text=True, check=True).stdout.strip()
    after = refdata.commit({"refdata/__init__.py": "VALUES = [1, 2, 3, 4]\n"}, "later data",
                           date="2023-09-01T12:00:00+00:00")
    theme = make_repo("theme", {"pyproject.toml": PYPROJECT.format(name="theme"), "theme/__init__.py": ""})
    project = make_repo("tool", {"pyproject.toml": PYPROJECT.format(name="tool"), "tool/__init__.py": "",
                                 "tests/test_data.py": TESTS, ".github/workflows/ci.yml": WORKFLOW,
                                 ".github/workflows/downstream.yml": DOWNSTREAM})
    mirrors = tmp_path / "mirrors"
    for slug, repo in (("acme+refdata", refdata), ("acme+theme", theme), ("acme+tool", project)):
        _mirror(repo.path, mirrors, slug)
    options = SetupOptions(sandbox=LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")))
    record = SetupEngine(options).setup(str(mirrors / "acme+tool" / "repo"), on_date=PIN_DATE)

    assert record.status == "validated", record.failure_reason
    assert record.tests.PASSED == 1
    wanted = f"./{DEPS_DIR}/acme+refdata-{before[:12]}"
    assert record.plan.vendored == [wanted]  # not the docs or downstream jobs' theme
    assert any(wanted in command for command in record.install)
    assert any("leave out git+https://git.example.invalid/acme/gone.git" in n for n in record.plan.notes)

    # Any later checkout of the plan (an environment, an instance) gets the same source from the
    # install commands alone, and git does not see it.
    checkout = resolve(str(mirrors / "acme+tool" / "repo"), on_date=PIN_DATE)
    sandbox = prepare_sandbox(options.sandbox, checkout, record.plan.python, record.install,
                              record.plan.exclude_newer, timeout=600)
    try:
        run = sandbox.exec("python -c 'import refdata; print(refdata.VALUES)' && git status --porcelain",
                           timeout=60)
        assert run.ok and run.output.startswith("[1, 2, 3]\n") and DEPS_DIR not in run.output, run.output
    finally:
        sandbox.close()

    # The plan reused at a later date (reference database) takes the source of that date.
    later = SetupEngine(options).setup(str(mirrors / "acme+tool" / "repo"), on_date="2023-10-01")
    assert later.status == "validated" and later.iterations[0].origin.startswith("reference")
    assert later.plan.vendored == [f"./{DEPS_DIR}/acme+refdata-{after[:12]}"]

    # Without the mirror the source cannot be had: the package is left out, and said so.
    subprocess.run(["rm", "-rf", str(mirrors / "acme+refdata")], check=True)
    again = SetupEngine(options).setup(str(mirrors / "acme+tool" / "repo"), on_date=PIN_DATE)
    assert again.plan.vendored == [] and any(
        "leave out git+https://github.com/acme/refdata" in n for n in again.plan.notes)
