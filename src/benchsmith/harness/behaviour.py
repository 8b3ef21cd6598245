"""Run an instance's tests before and after its code patch: FAIL_TO_PASS and the rest."""

from __future__ import annotations

import posixpath
import re
import time
from collections.abc import Callable, Collection
from typing import Literal

from pydantic import BaseModel, Field

from benchsmith.core import CHECKOUT_PATH, ExecResult, Sandbox, TestStatus
from benchsmith.harness.names import named_by
from benchsmith.harness.patches import runnable_test_files
from benchsmith.harness.render import report_format
from benchsmith.harness.rerun import hung_labels_again, rerun_commands
from benchsmith.harness.testrun import TestRun, run_tests
from benchsmith.harness.worktree import PATCH_DIR
from benchsmith.instance import FlakyTest, TestSpec
from benchsmith.parsing import reaches_network
from benchsmith.parsing.python_source import declared_flaky


class Behaviour(BaseModel):
    """Test outcomes before and after the code patch, and what they mean."""

    FAIL_TO_PASS: list[str] = Field(default_factory=list)
    PASS_TO_PASS: list[str] = Field(default_factory=list)
    FAIL_TO_FAIL: list[str] = Field(default_factory=list)
    PASS_TO_FAIL: list[str] = Field(default_factory=list)
    flaky_runs: list[FlakyTest] = Field(default_factory=list)  # in no label list
    # tests whose IDs contain the checkout's absolute path (a parametrized path): another
    # environment names them differently, so they are no label
    unportable: list[str] = Field(default_factory=list)
    before: list[TestRun] = Field(default_factory=list)
    after: list[TestRun] = Field(default_factory=list)
    test_files: list[str] = Field(default_factory=list)
    tests_s: float = 0.0  # time spent in test runs only
    error: str | None = None

    @property
    def error_cause(self) -> Literal["network"] | None:
        """Why the tests gave no results, where their logs say: they tried to reach another
        host (a test module or conftest downloading data while collected)."""
        no_results = self.error and self.after and not any(run.statuses for run in self.after)
        return "network" if no_results and any(reaches_network(run.log_tail) for run in self.after) else None

    @property
    def flaky(self) -> list[str]:
        """The flaky tests' names (the instance's SWE-bench-style `flaky`)."""
        return [test.name for test in self.flaky_runs]


def apply_patch(sandbox: Sandbox, name: str, patch: str) -> ExecResult:
    """Write `patch` next to the checkout and `git apply` it."""
    path = f"{PATCH_DIR}/{name}.patch"
    sandbox.write_file(path, patch.encode())
    return sandbox.exec(f"git apply --whitespace=nowarn {path}", timeout=120)


def classify(before: list[TestRun], after: list[TestRun]) -> Behaviour:
    """FAIL_TO_PASS etc. from repeated runs; tests whose outcome changes between runs are
    flaky, recorded with how many runs they passed on each side."""
    behaviour = Behaviour(before=before, after=after)
    names = list(dict.fromkeys(n for run in before + after for n in run.statuses))
    for name in names:
        if ".py:" in name and "::" not in name:
            continue  # pytest reports skips by location, not by test: not a test id
        was = {run.passed(name) for run in before}
        now = {run.passed(name) for run in after}
        if len(was) > 1 or len(now) > 1:
            behaviour.flaky_runs.append(_counted(name, before, after))
            continue
        if after[0].statuses.get(name) == TestStatus.SKIPPED:
            continue
        key = {(False, True): "FAIL_TO_PASS", (True, True): "PASS_TO_PASS",
               (False, False): "FAIL_TO_FAIL", (True, False): "PASS_TO_FAIL"}[(was.pop(), now.pop())]
        getattr(behaviour, key).append(name)
    return behaviour


def _counted(name: str, before: list[TestRun], after: list[TestRun],
            declared: bool = False) -> FlakyTest:
    """`name` as a flaky test, with the runs it passed before and after the code patch."""
    return FlakyTest(name=name, before_passed=sum(run.passed(name) for run in before),
                     before_runs=len(before), after_passed=sum(run.passed(name) for run in after),
                     after_runs=len(after), declared=declared)


