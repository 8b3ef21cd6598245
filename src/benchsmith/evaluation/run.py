"""`benchsmith evaluate`: every prediction in its instance's environment, one report each, resumable.

Layout of a run: ``RUN_DIR/<model>/<instance_id>/report.json`` (+ logs and the patches as
applied) and ``RUN_DIR/summary.json`` / ``summary.txt``. A finished report is reused when the
prediction (and everything else that decides its result) is unchanged.
"""

from __future__ import annotations

import json
import os
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from pydantic import BaseModel, ValidationError

from benchsmith import __version__
from benchsmith.core import BenchsmithError, Provenance, Sandbox
from benchsmith.evaluation.environment import Environments
from benchsmith.evaluation.models import InstanceReport, Mode
from benchsmith.executor import Executor
from benchsmith.harness.jsonl import Resume
from benchsmith.harness.render import instance_spec
from benchsmith.harness.worktree import Worktree
from benchsmith.instance import Prediction, TaskInstance
from benchsmith.sandbox.config import close_all_sandboxes
from benchsmith.sandbox.deadline import (
    DeadlinePassed,
    deadline_passed,
    limit_reason,
    task_deadline,
)

REPORT = "report.json"


class EvalOptions(BaseModel):
    """How a run evaluates its predictions."""

    mode: Mode
    run_dir: Path
    jobs: int = 1
    timeout_s: float = 1800
    stall_timeout_s: float | None = 600  # a test without progress this long is hung
    reuse_runs: bool = True  # test mode: prediction-independent runs computed once per instance
    test_network: bool = False  # keep the network for the predictions' tests (default: none)
    retry_failed: bool = False  # redo finished reports that ended in an error, not a verdict


