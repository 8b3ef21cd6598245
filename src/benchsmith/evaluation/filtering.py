"""Filtering fixes with generated tests (SWT-bench §5.3): keep a predicted fix only when one of
the model's own new tests fails on the original code and passes with that fix."""

from __future__ import annotations

from pathlib import Path

from benchsmith.evaluation.apply import apply_prediction
from benchsmith.evaluation.models import FilterOutcome, InstanceReport, TestOutcome
from benchsmith.evaluation.swt import existing_files, grade_tests, touched_tests
from benchsmith.harness.patches import runnable_test_files
from benchsmith.harness.render import instance_spec, report_format
from benchsmith.harness.rerun import rerun_commands
from benchsmith.harness.testrun import TestRun, run_tests
from benchsmith.harness.worktree import Worktree
from benchsmith.instance import Prediction, TaskInstance


def evaluate_filter(worktree: Worktree, instance: TaskInstance, fix: Prediction, tests: Prediction,
                    report: InstanceReport, timeout: float, directory: Path,
                    stall_timeout: float | None = None) -> None:
    """Set ``report.filter``: would the model's tests keep the model's fix?"""
    outcome = report.filter = FilterOutcome()
    applied = apply_prediction(worktree, "filter_tests", tests.model_patch, custom=True)
    outcome.test_patch_applied = applied.applied
    diff = applied.unified_diff or tests.model_patch
    spec = instance_spec(instance)
    files = runnable_test_files(diff, spec.runner)
    if not applied.applied or not files:
        return
    changed = touched_tests(diff, worktree)
    tests_tree = worktree.checkpoint()

    def run(name: str) -> TestRun:
        present = existing_files(worktree, files)
        if not present:
            return TestRun()
        def commands(hung: list[str]) -> list[str]:
            return rerun_commands(worktree.sandbox, spec, present, hung)

        return run_tests(worktree.sandbox, commands, spec.runner, timeout,
                         directory / f"filter-{name}.txt", stall_timeout=stall_timeout,
                         report_format=report_format(spec))

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
    grade_tests(graded, outcome.before, outcome.after, (existing, None), changed)
    outcome.FAIL_TO_PASS = graded.FAIL_TO_PASS
    outcome.kept = graded.fail_to_pass
