"""The setup engine: extract, run and repair, validate; every attempt in a fresh sandbox."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from benchsmith import __version__
from benchsmith.core import (
    BenchsmithError,
    Diagnosis,
    Ecosystem,
    ExecResult,
    Plan,
    Planner,
    Provenance,
    Repairer,
    Sandbox,
    TestResult,
    TestStatus,
)
from benchsmith.harness.checkout import Checkout, materialize, resolve
from benchsmith.harness.history import sealed
from benchsmith.harness.prepare import absent_packages
from benchsmith.harness.render import plan_spec, system_packages
from benchsmith.harness.rerun import rerun_commands
from benchsmith.harness.testrun import TestCounts, count_tests, pass_rate, run_tests_with_results
from benchsmith.sandbox.config import close_all_sandboxes, make_sandbox
from benchsmith.sandbox.deadline import DeadlinePassed, deadline_passed, limit_reason
from benchsmith.sandbox.store import environment_name
from benchsmith.sandbox.tools import scratch_dir
from benchsmith.setup.after_validation import another_round, note_collection_errors
from benchsmith.setup.ecosystems import choose_ecosystem, ecosystem_of
from benchsmith.setup.missing_inputs import tests_lacking_snapshots
from benchsmith.setup.optional import optional_requirements, skip_reasons
from benchsmith.setup.options import SetupOptions
from benchsmith.setup.planner import RulePlanner
from benchsmith.setup.record import (
    Iteration,
    SetupRecord,
    command_run,
    failure_summary,
    regressed,
    test_outcome,
)
from benchsmith.setup.refdb import ReferenceDB, ReferencePlans
from benchsmith.setup.repair import RuleRepairer
from benchsmith.setup.system_repairs import without_system_packages
from benchsmith.setup.test_signals import needs_browser, needs_network

Progress = Callable[[str], None]


class SetupEngine:
    """Runs the SetupAgent loop with pluggable planner and repairer (rules by default)."""

    def __init__(self, options: SetupOptions | None = None, repairer: Repairer | None = None,
                 progress: Progress | None = None, planner: Planner | None = None,
                 refdb: ReferenceDB | ReferencePlans | None = None) -> None:
        self.options = options or SetupOptions()
        self.planner: Planner = planner or RulePlanner()
        self.apt = self.options.sandbox.apt
        if repairer is None and self.options.model is not None:
            from benchsmith.setup.model_repair import ModelRepairer, load_llm

            repairer = ModelRepairer(RuleRepairer(apt=self.apt),
                                     load_llm(self.options.model, self.options.base_url))
        self.repairer: Repairer = repairer or RuleRepairer(apt=self.apt)
        self.progress = progress or (lambda message: None)
        self.refdb = refdb or (ReferenceDB(self.options.refdb) if self.options.use_refdb else None)
        self.cancelled = threading.Event()
        self._where = threading.local()

    def current(self) -> str:
        """The repository@commit this thread sets up (for progress lines of parallel setups)."""
        return getattr(self._where, "label", "")

    def provenance(self) -> Provenance:
        """How this engine's records are produced (version, backend, options)."""
        return Provenance(benchsmith_version=__version__, backend=self.options.sandbox.type,
                          sandbox=self.options.sandbox.model_dump(mode="json"),
                          options=self.options.model_dump(mode="json", exclude={"sandbox"}))

    def cancel(self) -> None:
        """Stop all running setups: no new attempt starts, running sandboxes are closed."""
        self.cancelled.set()
        close_all_sandboxes()

    def setup(self, source: str, rev: str | None = None, on_date: str | None = None,
              repo: str | None = None, keep: Callable[[Sandbox], None] | None = None,
              focus: list[str] | None = None) -> SetupRecord:
        """Set up `source` at `rev` (or the last commit before `on_date`); raise on bad input.

        With `keep`, the sandbox of the validating attempt is handed to `keep` instead of being
        closed (the caller then owns it), so task mining can run instances in it right away.
        With `focus` (test files), validation runs those the commit has (else the whole suite):
        a dataset's own tests decide whether its environment works (`prepare`).
        """
        started = time.monotonic()
        checkout = resolve(source, rev=rev, on_date=on_date, repo=repo)
        self._where.label = f"{checkout.repo}@{checkout.commit[:7]}"
        self.progress(f"{checkout.repo} @ {checkout.commit[:12]} (pinned to {checkout.exclude_newer})")
        workspace = scratch_dir("src")
        try:
            host_repo = materialize(checkout, workspace / "repo",
                                    portable=self.options.sandbox.portable_checkout)
            ecosystem, evidence = choose_ecosystem(host_repo, self.apt, self.options.ecosystem)
            self._where.ecosystem = ecosystem.name
            context = ecosystem.context(host_repo)
            if ecosystem.name == "python" and not context.has_python_project:
                raise BenchsmithError(f"no Python project in {source} at {checkout.commit[:12]} (no "
                                      "setup.py, setup.cfg, pyproject.toml or requirements file)")
            focused = [f for f in focus or [] if (host_repo / f).is_file()]
            if begin := getattr(self.repairer, "begin_setup", None):
                begin()  # a model-assisted repairer: its budget and count are per setup
            record = self._run(checkout, ecosystem, context, host_repo, keep, focused)
            record.ecosystem_evidence = evidence
            record.llm_calls = getattr(self.repairer, "setup_calls", 0)
            record.model_assisted = record.status == "validated" and any(
                (i.repair or "").startswith("model:") for i in record.iterations)
        finally:
            shutil.rmtree(workspace, ignore_errors=True)
        record.duration_s = round(time.monotonic() - started, 2)
        return record

    # -- the loop ----------------------------------------------------------------------
    def _run(self, checkout: Checkout, ecosystem: Ecosystem, context: Any, host_repo: Path,
             keep: Callable[[Sandbox], None] | None = None, focus: list[str] | None = None
             ) -> SetupRecord:
        pin_day = date.fromisoformat(checkout.pin_date)
        probe = make_sandbox(self.options.sandbox)
        try:
            available = probe.available_pythons()
        finally:
            probe.close()
        candidates = self._reference_plans(checkout, ecosystem, context, available, pin_day)
        candidates += ecosystem.plans(context, pin_day, available, checkout.exclude_newer,
                                      self.planner)
        record = SetupRecord(repo=checkout.repo, source=checkout.source, commit=checkout.commit,
                             ecosystem=ecosystem.name,
                             date=checkout.pin_date, exclude_newer=checkout.exclude_newer,
                             status="failed", threshold=self.options.threshold,
                             backend=self.options.sandbox.type, benchsmith_version=__version__,
                             provenance=self.provenance(),
                             missing_submodules=getattr(context, "missing_submodules", []),
                             provided_submodules=getattr(context, "provided_submodules", {}),
                             missing_files=getattr(context, "missing_files", []),
                             focus=list(focus or []))
        origin, plan = candidates.pop(0)
        tried: list[Plan] = []
        exhausted: set[str] = set()  # diagnosis kinds whose repair made no progress
        # (plan, test outcome, diagnosis kind, repair) before the last repair, to undo it
        before_repair: tuple[Plan, tuple[frozenset[str], float | None, str], str, str] | None = None
        for round_number in range(1, self.options.max_iterations + 2):
            if self.cancelled.is_set():
                raise KeyboardInterrupt
            tried.append(plan)
            runtime = f"Node {plan.node.version}, {plan.node.manager}" if plan.node else f"Python {plan.python}"
            self.progress(f"round {round_number}: {runtime} ({origin})")
            iteration, counts = self._attempt(plan, checkout, context, host_repo, round_number,
                                              origin, keep, focus)
            record.iterations.append(iteration)
            if iteration.validated:
                more = (another_round(plan, iteration, context, self.repairer, bool(focus))
                        if plan.ecosystem == "python" else None)
                if more and round_number <= self.options.max_iterations:
                    plan, counts, iteration = self._with_optional(
                        record, plan, counts, iteration, more, checkout, context, host_repo, keep,
                        focus)
                self._accept(record, checkout, plan, counts, iteration)
                return record
            diagnosis = iteration.diagnosis
            assert diagnosis is not None
            self.progress(f"  {diagnosis.category}: {diagnosis.reason}")
            if diagnosis.infrastructure or deadline_passed():  # no further round can start
                record.status = "error"
                break
            tested = any(c.phase == "test" for c in iteration.commands)
            outcome = test_outcome(counts, iteration.pass_rate, diagnosis) if tested else None
            vain = before_repair is not None and (outcome, diagnosis.kind) == before_repair[1:3]
            if before_repair is not None and (vain or regressed(record.iterations[-2], iteration)):
                # The last repair changed nothing the tests see (same failures, same reason) or
                # made them worse: undo it; that diagnosis gets no other rule (no Pythons in vain)
                plan, kind, what = before_repair[0], before_repair[2], before_repair[3]
                exhausted.add(kind)
                iteration.undone = f"{what}: " + ("same failing tests and pass rate as before"
                                                  if vain else "fewer tests pass") + "; undone"
                self.progress(f"  {iteration.undone}")
            before_repair = None
            if round_number > self.options.max_iterations:
                break
            fresh_start = origin.startswith("reference") and candidates
            repaired = (None if diagnosis.kind in exhausted or fresh_start
                        else self._repairer(plan).repair(plan, diagnosis, context))
            if repaired is not None and repaired[0] in tried:
                repaired = None
            if repaired is not None:
                if outcome is not None:
                    before_repair = (plan, outcome, diagnosis.kind, repaired[1])
                plan, iteration.repair = repaired
                origin = "repair"
            elif not self.apt and (why_not := without_system_packages(diagnosis, bool(candidates))):
                diagnosis.reason += f" ({why_not})"
                break
            elif candidates:
                why = ("the reused plan failed" if fresh_start
                       else "no rule applies" if diagnosis.kind not in exhausted
                       else "no rule made progress")
                origin, plan = candidates.pop(0)
                iteration.repair = f"{why}; start over from the {origin} plan"
            else:
                break
            self.progress(f"  repair: {iteration.repair}")
        last = record.iterations[-1]
        # an undone round's plan is not the record's: the round before it is what it reports
        record.report(plan, ecosystem.render(plan), record.iterations[-2] if last.undone else last)
        if last.diagnosis:
            record.failure_category, record.failure_reason = failure_summary(record, last.diagnosis)
        if deadline_passed():  # the task's limit: the rounds that ran are kept, as an error
            record.failure_category, record.failure_reason = "infrastructure", limit_reason()
        return record

    def _with_optional(self, record: SetupRecord, plan: Plan, counts: TestCounts,
                       validated: Iteration, more: tuple[Plan, str, str], checkout: Checkout,
                       context: Any, host_repo: Path, keep: Callable[[Sandbox], None] | None,
                       focus: list[str] | None) -> tuple[Plan, TestCounts, Iteration]:
        """One more round with what the validated round lacked (`more`, :func:`another_round`),
        kept when more tests pass; what its tests then skip without gets one more (pint, once dask runs)."""
        trial, validated.repair, origin = more
        self.progress(f"  {validated.repair}")
        mine: list[Sandbox] = []
        iteration, trial_counts = self._attempt(trial, checkout, context, host_repo,
                                                validated.round + 1, origin, mine.append,
                                                focus, snapshot=False)
        record.iterations.append(iteration)
        better = iteration.validated and trial_counts.PASSED > counts.PASSED
        for sandbox in mine:
            if better and self.options.commit_images and self.options.sandbox.snapshots:
                self._snapshot(sandbox, checkout, iteration)
            if better and keep is not None:
                keep(sandbox)  # the last sandbox kept is the environment
            else:
                sandbox.close()
        if not better:
            iteration.undone = "no more tests pass with them: the round before stands"
            self.progress(f"  {iteration.undone}")
            return plan, counts, validated
        if iteration.optional and iteration.round <= self.options.max_iterations and (
                again := another_round(trial, iteration, context, self.repairer, True)):
            return self._with_optional(record, trial, trial_counts, iteration, again, checkout,
                                       context, host_repo, keep, focus)
        return trial, trial_counts, iteration

    def _snapshot(self, sandbox: Sandbox, checkout: Checkout, iteration: Iteration) -> None:
        """Commit the environment image, its history cut at the commit (the sandbox keeps it)."""
        stash, what = self.options.sandbox.snapshot_stash or "../stash", f"{checkout.repo}'s checkout"
        with sealed(sandbox, checkout.commit, stash, what) as history:
            iteration.image = sandbox.snapshot(
                environment_name(checkout.repo, checkout.commit),
                {"benchsmith.repo": checkout.repo, "benchsmith.commit": checkout.commit})
        iteration.history = history

    def _accept(self, record: SetupRecord, checkout: Checkout, plan: Plan, counts: TestCounts,
                iteration: Iteration) -> None:
        record.status = "validated"
        record.report(plan, ecosystem_of(plan, self.apt).render(plan), iteration)
        record.tests, record.tests_offline = counts, iteration.offline
        record.network = self.options.sandbox.phases(iteration.offline)
        record.clean_run_s = iteration.duration_s  # each attempt is a fresh sandbox: a clean run
        record.image, record.history = iteration.image, iteration.history
        if record.image:
            record.dockerfile = self.options.sandbox.image_recipe(
                record.repo, record.commit or "", plan.python, record.exclude_newer or "",
                record.install)
        if self.refdb is not None:
            self.refdb.save(checkout.repo, checkout.commit, checkout.pin_date, plan, record.install,
                            record.test, record.pass_rate, backend=self.options.sandbox.type)

    def _reference_plans(self, checkout: Checkout, ecosystem: Ecosystem, context: Any,
                         available: dict[str, str], pin_day: date) -> list[tuple[str, Plan]]:
        """The validated plan of the nearest commit in the reference database, made fit for
        this commit (when it is of the same ecosystem)."""
        if self.refdb is None:
            return []
        plans: list[tuple[str, Plan]] = []
        for spec in self.refdb.nearest(checkout.repo, checkout.pin_date, self.options.sandbox.type, 1):
            if spec.plan.ecosystem != ecosystem.name:
                continue
            plan = spec.plan.model_copy(deep=True)
            plan.exclude_newer = checkout.exclude_newer
            plan = ecosystem.adapt(plan, context, pin_day, available)
            plans.append((f"reference {spec.commit[:12]} {spec.date}", plan))
        return plans

    def _repairer(self, plan: Plan) -> Repairer:
        """The repairer given to the engine for Python plans (rules, or a model's help), the
        plan's ecosystem's own rules for another's."""
        return self.repairer if plan.ecosystem == "python" else ecosystem_of(plan, self.apt).repairer()

    def _attempt(self, plan: Plan, checkout: Checkout, context: Any, host_repo: Path,
                 round_number: int, origin: str, keep: Callable[[Sandbox], None] | None = None,
                 focus: list[str] | None = None, snapshot: bool = True
                 ) -> tuple[Iteration, TestCounts]:
        started = time.monotonic()
        iteration = Iteration(round=round_number, python=plan.python, origin=origin)
        counts = TestCounts()
        ecosystem = ecosystem_of(plan, self.apt)
        install = ecosystem.render(plan)[0]
        env = ecosystem.install_env(plan)
        sandbox = make_sandbox(self.options.sandbox)
        try:
            if staged := ecosystem.stage(sandbox, host_repo, plan, install):
                iteration.diagnosis = staged
                return iteration.finished(started), counts
            absent = absent_packages(sandbox, system_packages(plan, self.apt))
            for command in install:
                result = sandbox.exec(command, env=env, timeout=self.options.install_timeout_s)
                iteration.commands.append(command_run("install", result))
                if not result.ok:
                    iteration.diagnosis = self._repairer(plan).diagnose(plan, result, "install",
                                                                        context)
                    break
            iteration.system_packages = [p for p in absent if p not in absent_packages(sandbox, absent)]
            if iteration.diagnosis is not None:
                return iteration.finished(started), counts
            iteration.offline = (self.options.offline_tests and self.options.sandbox.network_cutoff
                                 and sandbox.set_network(False))
            outputs, tests = self._run_tests(sandbox, plan, env, iteration, focus)
            # Tests that reached for another host, a browser or a snapshot not here say nothing
            iteration.missing_input = tests_lacking_snapshots(tests, getattr(context, "missing_files", []))
            network = {*iteration.needs_network, *iteration.needs_browser, *iteration.missing_input}
            tests = [t for t in tests if t.name not in network]
            counts = count_tests(tests)
            iteration.tests = {s.value: getattr(counts, s.value) for s in TestStatus}
            iteration.pass_rate = pass_rate(counts)
            rate = iteration.pass_rate
            iteration.validated = rate is not None and rate >= self.options.threshold
            if plan.runner == "pytest":
                note_collection_errors(iteration, [r.output for r in outputs])
            if iteration.validated and focus and plan.ecosystem == "python":
                iteration.optional = optional_requirements(
                    skip_reasons([r.output for r in outputs], host_repo), context, plan)
            if (iteration.validated and snapshot and self.options.commit_images
                    and self.options.sandbox.snapshots):
                self._snapshot(sandbox, checkout, iteration)
            if not iteration.validated and rate is None and network:
                iteration.diagnosis = needs_browser(iteration.needs_browser) if not iteration.needs_network \
                    else needs_network(iteration.needs_network, outputs, getattr(context, "test_hosts", []))
            elif not iteration.validated:
                failed = next((r for r in outputs if not r.ok), outputs[-1])
                iteration.diagnosis = self._repairer(plan).diagnose(plan, failed, "test", context)
                iteration.diagnosis.facts.setdefault("tests", [str(len(tests))])
                if rate is not None:
                    iteration.diagnosis.reason += f" (pass rate {rate:.1%})"
        except DeadlinePassed as exc:  # the task's limit, between two commands: the round ends
            iteration.diagnosis = Diagnosis(category="undecidable", kind="timeout", reason=str(exc))
        finally:
            if keep is not None and iteration.validated:
                if iteration.offline:
                    sandbox.set_network(True)  # its next owner installs more
                keep(sandbox)
            else:
                sandbox.close()
        return iteration.finished(started), counts

    def _run_tests(self, sandbox: Sandbox, plan: Plan, env: dict[str, str],
                   iteration: Iteration, focus: list[str] | None = None
                   ) -> tuple[list[ExecResult], list[TestResult]]:
        """Run the plan's test commands through the harness's one test runner (as `build` and
        `evaluate` do). A test whose output stops growing for the stall limit is hung: it counts
        neither way and (pytest, bin/test) stays left out in a rerun. With `focus`, those files."""
        def commands(hung: list[str]) -> list[str]:
            if focus or (plan.runner == "bintest" and (hung or plan.deselect)):
                return rerun_commands(sandbox, plan_spec(plan, focus or [], self.apt), focus or [], hung)
            return ecosystem_of(plan, self.apt).render(
                plan.model_copy(update={"deselect": [*plan.deselect, *hung]}))[1]

        run, results = run_tests_with_results(
            sandbox, commands if plan.runner in ("pytest", "bintest") else commands([]), plan.runner,
            self.options.test_timeout_s, stall_timeout=self.options.stall_timeout_s, env=env,
            report_format=plan.node.tests.report_format if plan.node else None)
        iteration.commands += run.commands
        iteration.needs_network, iteration.needs_browser = list(run.needs_network), list(run.needs_browser)
        for hung in run.hung:
            self.progress(f"  crashed: {hung} (killed the test process; left out)"
                          if hung in run.crashed else f"  left out: {hung} (waits on the "
                          "network)" if hung in run.needs_network else f"  hung: {hung} (stopped after "
                          f"{self.options.stall_timeout_s:.0f}s without progress)")
        iteration.hung += [t for t in run.hung if t not in iteration.hung]
        iteration.crashed += [t for t in run.crashed if t not in iteration.crashed]
        if plan.runner in ("pytest", "bintest"):
            plan.deselect += [t for t in run.hung if t not in plan.deselect]
        hung_tests = set(run.hung)
        return results, [TestResult(name=name, status=status)
                             for name, status in run.statuses.items() if name not in hung_tests]
