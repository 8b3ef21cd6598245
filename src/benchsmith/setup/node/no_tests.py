"""A test command that exits 0 having run no test: typically a runner started from its config
file alone (its default test files not the project's), while the test script starts the tests
through a task command of its own. The repair runs that task command as it is, once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchsmith.core import Diagnosis, ExecResult, NodePlan, Plan
from benchsmith.setup.node.runners import (
    BROWSER_RUNNERS,
    node_side_sequence,
    runner_of,
    task_command,
)
from benchsmith.setup.node.scripts import expand
from benchsmith.setup.test_signals import log_tail

__all__ = ["RAN_NO_TESTS", "diagnose_no_tests", "repair_task_command", "run_task_command"]

# where a runner was read from that is not a command: package.json's own key or a dependency
_NOT_FILES = ("scripts.", "package.json ", "dependency ", "repair")
RAN_NO_TESTS = "ran no tests"  # the end of the runner source this repair records


def diagnose_no_tests(failed: ExecResult, phase: str) -> Diagnosis | None:
    """A test command that exited 0 in a run that did not validate: its runner reported no
    failure, so it ran no test at all (nothing was reported)."""
    if phase != "test" or not failed.ok:
        return None
    return Diagnosis(category="testing", kind="no_tests", reason="the test command ran no tests",
                     evidence=log_tail(failed.output),
                     facts={"exit": ["0"]})


def repair_task_command(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any
                        ) -> str | None:
    """The runner came from its config file, which found no tests, while scripts.test runs a task
    command (no runner benchsmith reads): run that command as it is, its mocha runs reported."""
    if diagnosis.facts.get("tests", ["0"]) != ["0"]:  # tests were reported: not this case
        return None
    return run_task_command(plan, node, context)


def run_task_command(plan: Plan, node: NodePlan, context: Any) -> str | None:
    """Replace a runner read from its config file by scripts.test's task command, when the script
    has one that starts no runner benchsmith reads; when it starts a browser runner, by the
    commands of its Node side's script (`node_side_sequence`)."""
    sources = plan.sources.get("runner", [])
    if not sources or sources[0].startswith(_NOT_FILES):
        return None
    scripts = getattr(context, "scripts", {}) or {}
    path = Path(getattr(context, "repo_root", "") or ".") / "Makefile"
    makefile = path.read_text(errors="replace") if path.is_file() else None
    invocations = expand(scripts, "test", makefile=makefile)
    runners = [started[0] for invocation in invocations if (started := runner_of(invocation))]
    if any(runner in BROWSER_RUNNERS for runner in runners):
        task = node_side_sequence(scripts, makefile)
    elif runners:
        return None
    else:
        task = task_command(invocations, scripts)
    if task is None:
        return None
    why = f"{node.tests.runner} from {sources[0]} {RAN_NO_TESTS}"
    node.tests = task.run()
    node.build += [step for step in task.build_steps if step not in node.build]
    plan.sources["runner"] = [*task.sources, f"repair: {why}"]
    plan.notes += [f"{why}: {note}" for note in task.notes]
    return f"run scripts.test's task command `{' '.join(task.command)}` as it is ({why})"

