"""Fix mode (SWE-bench): apply the predicted code patch and the gold test patch, run the tests, grade."""

from __future__ import annotations

from pathlib import Path

from benchsmith.core import Sandbox
from benchsmith.evaluation.models import FixOutcome, InstanceReport, TestsStatus
from benchsmith.harness.patches import touched_files
from benchsmith.harness.render import instance_spec, report_format
from benchsmith.harness.rerun import hung_labels_again, rerun_commands
from benchsmith.harness.testrun import Render, TestRun, run_tests
from benchsmith.harness.worktree import Worktree
from benchsmith.instance import Prediction, TaskInstance, TestSpec


def evaluate_fix(worktree: Worktree, instance: TaskInstance, prediction: Prediction,
                 report: InstanceReport, timeout: float, log_dir: Path,
                 stall_timeout: float | None = None) -> None:
    """Fill `report` for a predicted fix, as SWE-bench grades it. A test that stops making
    progress for `stall_timeout` seconds counts as failing, and the others run without it."""
    worktree.stage({"model": prediction.model_patch, "gold_test": instance.test_patch})
    report.apply = worktree.apply("model", prediction.model_patch)
    if not report.apply.applied:
        report.error = f"the predicted patch does not apply: {report.apply.error}"
        return
    outcome = report.fix = FixOutcome()
    # The tests and what configures them are the instance's, never the prediction's: the test
    # files and settings it changed go back to the base (a conftest hook, a pytest.ini, a .pth
    # file), and, as in SWE-bench, the gold test patch's files are reset before it is applied.
    outcome.reset = worktree.reset_test_settings(prediction.model_patch, instance.patch)
    test_patch = worktree.apply("gold_test", instance.test_patch,
                                restoring=touched_files(instance.test_patch))
    outcome.test_patch_applied = test_patch.applied
    if not test_patch.applied:
        report.error = f"the gold test patch does not apply on top of the prediction: {test_patch.error}"
        return
    spec = instance_spec(instance)
    run = run_tests(worktree.sandbox, hung_left_out(worktree.sandbox, instance, spec),
                    instance.test_runner, timeout,
                    log_dir / "test_output.txt", stall_timeout=stall_timeout,
                    report_format=report_format(spec))
    # the graded tests that hung run again alone, with twice the limit
    hung_labels_again(worktree.sandbox, spec, run, [*instance.FAIL_TO_PASS, *instance.PASS_TO_PASS],
                      timeout, stall_timeout, log_dir / "test_output.hung.txt")
    outcome.run = run
    report.tests_s = run.duration_s
    report.logs["test_output"] = run.log or ""
    report.applied = True
    if run.infrastructure:
        report.infrastructure_failure, report.infrastructure_reason = True, run.infrastructure
        return
    grade(outcome, instance, run)
    report.resolved = outcome.resolution == "FULL"
    if run.tampered:  # the guard's findings have failed the run's passes (harness/guard.py)
        report.tampering = "; ".join(run.tampered)
    if run.contained:  # a limit reached, the sandbox stopped, a process left behind
        report.contained = run.contained
        outcome.resolution, report.resolved = "NO", False


def hung_left_out(sandbox: Sandbox, instance: TaskInstance, spec: TestSpec) -> Render:
    """The instance's recorded test command first; once tests hung, the commands that run
    without them, for every runner (a `bin/test` script, which has no deselect, by its other
    files and its ``-k`` keywords: :func:`~benchsmith.harness.rerun.rerun_commands`)."""
    def commands(hung: list[str]) -> list[str]:
        return rerun_commands(sandbox, spec, list(spec.files), hung) if hung else instance.test
    return commands


def gold_verdict(worktree: Worktree, instance: TaskInstance, timeout: float, log_dir: Path,
                 stall_timeout: float | None = None) -> str | None:
    """Grade the instance's own gold patch exactly as `evaluate` grades a prediction (the
    same function, in `worktree` at the base commit): None when it resolves the instance,
    else why not. `build` keeps only instances that pass this."""
    report = InstanceReport(instance_id=instance.instance_id, model="gold", mode="fix",
                            prediction_digest="")
    gold = Prediction(instance_id=instance.instance_id, model_name_or_path="gold",
                      model_patch=instance.patch)
    evaluate_fix(worktree, instance, gold, report, timeout, log_dir, stall_timeout=stall_timeout)
    if report.infrastructure_failure:
        return f"the gold patch's run is an infrastructure failure: {report.infrastructure_reason}"
    if report.error or report.fix is None:
        return report.error or "the gold patch was not graded"
    if report.resolved:
        return None
    if report.contained:
        return f"the gold patch's run broke a limit: {'; '.join(report.contained)}"
    failing = report.fix.FAIL_TO_PASS.failure + report.fix.PASS_TO_PASS.failure
    return (f"the gold patch does not resolve it as evaluate grades: {len(failing)} test(s) "
            f"fail, e.g. {', '.join(failing[:3])}")


def grade(outcome: FixOutcome, instance: TaskInstance, run: TestRun) -> None:
    """SWE-bench's rule: FULL when every FAIL_TO_PASS and PASS_TO_PASS test passes."""
    for key, tests in (("FAIL_TO_PASS", instance.FAIL_TO_PASS),
                       ("PASS_TO_PASS", instance.PASS_TO_PASS)):
        status = TestsStatus()
        for test in tests:
            (status.success if run.passed(test) else status.failure).append(test)
        setattr(outcome, key, status)
    f2p, p2p = outcome.FAIL_TO_PASS, outcome.PASS_TO_PASS
    if p2p.failure or not f2p.success:
        outcome.resolution = "NO"
    else:
        outcome.resolution = "PARTIAL" if f2p.failure else "FULL"
