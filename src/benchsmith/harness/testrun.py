"""Run test commands in a sandbox, parse per-test statuses, and tell infrastructure failures
(the command did not run, or its results contradict its exit status) from test failures."""

from __future__ import annotations

import re
import shlex
import uuid
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, Field

from benchsmith.core import (
    CHECKOUT_PATH,
    FAILING,
    PASSING,
    CommandRun,
    ExecResult,
    Sandbox,
    TestResult,
    TestStatus,
    output_tail,
)
from benchsmith.harness.collection_probe import slow_modules, waits_on_network
from benchsmith.harness.guard import RECORD_DIR, Findings, guard_env, install_script, read_findings
from benchsmith.harness.names import status_of
from benchsmith.harness.node_render import REPORT_ENV, REPORT_FILE_FORMATS
from benchsmith.harness.pytest_compat import (
    VERSION_PRINT,
    adapt,
    printed_version,
    reads_report_option,
)
from benchsmith.parsing import network_failures, parse_test_output, running_test
from benchsmith.parsing.browsers import browser_missing
from benchsmith.parsing.junit import REPORT_DIR, confirm, junit_statuses, report_options
from benchsmith.parsing.node_reports import parse_node_report

# A run stopped for stalling prints where it was stuck (sandboxes send SIGABRT before they
# kill it), which names a test module whose collection hangs. Every test command gets it.
STALL_TRACEBACK_ENV = {"PYTHONFAULTHANDLER": "1", "BENCHSMITH_STALL_DUMP": "1"}
# pytest before 7 captures file descriptor 2 while it collects, and the fault handler that
# PYTHONFAULTHANDLER enables writes to descriptor 2: a collection that stalls would leave its
# traceback in pytest's capture file, which dies with the process. A .pth file in the test
# environment (inactive without BENCHSMITH_STALL_DUMP) points the fault handler at a copy of
# descriptor 2 taken when the interpreter starts, before any capture. Python 3 only.
_STALL_DUMP_PTH = ("import os; exec(\"try:\\n import faulthandler\\n if os.environ.get('BENCHSMITH_STALL_DUMP'): "
                   "faulthandler.enable(file=os.fdopen(os.dup(2), 'w'))\\nexcept Exception:\\n pass\")\n")
_INSTALL_STALL_DUMP = ("import os, sys, sysconfig\n"
                       "if sys.version_info >= (3, 3):\n"
                       "    path = os.path.join(sysconfig.get_paths()['purelib'], 'benchsmith_stall_dump.pth')\n"
                       f"    open(path, 'w').write({_STALL_DUMP_PTH!r})\n")
# Fixed for every test run so that results do not depend on hash seeds or the clock's zone.
DETERMINISTIC_ENV = {"PYTHONHASHSEED": "0", "TZ": "UTC", **STALL_TRACEBACK_ENV}
# pytest: 3 internal error, 4 usage error; shells: 126 not executable, 127 command not found
_DID_NOT_RUN = {3, 4, 126, 127}
_EXECUTED = PASSING | FAILING
MAX_HUNG = 3  # hung tests left out, one rerun each, before a run gives up on its suite
# Stalls in network code (test data fetched and retried) have a budget of their own: a suite
# run offline may have several, and each says the same thing about the environment.
MAX_NETWORK_STALLS = 5
# A test process killed by a signal (a C extension that aborts or crashes) has Python's fault
# handler name where it was; that test is left out like a hung one.
_CRASH = re.compile(r"Fatal Python error: \w")
# Renders the test commands with the given tests left out (to rerun without a hung test).
Render = Callable[[list[str]], list[str]]
_V = TypeVar("_V")


class TestRun(BaseModel):
    """Statuses of every test the commands reported, and whether the run itself was sound."""

    __test__ = False

    statuses: dict[str, TestStatus] = Field(default_factory=dict)
    commands: list[CommandRun] = Field(default_factory=list)
    duration_s: float = 0.0
    timed_out: bool = False
    infrastructure: str | None = None  # why the run cannot be trusted, if it cannot
    log: str | None = None  # path of the full output on the host
    log_tail: str = ""  # the last lines of the output
    stalled: bool = False  # a command's output stopped growing and it was killed
    hung: list[str] = Field(default_factory=list)  # tests running when that happened (FAILED)
    crashed: list[str] = Field(default_factory=list)  # those of `hung` that killed the process
    # pytest: passes on the console that pytest's own report does not confirm (counted FAILED)
    unconfirmed: list[str] = Field(default_factory=list)
    report_missing: bool = False  # a pytest command wrote no report (it did not finish)
    # what the runner-integrity guard found (:mod:`~benchsmith.harness.guard`): the passes of
    # the run, or of the tests named, count as failures
    tampered: list[str] = Field(default_factory=list)
    needs_network: list[str] = Field(default_factory=list)  # failed trying to reach another host
    # failed because the browser a test library drives is not installed (Node runners)
    needs_browser: list[str] = Field(default_factory=list)
    # a docstring line the runner printed in place of a test's name -> the tests it stands for
    described: dict[str, list[str]] = Field(default_factory=dict)
    # limits the commands reached and what the sandbox had to stop (ExecResult.contained)
    contained: list[str] = Field(default_factory=list)

    def passed(self, test: str) -> bool:
        """True if `test` passed (or xfailed); missing and skipped tests count as failing.
        A name another tool wrote (a published label) is read by :mod:`~benchsmith.harness.names`."""
        return status_of(test, self.statuses, self.described) in PASSING