def run_instance_tests(sandbox: Sandbox, spec: TestSpec, patch: str, test_patch: str,
                       runs: int = 2, timeout: float = 900,
                       progress: Callable[[str], None] | None = None,
                       stall_timeout: float | None = None,
                       hung: tuple[list[str], list[str]] = ([], []),
                       labels: tuple[list[str], list[str]] = ([], [])) -> Behaviour:
    """Apply the test patch, run its tests `runs` times, apply the code patch, run them again.

    `spec` says how tests run; the files run are the test patch's runnable modules. With
    `stall_timeout`, a test that hangs counts as failing and the others still run (see
    :func:`run_tests`); a test that hung in one run is left out of the next runs on the same
    code (as failing), so it costs the stall limit once per side; `hung` (before, after) are
    those known to hang from earlier runs of the same code. A hung test that a published name
    in `labels` (before, after) names gets one run of its own with twice the limit first
    (:func:`~benchsmith.harness.rerun.hung_labels_again`), after the code patch only when it
    did not hang in its own run before.
    """
    files = runnable_test_files(test_patch, "node" if spec.runner == "node" else "python")
    if not files:
        return Behaviour(error="the test patch changes no runnable test module")
    applied = apply_patch(sandbox, "test", test_patch)
    if not applied.ok:
        return Behaviour(error=f"test patch does not apply: {applied.output.strip()[-200:]}")
    started = time.monotonic()
    before = _runs(sandbox, spec, files, runs, timeout, stall_timeout, hung[0], labels[0])
    applied = apply_patch(sandbox, "code", patch)
    if not applied.ok:
        return Behaviour(before=before, error=f"code patch does not apply: {applied.output.strip()[-200:]}")
    # a label that hung before the code patch even in a run of its own has its verdict (a hang
    # is no pass): after the patch it gets no run of its own again
    settled = named_by(labels[0], [t for run in before for t in run.hung])
    after = _runs(sandbox, spec, files, runs, timeout, stall_timeout, hung[1], labels[1], settled)
    if not any(run.statuses for run in after):
        return Behaviour(before=before, after=after,
                         error=f"the tests gave no results: {_first_error(after[0].log_tail)}")
    behaviour = classify(before, after)
    _drop_unportable(behaviour, sandbox.workdir)
    _drop_declared_flaky(behaviour, sandbox, files)
    behaviour.test_files = files
    behaviour.tests_s = round(sum(r.duration_s for r in before + after), 3)
    if progress:
        progress(f"  {len(behaviour.FAIL_TO_PASS)} FAIL_TO_PASS, {len(behaviour.PASS_TO_PASS)} "
                 f"PASS_TO_PASS, {len(behaviour.flaky)} flaky ({time.monotonic() - started:.0f}s)")
    return behaviour


def seeded_reruns(fresh: Callable[[], Sandbox], spec: TestSpec, patch: str, test_patch: str,
                  behaviour: Behaviour, seeds: tuple[str, ...], timeout: float,
                  stall_timeout: float | None,
                  labels: tuple[list[str], list[str]] = ([], [])) -> Behaviour:
    """`behaviour` classified again over one more run per side under each hash seed (in the
    sandbox `fresh()` gives, at the same commit); unchanged when one of those runs errs. A test
    that hung on a side is not run there again (it counts as failing): a test that never ends
    costs the stall limit once per side, not once per run."""
    before, after = list(behaviour.before), list(behaviour.after)
    for seed in seeds:
        seeded = spec.model_copy(update={"env": {**spec.env, "PYTHONHASHSEED": seed}})
        known = ([t for run in before for t in run.hung], [t for run in after for t in run.hung])
        again = run_instance_tests(fresh(), seeded, patch, test_patch, runs=1, timeout=timeout,
                                   stall_timeout=stall_timeout, hung=known, labels=labels)
        if again.error:
            return behaviour
        before, after = before + again.before, after + again.after
    return reclassified(behaviour, before, after)


