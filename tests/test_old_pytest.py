"""Suites of 2014-2015 run with the pytest of their date on Python 2.7: pytest before 2.7 names
tests "path@line::name" and ignores PYTEST_ADDOPTS (no JUnit report), and pytest before 3.5
has no --deselect. A hung test is still left out, and the passes still count (real installs)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from benchsmith.core import Plan
from benchsmith.harness.pytest_compat import adapt, without_deselect
from benchsmith.harness.render import render_test
from benchsmith.harness.testrun import run_tests
from benchsmith.sandbox import LocalSandboxConfig, make_sandbox

TESTS = """import time
import unittest


class CalcTestCase(unittest.TestCase):
    def test_add(self):
        self.assertEqual(1 + 1, 2)

    def test_endless(self):
        time.sleep(600)

    def test_endless_twin(self):
        self.assertTrue(True)


def test_after():
    assert True


def test_fails():
    assert False
"""
STALL_S = 8


@pytest.mark.slow
@pytest.mark.parametrize("pins", ["pytest==2.5.2 py==1.4.20", "pytest==2.6.0 py==1.4.22",
                                  "pytest==2.7.2 py==1.4.30"])
def test_a_hung_test_is_left_out_and_passes_count_with_the_pytest_of_2014(
        tmp_path: Path, pins: str) -> None:
    project = tmp_path / "old"
    project.mkdir()
    (project / "test_calc.py").write_text(TESTS)
    sandbox = make_sandbox(LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")))
    try:
        sandbox.upload(project, sandbox.workdir)
        sandbox.setup_python("2.7")
        installed = sandbox.exec(f"python -m pip install --quiet {pins}", timeout=300)
        assert installed.ok, installed.output
        # ini values set with -o (nose-era discovery), which pytest before 3.0 does not know
        plan = Plan(python="2.7", exclude_newer="2015-01-01T00:00:00Z", test_args=["test_calc.py"],
                    ini_overrides={"python_files": "test*.py *_test*.py"})

        def commands(left_out: list[str]) -> list[str]:
            return render_test(plan.model_copy(update={"deselect": left_out}))

        run = run_tests(sandbox, commands, "pytest", timeout=300, stall_timeout=STALL_S)
    finally:
        sandbox.close()
    assert run.hung == ["test_calc.py::CalcTestCase::test_endless"], run.commands
    assert len(run.commands) == 2 and not run.infrastructure and not run.unconfirmed
    assert run.passed("test_calc.py::CalcTestCase::test_add") and run.passed("test_calc.py::test_after")
    assert not run.passed("test_calc.py::test_fails")
    # the rerun leaves the hung test out by keyword, which takes its namesakes along
    assert "test_calc.py::CalcTestCase::test_endless_twin" not in run.statuses
    assert sorted(run.statuses) == ["test_calc.py::CalcTestCase::test_add",
                                    "test_calc.py::CalcTestCase::test_endless",
                                    "test_calc.py::test_after", "test_calc.py::test_fails"]


def test_ini_values_are_left_out_for_pytest_before_3() -> None:
    command = ("python -m pytest -rap -v -o 'python_files=test*.py *_test*.py' "
               "--override-ini=python_functions=test -o addopts= tests")
    assert adapt(command, (2, 9)) == "python -m pytest -rap -v tests"
    assert adapt(command, (3, 0)) == command and adapt(command, None) == command


def test_deselected_tests_become_one_keyword_expression() -> None:
    command = ("eval \"$(sh start)\" && python -m pytest -rap -v test_a.py --deselect "
               "test_a.py::T::test_x --deselect 'test_a.py::test_p[a b]' --ignore=test_b.py")
    adapted = without_deselect(command)
    assert adapted == ("eval \"$(sh start)\" && python -m pytest -rap -v test_a.py "
                       "--ignore=test_b.py -k 'not test_x and not test_p'")
    assert shlex.split(adapted)[-1] == "not test_x and not test_p"