class Evaluation:
    """Evaluates predictions against instances in reusable environments."""

    def __init__(self, options: EvalOptions, environments: Environments,
                 test_predictions: dict[str, Prediction] | None = None,
                 progress: Callable[[str], None] | None = None,
                 cancelled: threading.Event | None = None) -> None:
        self.options = options
        self.environments = environments
        self.test_predictions = test_predictions or {}
        self.progress = progress or (lambda message: None)
        self._cancelled = cancelled or threading.Event()
        self._task_timeout: float | None = None  # wall-clock limit per prediction (local threads)
        config = environments.config
        self.provenance = Provenance(benchsmith_version=__version__, backend=config.type,
                                     sandbox=config.model_dump(mode="json"),
                                     options=options.model_dump(mode="json", exclude={"run_dir"}))

    def run(self, instances: dict[str, TaskInstance], predictions: list[Prediction],
            executor: Executor | None = None) -> list[InstanceReport]:
        """Evaluate every prediction (in parallel with `jobs`, or as the tasks of a remote
        `executor`); return their reports."""
        self.options.run_dir.mkdir(parents=True, exist_ok=True)
        if executor is not None and executor.remote:
            from benchsmith.evaluation.remote import run_remote

            try:
                return run_remote(self, executor, instances, predictions)
            finally:
                self.environments.close()
        reports: list[InstanceReport] = []
        total = len(predictions)
        self._task_timeout = executor.config.task_timeout_s if executor is not None else None
        with ThreadPoolExecutor(max_workers=max(1, self.options.jobs)) as pool:
            # While the first `jobs` evaluations run, the environments of the next are warmed.
            upcoming = [instances[p.instance_id] for p in predictions[self.options.jobs:]]
            futures = {pool.submit(self.evaluate_one, instances[p.instance_id], p,
                                   upcoming[i] if i < len(upcoming) else None): p
                       for i, p in enumerate(predictions)}
            try:
                for done, future in enumerate(as_completed(futures), start=1):
                    report = future.result()
                    reports.append(report)
                    self.announce(done, total, report)
            except KeyboardInterrupt:
                # Reports already written stay; running evaluations are killed and write nothing.
                self._cancelled.set()
                close_all_sandboxes()
                pool.shutdown(wait=True, cancel_futures=True)
                raise
            finally:
                self.environments.close()
        return reports

    def announce(self, done: int, total: int, report: InstanceReport) -> None:
        """One progress line for a finished prediction."""
        self.progress(f"[{done}/{total}] {report.instance_id}: {verdict(report)} "
                      f"({report.duration_s:.0f}s"
                      f"{', environment ' + report.environment if report.environment else ''}"
                      f"{', reused' if report.environment_reused else ''})")

    def finished(self, instance: TaskInstance, prediction: Prediction) -> InstanceReport | None:
        """The report of an earlier run of this very prediction, when it can be reused."""
        directory = self.options.run_dir / prediction.model / instance.instance_id
        previous = read_report(directory / REPORT)
        if (previous and previous.prediction_digest == self.digest(instance, prediction)
                and not previous.infrastructure_failure
                and not (self.options.retry_failed and previous.error)):
            return previous
        return None

    def resumed(self, instances: dict[str, TaskInstance], predictions: list[Prediction],
                resume: Resume) -> None:
        """Tell `resume` how many predictions have a report already, and how many of those
        ended in an error (a patch that does not apply, ...)."""
        answered = failed = 0
        for prediction in predictions:
            directory = self.options.run_dir / prediction.model / prediction.instance_id
            previous = read_report(directory / REPORT)
            if (previous and not previous.infrastructure_failure and previous.prediction_digest
                    == self.digest(instances[prediction.instance_id], prediction)):
                answered += 1
                failed += bool(previous.error)
        resume.skipping(answered, failed)

    def digest(self, instance: TaskInstance, prediction: Prediction) -> str:
        """Fingerprint of everything that decides this prediction's result."""
        filter_patch = self.test_predictions.get(instance.instance_id)
        return prediction.digest(self.options.mode, instance.patch, instance.test_patch,
                                 json.dumps(instance.FAIL_TO_PASS), json.dumps(instance.PASS_TO_PASS),
                                 *instance.test, filter_patch.model_patch if filter_patch else "")

    def evaluate_one(self, instance: TaskInstance, prediction: Prediction,
                     upcoming: TaskInstance | None = None) -> InstanceReport:
        """Reuse a finished report of the same prediction, or evaluate it and write the report
        (`upcoming`: an instance evaluated soon, whose environment may be warmed meanwhile)."""
        directory = self.options.run_dir / prediction.model / instance.instance_id
        digest = self.digest(instance, prediction)
        if (previous := self.finished(instance, prediction)) is not None:
            return previous
        report = InstanceReport(instance_id=instance.instance_id, model=prediction.model,
                                mode=self.options.mode, prediction_digest=digest,
                                provenance=self.provenance,
                                stand_ins=list(instance_spec(instance).stand_ins))
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "prediction.patch").write_text(prediction.model_patch, encoding="utf-8")
        started = time.monotonic()
        if not prediction.model_patch.strip():
            # SWE-bench's empty_patch: counted, unresolved, and no environment is needed.
            report.empty_patch = True
            write_report(directory / REPORT, report)
            return report
        try:
            if upcoming is not None:
                self.environments.warm(upcoming, tools=self._tools(upcoming) is not None)
            # The limit covers the evaluation, not the environment's preparation and release.
            with self.environments.open(instance, self._tools(instance),
                                        lambda kind: setattr(report, "environment", kind)) as env, \
                    task_deadline(self._task_timeout):
                report.environment_reused, report.prepare_s = env.reused, env.prepare_s
                report.history, report.network = env.history, env.network or {}
                self._evaluate(env.worktree, instance, prediction, report, directory)
                if deadline_passed():  # a run cut short by the limit says nothing of the patch
                    raise DeadlinePassed(limit_reason())
        except BenchsmithError as exc:
            # The environment could not be made or used: the machine's fault, not the patch's.
            report.infrastructure_failure, report.infrastructure_reason = True, str(exc)
        except Exception as exc:  # a bug must not end the run; the report says where it was
            last = traceback.extract_tb(exc.__traceback__)[-1]
            report.infrastructure_failure = True
            report.infrastructure_reason = (f"internal error: {exc!r} at "
                                            f"{Path(last.filename).name}:{last.lineno}")
        if self._cancelled.is_set():
            raise KeyboardInterrupt
        report.duration_s = round(time.monotonic() - started, 3)
        if report.apply and report.apply.unified_diff:
            (directory / "prediction.converted.patch").write_text(report.apply.unified_diff,
                                                                   encoding="utf-8")
        write_report(directory / REPORT, report)
        return report

    def _tools(self, instance: TaskInstance) -> Callable[[Sandbox], object] | None:
        """What test mode installs before the tests lose the network: coverage (its probe is
        kept in the environment, so the runs find it there)."""
        if self.options.mode != "test":
            return None
        from benchsmith.evaluation.covrun import CoverageRunner
        from benchsmith.evaluation.environment import exclude_newer

        return lambda sandbox: CoverageRunner(sandbox, exclude_newer(instance))

    def _evaluate(self, worktree: Worktree, instance: TaskInstance, prediction: Prediction,
                  report: InstanceReport, directory: Path) -> None:
        timeout = self.options.timeout_s
        if self.options.mode == "fix":
            from benchsmith.evaluation.fix import evaluate_fix

            evaluate_fix(worktree, instance, prediction, report, timeout, directory,
                         stall_timeout=self.options.stall_timeout_s)
            tests = self.test_predictions.get(instance.instance_id)
            if tests is not None:
                from benchsmith.evaluation.filtering import evaluate_filter

                worktree.reset()
                evaluate_filter(worktree, instance, prediction, tests, report, timeout, directory,
                                stall_timeout=self.options.stall_timeout_s)
        else:
            from benchsmith.evaluation.runcache import RunCache
            from benchsmith.evaluation.swt import evaluate_tests

            evaluate_tests(worktree, instance, prediction, report, timeout, directory,
                           stall_timeout=self.options.stall_timeout_s,
                           reuse=RunCache() if self.options.reuse_runs else None)


def verdict(report: InstanceReport) -> str:
    """A one-word outcome for progress lines and tables."""
    if report.empty_patch:
        return "EMPTY PATCH"
    if report.infrastructure_failure:
        return "INFRASTRUCTURE FAILURE"
    if not report.applied:
        return "NOT APPLIED" if report.apply and not report.apply.applied else "ERROR"
    if report.mode == "fix":
        return {"FULL": "RESOLVED", "PARTIAL": "PARTIAL"}.get(
            report.fix.resolution if report.fix else "NO", "UNRESOLVED")
    test = report.test
    if test is None:
        return "ERROR"
    if test.success:
        return "SUCCESS"
    if test.fail_to_pass:
        return "F->P (a new test fails after the fix)"
    if test.fail_to_any:
        return "F->F" if test.FAIL_TO_FAIL else "F->X"
    return "P->P" if test.pass_to_pass else "NO NEW TESTS"


def read_report(path: Path) -> InstanceReport | None:
    """A report written earlier, or None when there is none (or it is unreadable)."""
    try:
        return InstanceReport.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError):
        return None


def write_report(path: Path, report: InstanceReport) -> None:
    """Write atomically, so a killed run never leaves half a report."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    os.replace(tmp, path)