def run_tests(sandbox: Sandbox, commands: list[str] | Render, runner: str, timeout: float,
              log: Path | None = None, stall_timeout: float | None = None,
              env: dict[str, str] | None = None, report_format: str | None = None) -> TestRun:
    """Run the test commands one after the other with a fixed hash seed and time zone.

    This is the one place where test outcomes and exit statuses are read: setup validation,
    `build`, `verify`, `prepare` and `evaluate` all run their tests through it. `env` is added
    to every command's environment.

    With `stall_timeout`, a command whose output stops growing is killed; the test it was
    running is recorded as hung (and FAILED), and when `commands` can be rendered again
    (a :data:`Render`), the run is repeated without it: a hang costs the stall limit plus
    one rerun, never the whole timeout. A test that kills the test process (a signal, with
    Python's fault handler naming it) is left out the same way and also listed as crashed.

    pytest commands also write pytest's JUnit report outside the repository; a pass on the
    console counts only when that report confirms it, so code under test cannot print its
    way to a pass (:mod:`benchsmith.parsing.junit`). Every command runs under the
    runner-integrity guard (:mod:`benchsmith.harness.guard`): when it finds that the code
    under test replaced the runner's reporting or rewrote the report, no pass counts.

    Node runners (`runner` "node") are read from their report in `report_format`
    (:mod:`benchsmith.harness.node_render`): each command gets a fresh ``$BENCHSMITH_REPORT``
    outside the checkout, read afterwards (TAP and console formats: the output).
    """
    return run_tests_with_results(sandbox, commands, runner, timeout, log, stall_timeout, env,
                                  report_format)[0]


# The pytest version (None: no pytest there) of each sandbox whose guard was installed by
# :func:`install_guard`: its later runs need no probe and install the guard again in their
# first command's own exec.
_PYTEST: weakref.WeakKeyDictionary[Sandbox, tuple[int, int] | None] = weakref.WeakKeyDictionary()
_INSTALL = _INSTALL_STALL_DUMP + install_script()


def install_guard(sandbox: Sandbox) -> tuple[int, int] | None:
    """Install the runner-integrity guard and the stall dump in the sandbox's Python and read
    pytest's version there, in one process; the version is remembered for the sandbox."""
    result = sandbox.exec(f"python -c {shlex.quote(_INSTALL + VERSION_PRINT)} 2>/dev/null",
                          timeout=120)
    _PYTEST[sandbox] = version = printed_version(result)
    return version


