"""The runner-integrity guard is installed before every test run: for pytest, once in a process
of its own that also reads pytest's version (remembered for the sandbox), afterwards in the
first test command's own exec, so a test that removed it in one run does not escape it in the
next."""

from __future__ import annotations

from pathlib import Path

from benchsmith.core import ExecResult
from benchsmith.harness.testrun import run_tests
from benchsmith.sandbox import LocalSandboxConfig, make_sandbox

from .test_evaluate_tamper import REPLACE_FROM_ITEM_AND_CALL

REMOVES_THE_GUARD = """import os
import sysconfig


def test_one():
    site = sysconfig.get_paths()["purelib"]
    for name in ("_benchsmith_guard.py", "benchsmith_guard.pth"):
        os.remove(os.path.join(site, name))
"""
# a test that fails, importing project code that makes pytest report every test as passed
FAILS_WITH_FORGED_REPORTS = """import forged  # noqa: F401


def test_one():
    assert False
"""


def test_the_guard_is_installed_again_in_each_run_without_a_probe_of_its_own(tmp_path: Path) -> None:
    sandbox = make_sandbox(LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")))
    commands: list[str] = []
    run = sandbox.exec

    def counted(command: str, **kwargs: object) -> ExecResult:
        commands.append(command)
        return run(command, **kwargs)  # type: ignore[arg-type]

    try:
        sandbox.setup_python("3.11")
        assert sandbox.exec("uv pip install 'pytest==8.3.3'",
                            env={"UV_EXCLUDE_NEWER": "2024-10-01T00:00:00Z"}).ok
        sandbox.exec = counted  # type: ignore[method-assign]

        def tests(source: str) -> tuple[object, list[str]]:
            commands.clear()
            sandbox.write_file("test_t.py", source.encode())
            result = run_tests(sandbox, ["python -m pytest -rA -v -p no:cacheprovider test_t.py"],
                               "pytest", 120)
            probes = [c for c in commands if "_benchsmith_guard" in c and "test_t.py" not in c]
            installed = [c for c in commands if "_benchsmith_guard" in c and "test_t.py" in c]
            return result, [*(["probe"] * len(probes)), *(["in the command"] * len(installed))]

        result, how = tests(REMOVES_THE_GUARD)
        assert result.passed("test_t.py::test_one") and how == ["probe"]
        sandbox.write_file("forged.py", REPLACE_FROM_ITEM_AND_CALL.encode())
        result, how = tests(FAILS_WITH_FORGED_REPORTS)
        assert how == ["in the command"]
        assert not result.passed("test_t.py::test_one")
        assert any("replaced pytest's reporting" in line for line in result.tampered), result.tampered
    finally:
        sandbox.close()

FLOODS = """import os
import unittest


class T(unittest.TestCase):
    def test_one(self):
        with open(os.environ["BENCHSMITH_GUARD"], "a") as record:
            record.write("x" * 200_000 + "\\n")
"""


def test_a_record_written_past_the_output_limit_fails_the_run(tmp_path: Path) -> None:
    """The guard's record is read as a command's output: code under test that floods it past
    that limit (so that the guard's own lines could be cut) has no pass counted."""
    sandbox = make_sandbox(LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes"),
                                              max_output_bytes=64 * 1024))
    try:
        sandbox.setup_python("3.11")
        sandbox.write_file("test_t.py", FLOODS.encode())
        result = run_tests(sandbox, ["python -m unittest -v test_t"], "unittest", 120)
        assert not result.passed("test_t.T.test_one"), result.statuses
        assert any("record was written past" in line for line in result.tampered), result.tampered
    finally:
        sandbox.close()
