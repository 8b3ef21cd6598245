"""Filtering fixes with generated tests (SWT-bench §5.3): keep a predicted fix only when one of
the model's own new tests fails on the original code and passes with that fix."""

from __future__ import annotations

import shlex
from pathlib import Path

from benchsmith.core import Plan
from benchsmith.evaluation.apply import Worktree
from benchsmith.evaluation.environment import exclude_newer
from benchsmith.evaluation.inputs import EvalInstance, Prediction
from benchsmith.evaluation.models import FilterOutcome, InstanceReport, TestOutcome
from benchsmith.evaluation.swt import grade_tests, touched_tests
from benchsmith.evaluation.testrun import TestRun, run_tests
from benchsmith.mining.harness import runnable_test_files, test_command
from benchsmith.mining.verify import recorded_test


def evaluate_filter(worktree: Worktree, instance: EvalInstance, fix: Prediction, tests: Prediction,
                    report: InstanceReport, timeout: float, directory: Path) -> None:
    """Set ``report.filter``: would the model's tests keep the model's fix?"""
    outcome = report.filter = FilterOutcome()
    applied = worktree.apply("filter_tests", tests.model_patch, custom=True)
    outcome.test_patch_applied = applied.applied
    diff = applied.unified_diff or tests.model_patch
    files = runnable_test_files(diff)
    if not applied.applied or not files:
        return
    changed = touched_tests(diff, worktree)
    env, args = recorded_test(instance.test)
    plan = Plan(python=instance.python or "3", exclude_newer=exclude_newer(instance),
                runner="unittest" if instance.test_runner == "unittest" else "pytest",
                test_args=args, env=env)
    tests_tree = worktree.checkpoint()

    def run(name: str) -> TestRun:
        present = worktree.sandbox.exec(
            "for f in " + " ".join(shlex.quote(f) for f in files) +
            '; do [ -f "$f" ] && echo "$f"; done', timeout=60).output.split()
        if not present:
            return TestRun()
        return run_tests(worktree.sandbox, [test_command(plan, present)], plan.runner, timeout,
                         directory / f"filter-{name}.txt")

    worktree.reset()
    existing = run("existing")
    worktree.restore(tests_tree)
    outcome.before = run("before")
    fixed = worktree.apply("filter_fix", fix.model_patch)
    outcome.fix_applied = fixed.applied
    if not fixed.applied:
        return
    outcome.after = run("after")
    graded = TestOutcome()
    grade_tests(graded, outcome.before, outcome.after, set(existing.statuses), changed)
    outcome.FAIL_TO_PASS = graded.FAIL_TO_PASS
    outcome.kept = graded.fail_to_pass
