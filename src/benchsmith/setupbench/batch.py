"""Running many tasks: results appended line by line (resumable), a progress line per task,
N at a time, every container removed also on Ctrl-C; and `check`, which proves tasks
deterministic (oracle passes, noop fails, three times in fresh containers)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchsmith.harness.jsonl import JsonlWriter, Resume, load_answers
from benchsmith.sandbox import close_all_sandboxes
from benchsmith.setupbench.agents import BUILTIN_AGENTS, make_agent
from benchsmith.setupbench.models import RunOptions, TaskResult
from benchsmith.setupbench.runner import problem_result, run_task
from benchsmith.setupbench.tasks import SetupTask, TaskProblem

Progress = Callable[[str], None]


def log_folder(out: Path, options: RunOptions) -> Path:
    """Where per-task logs go: `options.logs`, else ``<out>.logs`` next to the results."""
    return Path(options.logs) if options.logs else out.with_name(out.name + ".logs")


def describe(result: TaskResult) -> str:
    """One progress line for a finished task."""
    extra = f" ({result.reason})" if result.reason else ""
    timing = f"agent {result.agent_s:.0f} s, harness {result.harness_s:.1f} s"
    return f"{result.instance_id}: {result.verdict} [{timing}]{extra}"


def _safe(name: str) -> str:
    return re.sub(r"[^\w.+-]", "_", name)[:120] or "task"


def run_tasks(items: Iterable[SetupTask | TaskProblem], options: RunOptions, sandbox_config: Any,
              out: Path, jobs: int = 1, progress: Progress | None = None,
              run: int = 1, resume: Resume | None = None) -> list[TaskResult]:
    """Run every task not yet answered in `out` and append its result there (without
    `resume`, every task; with `resume.retry_failed`, also those that did not succeed)."""
    say = progress or (lambda message: None)
    agent = make_agent(options.agent)
    agent_label = agent.name if agent.name in BUILTIN_AGENTS else "agent"
    items = list(items)
    if resume is not None:
        done, failed = load_answers(out, failed=lambda record: record.get("verdict") != "success")
        done &= {item.instance_id for item in items}
        resume.skipping(len(done), len(done & failed))
        done -= failed if resume.retry_failed else set()
    else:
        done = set()
    writer = JsonlWriter(out)
    logs = log_folder(out, options)
    todo = [item for item in items if item.instance_id not in done]
    results: list[TaskResult] = []
    lock = threading.Lock()
    interrupted = threading.Event()

    def work(item: SetupTask | TaskProblem) -> TaskResult | None:
        if interrupted.is_set():
            return None
        if isinstance(item, TaskProblem):
            result = problem_result(item, options, run)
        else:
            say(f"{item.instance_id}: starting ({item.task_type}, agent {agent.name})")
            try:
                result = run_task(item, agent, options, sandbox_config,
                                  logs / _safe(f"{item.instance_id}.{agent_label}.run{run}"),
                                  run=run, progress=say)
            except OSError as exc:  # its logs could not be written (a full disk): an error
                problem = TaskProblem(instance_id=item.instance_id, task_type=item.task_type,
                                      where="harness", problem=f"{exc.strerror or exc}"
                                      + (f": {exc.filename}" if exc.filename else ""))
                result = problem_result(problem, options, run)
        if interrupted.is_set():  # its container was removed under it: not a result, rerun it
            return None
        writer.write(result)
        with lock:
            results.append(result)
            say(f"[{len(results)}/{len(todo)}] {describe(result)}")
        return result

    if jobs <= 1:
        try:
            for item in todo:
                work(item)
        except BaseException:
            interrupted.set()
            close_all_sandboxes()
            raise
        return results
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        for future in as_completed([pool.submit(work, item) for item in todo]):
            future.result()
    except BaseException:  # Ctrl-C, or the results file could not be written: stop them all
        interrupted.set()
        pool.shutdown(wait=False, cancel_futures=True)
        close_all_sandboxes()
        raise
    pool.shutdown(wait=True)
    return results


class CheckOutcome(BaseModel):
    """Whether a task is deterministic: oracle and noop verdicts over the repetitions."""

    instance_id: str
    task_type: str
    oracle: list[str]
    noop: list[str]
    reasons: list[str]

    @property
    def ok(self) -> bool:
        """Oracle passed every time and noop failed every time (an error is no pass)."""
        return (bool(self.oracle) and all(v == "success" for v in self.oracle)
                and bool(self.noop) and all(v == "failed" for v in self.noop))


def check_tasks(items: list[SetupTask | TaskProblem], options: RunOptions, sandbox_config: Any,
                out: Path, runs: int = 3, jobs: int = 1,
                progress: Progress | None = None) -> list[CheckOutcome]:
    """Run the oracle and noop agents `runs` times on every task, each in a fresh container;
    every result is appended to `out`."""
    found: dict[str, CheckOutcome] = {
        item.instance_id: CheckOutcome(instance_id=item.instance_id, task_type=item.task_type,
                                       oracle=[], noop=[], reasons=[]) for item in items}
    for run in range(1, runs + 1):
        for agent in ("oracle", "noop"):
            agent_options = options.model_copy(update={"agent": agent})
            for result in run_tasks(items, agent_options, sandbox_config, out, jobs=jobs,
                                    progress=progress, run=run):
                outcome = found[result.instance_id]
                getattr(outcome, agent).append(result.verdict)
                wrong = (agent == "oracle") != (result.verdict == "success")
                if wrong or result.verdict == "error":
                    outcome.reasons.append(f"run {run} {agent}: {result.verdict}"
                                           + (f" ({result.reason})" if result.reason else ""))
    return list(found.values())
