"""Run an instance's tests before and after its code patch: FAIL_TO_PASS and the rest."""

from __future__ import annotations

import time
from collections.abc import Callable

from pydantic import BaseModel, Field

from benchsmith.core import ExecResult, Sandbox, TestStatus
from benchsmith.harness.patches import runnable_test_files
from benchsmith.harness.render import render_spec
from benchsmith.harness.testrun import TestRun, run_tests
from benchsmith.harness.worktree import PATCH_DIR
from benchsmith.instance import TestSpec


class Behaviour(BaseModel):
    """Test outcomes before and after the code patch, and what they mean."""

    FAIL_TO_PASS: list[str] = Field(default_factory=list)
    PASS_TO_PASS: list[str] = Field(default_factory=list)
    FAIL_TO_FAIL: list[str] = Field(default_factory=list)
    PASS_TO_FAIL: list[str] = Field(default_factory=list)
    flaky: list[str] = Field(default_factory=list)
    before: list[TestRun] = Field(default_factory=list)
    after: list[TestRun] = Field(default_factory=list)
    test_files: list[str] = Field(default_factory=list)
    tests_s: float = 0.0  # time spent in test runs only
    error: str | None = None


def apply_patch(sandbox: Sandbox, name: str, patch: str) -> ExecResult:
    """Write `patch` next to the checkout and `git apply` it."""
    path = f"{PATCH_DIR}/{name}.patch"
    sandbox.write_file(path, patch.encode())
    return sandbox.exec(f"git apply --whitespace=nowarn {path}", timeout=120)


def classify(before: list[TestRun], after: list[TestRun]) -> Behaviour:
    """FAIL_TO_PASS etc. from repeated runs; tests whose outcome changes between runs are flaky."""
    behaviour = Behaviour(before=before, after=after)
    names = list(dict.fromkeys(n for run in before + after for n in run.statuses))
    for name in names:
        if ".py:" in name and "::" not in name:
            continue  # pytest reports skips by location, not by test: not a test id
        was = {run.passed(name) for run in before}
        now = {run.passed(name) for run in after}
        if len(was) > 1 or len(now) > 1:
            behaviour.flaky.append(name)
            continue
        if after[0].statuses.get(name) == TestStatus.SKIPPED:
            continue
        key = {(False, True): "FAIL_TO_PASS", (True, True): "PASS_TO_PASS",
               (False, False): "FAIL_TO_FAIL", (True, False): "PASS_TO_FAIL"}[(was.pop(), now.pop())]
        getattr(behaviour, key).append(name)
    return behaviour


def run_instance_tests(sandbox: Sandbox, spec: TestSpec, patch: str, test_patch: str,
                       runs: int = 2, timeout: float = 900,
                       progress: Callable[[str], None] | None = None) -> Behaviour:
    """Apply the test patch, run its tests `runs` times, apply the code patch, run them again.

    `spec` says how tests run; the files run are the test patch's runnable modules.
    """
    files = runnable_test_files(test_patch)
    if not files:
        return Behaviour(error="the test patch changes no runnable test module")
    applied = apply_patch(sandbox, "test", test_patch)
    if not applied.ok:
        return Behaviour(error=f"test patch does not apply: {applied.output.strip()[-200:]}")
    command = render_spec(spec, files)
    started = time.monotonic()
    before = [run_tests(sandbox, [command], spec.runner, timeout) for _ in range(runs)]
    applied = apply_patch(sandbox, "code", patch)
    if not applied.ok:
        return Behaviour(before=before, error=f"code patch does not apply: {applied.output.strip()[-200:]}")
    after = [run_tests(sandbox, [command], spec.runner, timeout) for _ in range(runs)]
    if not any(run.statuses for run in after):
        return Behaviour(before=before, after=after,
                         error=f"the tests gave no results: {after[0].log_tail[-300:]}")
    behaviour = classify(before, after)
    behaviour.test_files = files
    behaviour.tests_s = round(sum(r.duration_s for r in before + after), 3)
    if progress:
        progress(f"  {len(behaviour.FAIL_TO_PASS)} FAIL_TO_PASS, {len(behaviour.PASS_TO_PASS)} "
                 f"PASS_TO_PASS, {len(behaviour.flaky)} flaky ({time.monotonic() - started:.0f}s)")
    return behaviour
