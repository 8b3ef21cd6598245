"""The runner-integrity guard installed ahead (in a container started before it is used): the
next test run there takes it instead of installing it again, once, and only for its runner."""

from __future__ import annotations

from pathlib import Path

from benchsmith.core import ExecResult
from benchsmith.harness.testrun import install_guard, run_tests
from benchsmith.sandbox import LocalSandboxConfig, make_sandbox

TESTS = """import unittest


class T(unittest.TestCase):
    def test_one(self):
        self.assertTrue(True)
"""


def test_a_guard_installed_ahead_serves_the_next_run_of_its_runner_only(tmp_path: Path) -> None:
    sandbox = make_sandbox(LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")))
    commands: list[str] = []
    run = sandbox.exec

    def counted(command: str, **kwargs: object) -> ExecResult:
        commands.append(command)
        return run(command, **kwargs)  # type: ignore[arg-type]

    try:
        sandbox.setup_python("3.11")
        sandbox.write_file("test_t.py", TESTS.encode())
        sandbox.exec = counted  # type: ignore[method-assign]

        def installs(runner: str) -> int:
            commands.clear()
            result = run_tests(sandbox, ["python -m unittest -v test_t"], runner, 120)
            assert result.passed("test_t.T.test_one"), result.statuses
            return sum("_benchsmith_guard" in command for command in commands)

        assert installs("unittest") == 1
        assert install_guard(sandbox, "unittest", ahead=True).ok
        assert installs("unittest") == 0  # taken from the install ahead
        assert installs("unittest") == 1  # once
        install_guard(sandbox, "pytest", ahead=True)
        assert installs("unittest") == 1  # installed ahead for another runner
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
