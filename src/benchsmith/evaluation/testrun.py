"""Run test commands in an environment, parse per-test statuses, and tell infrastructure failures
(the command did not run, or its results contradict its exit status) from test failures."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from benchsmith.core import Sandbox, TestStatus
from benchsmith.mining.harness import DETERMINISTIC_ENV
from benchsmith.parsing import parse_test_output

PASSING = {TestStatus.PASSED.value, TestStatus.XFAIL.value, TestStatus.XPASS.value}
_FAILING = {TestStatus.FAILED.value, TestStatus.ERROR.value}
# pytest: 3 internal error, 4 usage error; shells: 126 not executable, 127 command not found
_DID_NOT_RUN = {3, 4, 126, 127}


class CommandRun(BaseModel):
    """One test command's outcome."""

    command: str
    returncode: int
    timed_out: bool = False
    duration_s: float = 0.0
    tests: int = 0


class TestRun(BaseModel):
    """Statuses of every test the commands reported, and whether the run itself was sound."""

    __test__ = False

    statuses: dict[str, str] = Field(default_factory=dict)
    commands: list[CommandRun] = Field(default_factory=list)
    duration_s: float = 0.0
    timed_out: bool = False
    infrastructure: str | None = None  # why the run cannot be trusted, if it cannot
    log: str | None = None  # path of the full output on the host

    def passed(self, test: str) -> bool:
        """True if `test` passed (or xfailed); missing and skipped tests count as failing."""
        return self.statuses.get(test) in PASSING


def run_tests(sandbox: Sandbox, commands: list[str], runner: str, timeout: float,
              log: Path | None = None) -> TestRun:
    """Run `commands` one after the other with a fixed hash seed and time zone."""
    run = TestRun()
    outputs: list[str] = []
    for command in commands:
        result = sandbox.exec(command, env=DETERMINISTIC_ENV, timeout=timeout)
        tests = {t.name: t.status.value for t in parse_test_output(result.output, runner)}
        run.statuses.update(tests)
        run.commands.append(CommandRun(command=command, returncode=result.returncode,
                                       timed_out=result.timed_out, duration_s=result.duration_s,
                                       tests=len(tests)))
        run.duration_s = round(run.duration_s + result.duration_s, 3)
        run.timed_out = run.timed_out or result.timed_out
        outputs.append(f"$ {command}\n{result.output}\n[exit status {result.returncode}]\n")
        run.infrastructure = run.infrastructure or infrastructure_problem(
            result.returncode, result.timed_out, tests, result.output, runner)
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("".join(outputs), encoding="utf-8", errors="replace")
        run.log = str(log)
    return run


def infrastructure_problem(returncode: int, timed_out: bool, tests: dict[str, str], output: str,
                           runner: str) -> str | None:
    """Why a command's result is not a verdict on the code, or None when it is one."""
    if timed_out:
        return None  # a hang is charged to the code under test, as in SWE-bench
    failing = sorted(name for name, status in tests.items() if status in _FAILING)
    if not tests:
        if returncode in _DID_NOT_RUN or "command not found" in output:
            return f"the test command did not run (exit status {returncode}): {_tail(output)}"
        if returncode == 2 and runner == "pytest" and "error" in output.lower():
            return None  # collection errors: the code under test does not import
        return f"the test command reported no test results (exit status {returncode}): {_tail(output)}"
    if returncode == 0 and failing:
        return f"exit status 0 but {len(failing)} test(s) failed, e.g. {failing[0]}"
    if returncode == 1 and not failing:
        return "exit status 1 but no test failed: the output was not fully understood"
    return None


def _tail(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else "no output"
