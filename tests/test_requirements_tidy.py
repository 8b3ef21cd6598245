"""Requirement sets that a modern resolver rejects are tidied, line by line, with a note each."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsmith.core import ExecResult, Plan
from benchsmith.setup.diagnose import diagnose_install
from benchsmith.setup.requirements_tidy import tidy_line, tidy_requirements

from .conftest import PIN_DATE


@pytest.mark.parametrize(("line", "project", "expected"), [
    ("sphinx @ git+https://github.com/sphinx-doc/sphinx", "x", "sphinx @ git+https://github.com/sphinx-doc/sphinx"),
    ("PyYAML>=5.1.*", None, "PyYAML>=5.1"),
    ("requests~=2.2.*", None, "requests~=2.2"),
    ("pytest==7.*", None, "pytest==7.*"),  # == and != take wildcards: left alone
    ("-e git+https://github.com/foo/bar.git#egg=bar", None, "bar"),
    ("sphinx @ git+https://github.com/sphinx-doc/sphinx", None, "sphinx"),
    ("https://github.com/nyurik/py-ascii-graph/archive/refs/heads/fix.zip", None, "py-ascii-graph"),
    ("https://example.invalid/archive/main.zip", None, None),
    ("-e git+https://github.com/pallets/click@8.1#egg=click", "click", None),
    ("Click==8.1.3", "click", None),
    ("not a requirement !!", None, None),
])
def test_tidy_line(line: str, project: str | None, expected: str | None) -> None:
    tidied, note = tidy_line(line, project, convert_urls=project is None)
    assert tidied == expected
    assert (note is None) == (tidied == line)


def test_conflicting_pins_keep_the_first_source_and_clean_files_stay_files(tmp_path: Path) -> None:
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "tests.txt").write_text("sqlalchemy>=1.3,<1.4\npytest\n")
    (tmp_path / "requirements" / "min.txt").write_text("sqlalchemy>=1.2,<1.3\npython-dotenv==0.20.0\n")
    (tmp_path / "requirements" / "dev.txt").write_text("-r tests.txt\nclick==8.1.3\nPyYAML>=5.1.*\n")
    plan = Plan(python="3.11", exclude_newer="2023-06-01T00:00:00Z", packages=["pytest", "mock"],
                requirement_files=["requirements/tests.txt", "requirements/min.txt",
                                   "requirements/dev.txt"])
    notes = tidy_requirements(plan, tmp_path, "click")
    assert plan.requirement_files == ["requirements/tests.txt"]
    assert plan.packages == ["mock", "python-dotenv==0.20.0", "PyYAML>=5.1"]
    assert any("normalise PyYAML>=5.1.* -> PyYAML>=5.1" in n for n in notes)
    assert any("click==8.1.3" in n and "the project itself" in n for n in notes)
    assert any("drop sqlalchemy>=1.2,<1.3: sqlalchemy>=1.3,<1.4 comes first" in n for n in notes)


def _failed(output: str) -> ExecResult:
    return ExecResult(command="uv pip install", returncode=2, output=output)


def test_uv_rejections_are_diagnosed_with_the_file() -> None:
    legacy = diagnose_install(_failed(
        "error: Couldn't parse requirement in `requirements/dev.txt` at position 0\n"
        "  cause: Operator >= cannot be used with a wildcard version specifier\n"
        "         PyYAML>=5.1.*\n"), [])
    assert legacy.kind == "invalid_requirement" and legacy.facts["files"] == ["requirements/dev.txt"]
    editable = diagnose_install(_failed(
        "error: Unsupported editable requirement in `r.txt` at line 1: `git+https://x/y.git`\n"
        "  cause: Git sources cannot be editable\n"), [])
    assert editable.kind == "invalid_requirement"
    vcs = diagnose_install(_failed(
        "error: Failed to download and build `sphinx @ git+https://github.com/sphinx-doc/sphinx`\n"
        "  cause: Git operation failed\n         fatal: unable to access "
        "'https://github.com/sphinx-doc/sphinx/': Could not resolve host: github.com\n"), [])
    assert vcs.kind == "direct_url_unreachable"
    assert vcs.facts["urls"] == ["git+https://github.com/sphinx-doc/sphinx"]


PYPROJECT = """
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "tidycalc"
version = "0.1.0"
"""
DEV_REQUIREMENTS = """
tidycalc==0.1.0
pytest
PyYAML>=5.1.*
-e git+https://github.com/benjaminp/six.git#egg=six
iniconfig @ git+https://github.com/pytest-dev/iniconfig
"""
TESTS = """
import six
import yaml
from tidycalc import double


def test_double():
    assert double(2) == 4 and six.PY3 and yaml.safe_load("a: 1") == {"a": 1}
"""


@pytest.mark.slow
def test_a_requirement_file_pip_accepted_installs_with_uv(make_repo, tmp_path: Path) -> None:
    from .test_setup_engine import engine

    repo = make_repo("tidycalc", {"pyproject.toml": PYPROJECT, "requirements-dev.txt": DEV_REQUIREMENTS,
                                  "src/tidycalc/__init__.py": "def double(x):\n    return 2 * x\n",
                                  "tests/test_double.py": TESTS})
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert record.plan is not None and "requirements-dev.txt" not in record.plan.requirement_files
    assert {"PyYAML>=5.1", "six", "iniconfig"} <= set(record.plan.packages)
    assert not any("tidycalc" in p for p in record.plan.packages)
    # The planner tidies what uv always rejects; the unreachable host costs one round here.
    first = record.iterations[0]
    assert first.diagnosis is not None and first.diagnosis.kind == "direct_url_unreachable"
    assert len(record.iterations) == 2


YANKED = """error: No solution found when resolving dependencies
  cause: Because types-pkg-resources<=0.1.2 was yanked (reason: Use types-setuptools instead) and only the following versions of types-pkg-resources are available:
             types-pkg-resources<=0.1.2
             types-pkg-resources==0.1.3
         we can conclude that all of:
             types-pkg-resources<0.1.3
             types-pkg-resources>0.1.3
          cannot be used.
         And because types-pkg-resources==0.1.3 was yanked (reason: Use types-setuptools instead) and you require types-pkg-resources, we can conclude that your requirements are unsatisfiable.
"""


def test_a_requirement_with_only_yanked_releases_is_left_out(tmp_path: Path) -> None:
    from benchsmith.setup.context_model import RepoContext
    from benchsmith.setup.repair import RuleRepairer

    diagnosis = diagnose_install(_failed(YANKED), [])
    assert diagnosis.kind == "yanked" and diagnosis.facts["packages"] == ["types-pkg-resources"]
    (tmp_path / "requirements_dev.txt").write_text("pytest\ntypes-pkg-resources\nhypothesis\n")
    plan = Plan(python="3.9", exclude_newer="2021-10-13T00:00:00Z",
                requirement_files=["requirements_dev.txt"], packages=["requests"])
    context = RepoContext(has_python_project=True, repo_root=str(tmp_path))
    fixed, what = RuleRepairer().repair(plan, diagnosis, context) or (None, "")
    assert fixed is not None and fixed.requirement_files == []
    assert fixed.packages == ["requests", "pytest", "hypothesis"]
    assert "types-pkg-resources" in what
