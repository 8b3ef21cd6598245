"""Run an instance's tests before and after its code patch, in a prepared sandbox."""

from __future__ import annotations

import shlex
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from benchsmith.core import BenchsmithError, ExecResult, Plan, Sandbox, TestStatus
from benchsmith.mining.patches import touched_files
from benchsmith.parsing import parse_test_output
from benchsmith.sandbox.config import SandboxConfig, make_sandbox
from benchsmith.setup.checkout import Checkout, materialize
from benchsmith.setup.plan import render_test

PATCH_DIR = "../benchsmith-patches"
# Fixed for every test run so that results do not depend on hash seeds or the clock's zone.
DETERMINISTIC_ENV = {"PYTHONHASHSEED": "0", "TZ": "UTC"}
_PASS = {TestStatus.PASSED, TestStatus.XFAIL, TestStatus.XPASS}


class TestRun(BaseModel):
    """One run of the selected tests."""

    __test__ = False

    statuses: dict[str, str]
    returncode: int
    duration_s: float
    log_tail: str = ""


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


def prepare_sandbox(config: SandboxConfig, checkout: Checkout, python: str,
                    install: list[str], exclude_newer: str, timeout: float) -> Sandbox:
    """A fresh sandbox with the checkout, a Python `python` venv and the `install` commands run.

    Raises BenchsmithError (after closing the sandbox) when a command fails.
    """
    sandbox = make_sandbox(config)
    workspace = Path(tempfile.mkdtemp(prefix="benchsmith-src-"))
    try:
        repo_dir = materialize(checkout, workspace / "repo", portable=config.type == "docker")
        sandbox.upload(repo_dir, sandbox.workdir)
        sandbox.setup_python(python)
        for command in install:
            result = sandbox.exec(command, env={"UV_EXCLUDE_NEWER": exclude_newer}, timeout=timeout)
            if not result.ok:
                tail = (result.output.strip().splitlines() or [""])[-1][:200]
                raise BenchsmithError(f"install failed at {checkout.commit[:12]}: {tail}")
    except BaseException:
        sandbox.close()
        raise
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    return sandbox


def runnable_test_files(test_patch: str) -> list[str]:
    """Python test modules the test patch adds or changes (not deleted ones, not data)."""
    files = []
    for path in touched_files(test_patch):
        name = path.rsplit("/", 1)[-1]
        if path.endswith(".py") and name != "conftest.py" and name != "__init__.py":
            files.append(path)
    return files


def test_command(plan: Plan, files: list[str]) -> str:
    """The plan's test command restricted to `files`."""
    if plan.runner == "unittest":
        modules = [f.removesuffix(".py").replace("/", ".") for f in files]
        words = ["python", "-m", "unittest", "-v", *modules]
        prefix = "".join(f"{k}={shlex.quote(v)} " for k, v in sorted(plan.env.items()))
        return prefix + " ".join(shlex.quote(w) for w in words)
    selective = plan.model_copy(update={"test_args": _options_only(plan.test_args) + files})
    return render_test(selective)[0]


def _options_only(args: list[str]) -> list[str]:
    from benchsmith.setup.commands import positional_args

    positional = set(positional_args(args))
    return [a for i, a in enumerate(args) if i not in positional]


def apply_patch(sandbox: Sandbox, name: str, patch: str) -> ExecResult:
    """Write `patch` next to the checkout and `git apply` it."""
    path = f"{PATCH_DIR}/{name}.patch"
    sandbox.write_file(path, patch.encode())
    return sandbox.exec(f"git apply --whitespace=nowarn {path}", timeout=120)


def _run(sandbox: Sandbox, command: str, runner: str, timeout: float) -> TestRun:
    result = sandbox.exec(command, env=DETERMINISTIC_ENV, timeout=timeout)
    statuses = {t.name: t.status.value for t in parse_test_output(result.output, runner)}
    tail = "\n".join(result.output.rstrip().splitlines()[-20:])
    return TestRun(statuses=statuses, returncode=result.returncode, duration_s=result.duration_s,
                   log_tail=tail)


def _passing(run: TestRun, name: str) -> bool:
    # A test missing from a run (e.g. its module failed to import) counts as failing.
    return run.statuses.get(name) in {s.value for s in _PASS}


def classify(before: list[TestRun], after: list[TestRun]) -> Behaviour:
    """FAIL_TO_PASS etc. from repeated runs; tests whose outcome changes between runs are flaky."""
    behaviour = Behaviour(before=before, after=after)
    names = list(dict.fromkeys(n for run in before + after for n in run.statuses))
    for name in names:
        if ".py:" in name and "::" not in name:
            continue  # pytest reports skips by location, not by test: not a test id
        was = {_passing(run, name) for run in before}
        now = {_passing(run, name) for run in after}
        if len(was) > 1 or len(now) > 1:
            behaviour.flaky.append(name)
            continue
        if after[0].statuses.get(name) == TestStatus.SKIPPED.value:
            continue
        key = {(False, True): "FAIL_TO_PASS", (True, True): "PASS_TO_PASS",
               (False, False): "FAIL_TO_FAIL", (True, False): "PASS_TO_FAIL"}[(was.pop(), now.pop())]
        getattr(behaviour, key).append(name)
    return behaviour


def run_instance_tests(sandbox: Sandbox, plan: Plan, patch: str, test_patch: str, runs: int = 2,
                       timeout: float = 900, progress: Callable[[str], None] | None = None) -> Behaviour:
    """Apply the test patch, run its tests `runs` times, apply the code patch, run them again."""
    files = runnable_test_files(test_patch)
    if not files:
        return Behaviour(error="the test patch changes no runnable test module")
    applied = apply_patch(sandbox, "test", test_patch)
    if not applied.ok:
        return Behaviour(error=f"test patch does not apply: {applied.output.strip()[-200:]}")
    command = test_command(plan, files)
    started = time.monotonic()
    before = [_run(sandbox, command, plan.runner, timeout) for _ in range(runs)]
    applied = apply_patch(sandbox, "code", patch)
    if not applied.ok:
        return Behaviour(before=before, error=f"code patch does not apply: {applied.output.strip()[-200:]}")
    after = [_run(sandbox, command, plan.runner, timeout) for _ in range(runs)]
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