def run_tests_with_results(sandbox: Sandbox, commands: list[str] | Render, runner: str,
                           timeout: float, log: Path | None = None,
                           stall_timeout: float | None = None, env: dict[str, str] | None = None,
                           report_format: str | None = None) -> tuple[TestRun, list[ExecResult]]:
    """:func:`run_tests`, plus the last attempt's command results in full (for a caller that
    diagnoses them, as setup does)."""
    render: Render = commands if callable(commands) else (lambda deselect: list(commands))
    run = TestRun()
    results: list[ExecResult] = []
    outputs: list[str] = []
    blocked: list[str] = []  # modules (their import) and tests found waiting on the network
    stalls = {"hung": 0, "network": 0}
    # the guard installed (and pytest's version read) before anything runs: in a process of
    # its own where the version is not known yet, else in the first command's exec
    probed = runner == "pytest" and sandbox not in _PYTEST
    version = install_guard(sandbox) if probed else _PYTEST.get(sandbox)
    install = "" if probed else f"python -c {shlex.quote(_INSTALL)} 2>/dev/null; "
    forged: set[str] = set()  # tests a finding fails (all, for "*")
    finished: dict[str, TestStatus] = {}  # what attempts that hung had finished before the hang
    while True:
        finished.update(run.statuses)
        run.statuses, run.unconfirmed, run.report_missing, hung = {}, [], False, None
        run.needs_network, results = [], []
        for command in (adapt(c, version) for c in render(run.hung)):
            report = (f"{REPORT_DIR}/{uuid.uuid4().hex}.xml"
                      if runner == "pytest" and reads_report_option(version) else None)
            record = f"{RECORD_DIR}/{uuid.uuid4().hex}.jsonl"
            node_report = f"{REPORT_DIR}/{uuid.uuid4().hex}.node" if report_format else None
            command_env = (env or {}) | DETERMINISTIC_ENV | guard_env(record, sandbox.workdir) | (
                {"PYTEST_ADDOPTS": report_options(report)} if report else {}) | (
                {REPORT_ENV: node_report} if node_report else {})
            result = sandbox.exec(install + command, env=command_env, timeout=timeout,
                                  stall_timeout=stall_timeout, sweep=True)
            install = ""
            results.append(result)
            run.contained += [line for line in result.contained if line not in run.contained]
            if result.sandbox_stopped:  # nothing more runs there, its report included
                outputs.append(f"$ {command}\n{result.output}\n")
                break
            browserless: list[str] = []
            parsed = (node_results(sandbox, report_format, node_report, result.output, browserless)
                      if report_format and node_report else parse_test_output(result.output, runner))
            run.needs_browser += [name for name in browserless if name not in run.needs_browser]
            console = {t.name: t.status for t in parsed}
            for test in parsed:
                if test.description:
                    run.described.setdefault(test.description, [])
                    if test.name not in run.described[test.description]:
                        run.described[test.description].append(test.name)
            tests, written = console, False
            unconfirmed: list[str] = []
            junit: bytes | None = None
            if report is not None:
                tests, unconfirmed, junit = _confirmed(sandbox, report, console)
                written = junit is not None
                run.unconfirmed += unconfirmed
                run.report_missing = run.report_missing or (not written and bool(console))
            findings = read_findings(sandbox, record, report, junit)  # both files removed
            forged |= _note_findings(run, findings, outputs)
            tests = portable_names(tests, sandbox.workdir)
            run.statuses.update(tests)
            offline = {} if report_format else portable_names(
                dict.fromkeys(network_failures(result.output, runner)), sandbox.workdir)
            run.needs_network.extend(sorted(offline.keys() & tests.keys()))
            run.commands.append(CommandRun(command=command, returncode=result.returncode,
                                           timed_out=result.timed_out, phase="test",
                                           duration_s=result.duration_s, tests=len(tests),
                                           log_tail=output_tail(result.output, lines=30, width=2_000)))
            run.duration_s = round(run.duration_s + result.duration_s, 3)
            run.timed_out = run.timed_out or result.timed_out
            run.log_tail = output_tail(result.output, lines=20, width=10_000)
            outputs.append(f"$ {command}\n{result.output}\n[exit status {result.returncode}]\n")
            if unconfirmed:
                outputs.append(f"[benchsmith: {len(unconfirmed)} pass(es) on the console not in "
                               f"pytest's report, counted as failing: {', '.join(unconfirmed[:5])}]\n")
            if result.stalled or crashed(result):
                run.stalled = run.stalled or result.stalled
                hung = None if report_format else running_test(result.output, runner)
                if hung is not None and not result.stalled and hung not in run.hung:
                    run.crashed.append(hung)
                if result.stalled and hung and waits_on_network(result.output):
                    module = "::" not in hung and hung.endswith(".py")
                    slow = slow_modules(sandbox, (env or {}) | DETERMINISTIC_ENV, [*run.hung, hung]) \
                        if module and callable(commands) else []
                    blocked += [m for m in [hung, *slow] if m not in blocked]
                    outputs.append(f"[benchsmith: {hung} waits on the network; so do {len(slow)} "
                                   f"more modules, left out together: {', '.join(slow[:5])}]\n")
                break
            if not result.contained:  # a limit the command reached is its own doing
                run.infrastructure = run.infrastructure or infrastructure_problem(
                    # without pytest's report the exit status is judged against the console
                    result.returncode, result.timed_out, tests if written else console,
                    result.output, runner)
        if hung is None or hung in run.hung or (results and results[-1].sandbox_stopped):
            break
        run.hung += [t for t in dict.fromkeys([hung, *blocked]) if t not in run.hung]
        if not callable(commands):
            break  # a fixed command cannot leave the test out: the partial results stand
        stalls["network" if hung in blocked else "hung"] += 1
        if stalls["hung"] > MAX_HUNG or stalls["network"] > MAX_NETWORK_STALLS:
            break
    # a test the rerun could not name apart from a hung one (a bin/test keyword is matched as a
    # substring: test_sin with test_sin_cos) keeps what it did before the hang
    for name, status in finished.items():
        if name not in run.statuses and not any(name == h or name.startswith(f"{h}::") for h in run.hung):
            run.statuses[name] = status
    run.statuses.update(dict.fromkeys(run.hung, TestStatus.FAILED))
    for name, status in run.statuses.items():
        if status in PASSING and ("*" in forged or name in forged):
            run.statuses[name] = TestStatus.FAILED
    run.needs_network += [m for m in blocked if m not in run.needs_network]
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("".join(outputs), encoding="utf-8", errors="replace")
        run.log = str(log)
    return run, results