def reclassified(behaviour: Behaviour, before: list[TestRun], after: list[TestRun]) -> Behaviour:
    """`behaviour` classified again over more runs of the same tests (`before` and `after`
    include its own); what it had left out (unportable names, declared flaky tests) stays out."""
    kept = {*behaviour.FAIL_TO_PASS, *behaviour.PASS_TO_PASS, *behaviour.FAIL_TO_FAIL,
            *behaviour.PASS_TO_FAIL, *behaviour.flaky}
    again = classify(before, after)
    for field in ("FAIL_TO_PASS", "PASS_TO_PASS", "FAIL_TO_FAIL", "PASS_TO_FAIL"):
        setattr(again, field, [name for name in getattr(again, field) if name in kept])
    again.flaky_runs = [test for test in again.flaky_runs if test.name in kept]
    again.unportable, again.test_files = behaviour.unportable, behaviour.test_files
    again.tests_s = round(sum(run.duration_s for run in before + after), 3)
    return again


_ERROR_LINE = re.compile(r"\b(?:\w*Error|\w*Exception|error|ERR!|No (?:tests|test files|files) "
                         r"found|Cannot find|not found)\b")


def _first_error(log: str) -> str:
    """The first line of a run's log that says what went wrong (an error, not a stack frame),
    else its last line: what a reader of "the tests gave no results" needs."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for line in lines:
        if _ERROR_LINE.search(line) and not line.startswith(("at ", "File ")):
            return line[:300]
    return lines[-1][:300] if lines else "no output"


def _drop_declared_flaky(behaviour: Behaviour, sandbox: Sandbox, files: list[str]) -> None:
    """Move the tests that their own module marks flaky (`@pytest.mark.flaky`, `@flaky`) out of
    every label list: the project says they pass or fail by chance (a timing measurement that
    passed twice here can fail on a loaded machine)."""
    prefixes: list[str] = []
    for path in files:
        try:
            text = sandbox.read_file(posixpath.join(sandbox.workdir, path)).decode("utf-8", "replace")
        except OSError:
            continue
        prefixes += declared_flaky(text, path)
    if not prefixes:
        return

    def declared(name: str) -> bool:
        return any(name == p or name.startswith((p + "[", p + "::")) for p in prefixes)

    for key in ("FAIL_TO_PASS", "PASS_TO_PASS", "FAIL_TO_FAIL", "PASS_TO_FAIL"):
        names: list[str] = getattr(behaviour, key)
        behaviour.flaky_runs += [_counted(n, behaviour.before, behaviour.after, declared=True)
                                 for n in names if declared(n)]
        setattr(behaviour, key, [n for n in names if not declared(n)])


def _drop_unportable(behaviour: Behaviour, workdir: str) -> None:
    """Move tests named by the checkout's absolute path out of every label list: another
    harness keeps its checkout elsewhere (SWE-bench's ``/testbed``). Our runs spell the path
    :data:`~benchsmith.core.CHECKOUT_PATH` whatever the sandbox's."""
    roots = tuple(dict.fromkeys(p.rstrip("/") + "/" for p in (workdir, CHECKOUT_PATH)
                                if p.startswith("/")))

    def named_by_path(name: str) -> bool:
        return any(root in name for root in roots)

    for key in ("FAIL_TO_PASS", "PASS_TO_PASS", "FAIL_TO_FAIL", "PASS_TO_FAIL"):
        names: list[str] = getattr(behaviour, key)
        behaviour.unportable += [n for n in names if named_by_path(n)]
        setattr(behaviour, key, [n for n in names if not named_by_path(n)])


def _runs(sandbox: Sandbox, spec: TestSpec, files: list[str], runs: int, timeout: float,
          stall_timeout: float | None, known: list[str], labels: list[str],
          settled: Collection[str] = ()) -> list[TestRun]:
    """`runs` runs of `files`; tests that hung in one (or are `known` to) are left out of the
    later ones, as failing, unless their run of their own (those `labels` name, but not the
    `settled` ones) passed."""
    hung: list[str] = list(dict.fromkeys(known))
    done: list[TestRun] = []
    for _ in range(runs):
        def render(deselect: list[str], known: tuple[str, ...] = tuple(hung)) -> list[str]:
            return rerun_commands(sandbox, spec, files, [*known, *deselect])

        run = run_tests(sandbox, render, spec.runner, timeout, stall_timeout=stall_timeout,
                        report_format=report_format(spec))
        hung_labels_again(sandbox, spec, run, labels, timeout, stall_timeout, settled=settled)
        run.statuses.update(dict.fromkeys(hung, TestStatus.FAILED))
        run.hung = [*hung, *run.hung]
        hung = list(dict.fromkeys(run.hung))
        done.append(run)
    return done
