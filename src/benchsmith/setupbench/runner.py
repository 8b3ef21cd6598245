"""Running one task: a fresh container from the task's image, the testbed filled, the agent run
as a black box under a wall-clock limit, then the success command in a fresh login shell.

Every problem of the task itself (no image, a missing fixture folder, a clone that fails, an
agent that cannot start) becomes an ``error`` result with one line, never an exception.
"""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchsmith import __version__
from benchsmith.core import BenchsmithError, ExecResult
from benchsmith.sandbox import make_sandbox
from benchsmith.setupbench.agents import METRICS_FILE, Agent, not_runnable
from benchsmith.setupbench.models import RunOptions, TaskResult, Verdict
from benchsmith.setupbench.tasks import FAILURE_MARK, SUCCESS_MARK, SetupTask, TaskProblem
from benchsmith.setupbench.testbed import TESTBED, fill_testbed, run_pre_runner

Progress = Callable[[str], None]


def verdict_of(output: str) -> tuple[Verdict, str]:
    """The verdict a success command's output gives: "Setup successful" anywhere is a success
    (SetupBench's rule; some published commands print "Setup failed" after it when their own
    cleanup fails, e.g. with no `ps` in the image); printing neither is a failure."""
    if SUCCESS_MARK in output:
        return "success", ""
    if FAILURE_MARK in output:
        return "failed", "the success command printed 'Setup failed'"
    tail = output.strip().splitlines()[-1][-160:] if output.strip() else "no output"
    return "failed", f"the success command printed neither verdict ({tail})"


def problem_result(problem: TaskProblem, options: RunOptions, run: int = 1) -> TaskResult:
    """The `error` result of a record that is no usable task."""
    return TaskResult(input=problem.instance_id, instance_id=problem.instance_id,
                      task_type=problem.task_type, agent=options.agent, verdict="error",
                      reason=f"{problem.where}: {problem.problem}", run=run,
                      options=options.model_dump(), started_at=_now(),
                      benchsmith_version=__version__)


def run_task(task: SetupTask, agent: Agent, options: RunOptions, sandbox_config: Any,
             log_dir: Path, run: int = 1, progress: Progress | None = None) -> TaskResult:
    """Run `task` with `agent` in a fresh container and return its result."""
    started = time.monotonic()
    result = TaskResult(input=task.instance_id, instance_id=task.instance_id,
                        task_type=task.task_type, agent=agent.name, verdict="error", run=run,
                        options=options.model_dump(), started_at=_now(),
                        benchsmith_version=__version__)
    log_dir.mkdir(parents=True, exist_ok=True)
    verdict_at: list[float] = []
    try:
        _run(task, agent, options, sandbox_config, log_dir, result, progress, verdict_at)
    except BenchsmithError as exc:
        result.verdict, result.reason = "error", str(exc).splitlines()[0][:400]
    ended = time.monotonic()
    result.total_s = round(ended - started, 2)
    decided = verdict_at[0] if verdict_at else ended
    result.harness_s = round(decided - started - result.agent_s, 2)
    result.cleanup_s = round(ended - decided, 2)
    return result


def _run(task: SetupTask, agent: Agent, options: RunOptions, sandbox_config: Any,
         log_dir: Path, result: TaskResult, progress: Progress | None,
         verdict_at: list[float]) -> None:
    mark = time.monotonic()

    def phase(name: str) -> None:
        nonlocal mark
        now = time.monotonic()
        result.timings[name] = round(now - mark, 2)
        mark = now

    provided = sandbox_config.for_image(task.base_image, progress)
    if provided is None:
        raise BenchsmithError("this sandbox backend cannot start task images: use --backend docker")
    config, result.image, result.image_note = provided
    phase("image")
    sandbox = make_sandbox(config)
    try:
        result.notes += fill_testbed(sandbox, task, options.mirrors,
                                     Path(options.fixtures) if options.fixtures else None)
        phase("testbed")
        pre = run_pre_runner(sandbox, task, options.pre_runner_timeout_s)
        if pre is not None:
            result.logs["pre_runner"] = _log(log_dir, "pre_runner", pre)
            if not pre.ok:
                raise BenchsmithError(f"the pre-runner failed (exit {pre.returncode}): "
                                      f"{_last_line(pre.output)}")
        phase("pre_runner")
        agent_started = time.monotonic()
        try:
            ran = agent.run(sandbox, task, options.timeout_s)
        finally:
            result.agent_s = round(time.monotonic() - agent_started, 2)
            phase("agent")
        result.logs["agent"] = _log(log_dir, "agent", ran)
        result.agent_exit_code, result.timed_out = ran.returncode, ran.timed_out
        result.metrics = _metrics(sandbox)
        why = not_runnable(ran)
        if why:
            raise BenchsmithError(f"the agent command could not run: {why}")
        # A fresh login shell: nothing the agent's shell exported survives.
        check = sandbox.exec(f"bash -lc {shlex.quote(task.success_command)}", cwd=TESTBED,
                             timeout=options.success_timeout_s)
        result.logs["success"] = _log(log_dir, "success", check)
        verdict_at.append(time.monotonic())
        phase("success_command")
        result.success_output = check.output[-2000:]
        result.verdict, result.reason = verdict_of(check.output)
        if check.timed_out:
            result.reason = f"the success command timed out after {options.success_timeout_s:.0f} s"
        elif ran.timed_out and result.verdict != "success":
            result.reason = f"the agent was stopped at the {options.timeout_s:.0f} s limit; " \
                            + result.reason
    finally:
        sandbox.close()


def _metrics(sandbox: Any) -> dict[str, Any]:
    try:
        data = json.loads(sandbox.read_file(METRICS_FILE))
    except (FileNotFoundError, OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {"value": data}


def _log(log_dir: Path, name: str, result: ExecResult) -> str:
    path = log_dir / f"{name}.log"
    header = (f"$ {result.command}\n# exit {result.returncode}, {result.duration_s:.1f} s"
              f"{', timed out' if result.timed_out else ''}\n")
    path.write_text(header + result.output, encoding="utf-8")
    return str(path)


def _last_line(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return lines[-1][-200:] if lines else "no output"


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