def node_results(sandbox: Sandbox, report_format: str, report: str, output: str,
                 browserless: list[str] | None = None) -> list[TestResult]:
    """Per-test results of a Node runner's command: its report file (removed once read), or
    its output for the formats written there; IDs relative to the checkout. The tests that
    failed on a browser that is not installed are added to `browserless`."""
    text = output
    if report_format in REPORT_FILE_FORMATS:
        try:
            text = sandbox.read_file(report).decode("utf-8", errors="replace")
        except OSError:
            return []
        sandbox.exec(f"rm -f {shlex.quote(report)} {shlex.quote(report + '.reporter.cjs')}",
                     timeout=60)
    if browserless is not None:
        browserless += browser_missing(report_format, text, root=sandbox.workdir)
    try:
        return parse_node_report(report_format, text, root=sandbox.workdir)
    except ValueError:  # a report cut short (the runner was killed while writing it)
        return []


def portable_names(tests: dict[str, _V], workdir: str) -> dict[str, _V]:
    """`tests` with the sandbox's checkout path in a test ID (a parametrized path) spelled
    :data:`~benchsmith.core.CHECKOUT_PATH`: a local sandbox's path differs from run to run."""
    if workdir == CHECKOUT_PATH or not any(workdir in name for name in tests):
        return tests
    return {name.replace(workdir, CHECKOUT_PATH): status for name, status in tests.items()}


def crashed(result: ExecResult) -> bool:
    """True if the command's Python died from a signal (SIGABRT, SIGSEGV, ...), not by
    exiting: a negative status, or a shell's 128 + signal, and the fault handler's report."""
    died = result.returncode < 0 or result.returncode > 128
    return died and not result.timed_out and _CRASH.search(result.output) is not None


def _confirmed(sandbox: Sandbox, report: str, tests: dict[str, TestStatus]
               ) -> tuple[dict[str, TestStatus], list[str], bytes | None]:
    """`tests` as pytest's report at `report` confirms them (see :mod:`benchsmith.parsing.junit`),
    the console passes it did not confirm, and the report (None when it was not there)."""
    try:
        junit = sandbox.read_file(report)
        written = junit_statuses(junit)
    except (OSError, ValueError):
        return (*confirm(tests, None), None)
    return (*confirm(tests, written), junit)


def _note_findings(run: TestRun, findings: Findings, outputs: list[str]) -> set[str]:
    """Add the guard's findings to `run` and the log; the tests they fail ("*": all)."""
    for reason in findings.reasons():
        if reason not in run.tampered:
            run.tampered.append(reason)
            outputs.append(f"[benchsmith: {reason}; counted as failing]\n")
    return {"*"} if findings.run_failed else set(findings.xfailed)


def infrastructure_problem(returncode: int, timed_out: bool, tests: dict[str, TestStatus],
                           output: str, runner: str) -> str | None:
    """Why a command's result is not a verdict on the code, or None when it is one."""
    if timed_out:
        return None  # a hang is charged to the code under test, as in SWE-bench
    failing = sorted(name for name, status in tests.items() if status in FAILING)
    if not tests:
        if returncode in _DID_NOT_RUN or "command not found" in output:
            return f"the test command did not run (exit status {returncode}): {output_tail(output)}"
        if returncode == 2 and runner == "pytest" and "error" in output.lower():
            return None  # collection errors: the code under test does not import
        return ("the test command reported no test results "
                f"(exit status {returncode}): {output_tail(output)}")
    if returncode == 0 and failing:
        return f"exit status 0 but {len(failing)} test(s) failed, e.g. {failing[0]}"
    if returncode == 1 and not failing:
        return "exit status 1 but no test failed: the output was not fully understood"
    return None


class TestCounts(BaseModel):
    """Tests per status, and the per-test list."""

    __test__ = False

    PASSED: int = 0
    FAILED: int = 0
    ERROR: int = 0
    SKIPPED: int = 0
    XFAIL: int = 0
    XPASS: int = 0
    tests: list[TestResult] = Field(default_factory=list)


def count_tests(tests: list[TestResult]) -> TestCounts:
    """Tally per-test results by status."""
    counts = TestCounts(tests=tests)
    for test in tests:
        setattr(counts, test.status.value, getattr(counts, test.status.value) + 1)
    return counts


def pass_rate(counts: TestCounts) -> float | None:
    """Passing share of executed tests (skips excluded); None when nothing ran."""
    executed = sum(getattr(counts, s.value) for s in _EXECUTED)
    if executed == 0:
        return None
    return round(sum(getattr(counts, s.value) for s in PASSING) / executed, 4)
