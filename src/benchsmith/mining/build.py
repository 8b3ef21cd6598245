"""`benchsmith build`: valid pull requests in, validated task instances out (resumable)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.core import BenchsmithError, Plan, Provenance
from benchsmith.executor import Executor, Resources, TaskOutcome
from benchsmith.harness.behaviour import Behaviour, run_instance_tests
from benchsmith.harness.checkout import Checkout, day_not_before_commit, git, resolve
from benchsmith.harness.jsonl import JsonlWriter, Resume, records_by_key
from benchsmith.harness.languages import instance_language
from benchsmith.harness.patches import touched_files
from benchsmith.harness.render import plan_spec, render_spec
from benchsmith.harness.worktree import Worktree
from benchsmith.instance import TaskInstance
from benchsmith.mining.models import Outcome, PullRequest, instance_id
from benchsmith.mining.quality import Policy, dropped, quality_flags
from benchsmith.sandbox.deadline import task_deadline
from benchsmith.setup.engine import SetupEngine, SetupOptions
from benchsmith.setup.environments import (
    Environment,
    install_commands,
    instance_image,
    run_groups,
    same_dependencies,
    sandbox_at,
    set_up,
)
from benchsmith.setup.record import SetupRecord
from benchsmith.setup.refdb import ReferenceDB, ReferencePlans, ReferenceSpec

# Outcomes a --retry-failed re-run builds again (the others are the PR's verdict).
FAILED_STAGES = frozenset({"error", "setup_failed"})


def _version(checkout: Checkout) -> str:
    try:
        tag = git("describe", "--tags", "--abbrev=0", checkout.commit, cwd=checkout.git_dir).strip()
    except BenchsmithError:
        return "0.0"
    parts = tag.lstrip("vV").split(".")
    return ".".join(parts[:2]) if parts and parts[0].isdigit() else "0.0"


# Grades a new instance's gold patch the way `evaluate` does, in a work tree at its base commit:
# None when it is resolved, else why not. The CLI passes evaluation's own (mining cannot import it).
Regrade = Callable[[TaskInstance, Worktree], str | None]


class InstanceBuilder:
    """Builds instances repository by repository, newest PR first, reusing environments."""

    def __init__(self, engine: SetupEngine, per_repo: int | None = None, runs: int = 2,
                 progress: Callable[[str], None] | None = None, quality: Policy = "default",
                 regrade: Regrade | None = None) -> None:
        self.engine = engine
        self.per_repo = per_repo
        self.runs = runs
        self.quality = quality
        self.regrade = regrade
        self.progress = progress or (lambda message: None)

    def build(self, prs: Iterable[PullRequest], out: Path, log: Path, jobs: int = 1,
              executor: Executor | None = None, resume: Resume | None = None) -> list[Outcome]:
        """Build every PR not already in `log` (one that ended in an error or a failed setup
        again with `resume.retry_failed`); append instances to `out`, outcomes to `log`.

        Repositories are built in parallel (`jobs` threads, or the tasks of a remote
        `executor`), the PRs of one repository in order. Remote tasks hand their instances and
        outcomes back when their repository is finished; only the driver writes."""
        done = _done(log)
        # An instance written just before a kill, without its log line, counts as done too.
        for iid in _done(out):
            done.setdefault(iid, {"instance_id": iid, "stage": "valid"})
        resume = resume or Resume()
        prs = list(prs)
        answered = [done[iid] for iid in {instance_id(pr.repo, pr.number) for pr in prs} if iid in done]
        failures = sum(1 for outcome in answered if outcome.get("stage") in FAILED_STAGES)
        resume.skipping(len(answered), failures)
        if resume.retry_failed:
            done = {iid: o for iid, o in done.items() if o.get("stage") not in FAILED_STAGES}
        instances, outcomes = JsonlWriter(out), JsonlWriter(log)
        valid_so_far = Counter(str(o.get("repo") or str(o["instance_id"]).rsplit("-", 1)[0].replace("__", "/"))
                               for o in done.values() if o.get("stage") == "valid")
        by_repo: dict[str, list[PullRequest]] = {}
        for pr in prs:
            by_repo.setdefault(pr.repo, []).append(pr)
        written: list[Outcome] = []

        def keep(outcome: Outcome, instance: dict[str, Any] | None) -> None:
            if instance is not None:
                instances.write(instance)
            outcomes.write(outcome)
            written.append(outcome)

        if executor is not None and executor.remote:
            self._build_remote(executor, by_repo, set(done), valid_so_far, keep)
            return written

        limit = executor.config.task_timeout_s if executor is not None else None

        def one_repo(repo: str) -> None:
            with task_deadline(limit):  # past it, the repository's remaining PRs are errors
                self.build_repo(by_repo[repo], set(done), valid_so_far[repo], keep)

        run_groups(self.engine, one_repo, by_repo, jobs)
        return written

    def build_repo(self, prs: list[PullRequest], done: set[str], valid: int,
                   keep: Callable[[Outcome, dict[str, Any] | None], None]) -> None:
        """The PRs of one repository, newest first, until `per_repo` are valid (`valid` of them
        were before); `keep` gets every outcome and instance as it is decided."""
        environment: Environment | None = None
        try:
            for pr in sorted(prs, key=lambda p: p.created_at, reverse=True):
                if self.engine.cancelled.is_set():
                    raise KeyboardInterrupt
                if instance_id(pr.repo, pr.number) in done:
                    continue
                if self.per_repo is not None and valid >= self.per_repo:
                    break
                try:
                    outcome, instance, environment = self._one(pr, environment)
                except BenchsmithError as exc:  # e.g. the base commit is missing
                    outcome, instance = Outcome(instance_id=instance_id(pr.repo, pr.number),
                                                repo=pr.repo, stage="error", reason=str(exc)), None
                if self.engine.cancelled.is_set():
                    raise KeyboardInterrupt  # its sandbox was torn down mid-run: not a result
                valid += instance is not None
                keep(outcome, instance.to_record() if instance else None)
        finally:
            if environment is not None:
                environment.close()

    def _build_remote(self, executor: Executor, by_repo: dict[str, list[PullRequest]],
                      done: set[str], valid_so_far: Counter[str],
                      keep: Callable[[Outcome, dict[str, Any] | None], None]) -> None:
        refdb = self.engine.refdb if isinstance(self.engine.refdb, ReferenceDB) else None
        backend = self.engine.options.sandbox.type
        payloads = [(repo, RepoTask(prs=prs, done=done, valid=valid_so_far[repo],
                                    options=self.engine.options, per_repo=self.per_repo,
                                    runs=self.runs, quality=self.quality, regrade=self.regrade,
                                    references=refdb.of_repo(repo, backend) if refdb else []))
                    for repo, prs in by_repo.items()]

        nodes: Counter[str] = Counter()

        def on_outcome(outcome: TaskOutcome[RepoAnswer]) -> None:
            answer = outcome.value
            if answer is None:  # the worker died more often than retries allow, or timed out
                for pr in by_repo[outcome.key]:
                    if instance_id(pr.repo, pr.number) not in done:
                        keep(Outcome(instance_id=instance_id(pr.repo, pr.number), repo=pr.repo,
                                     stage="error", reason=outcome.error or "no result"), None)
                return
            for spec in answer.saved:
                assert refdb is not None
                refdb.store(spec)
            for result, record in answer.results:
                keep(result, record)
            nodes[outcome.node] += 1
            self.progress(f"{outcome.key}: {len(answer.results)} PR(s) decided on node "
                          f"{outcome.node} ({sum(nodes.values())}/{len(payloads)} repositories; "
                          + ", ".join(f"{n}: {c}" for n, c in sorted(nodes.items())) + ")")

        executor.run(build_repo_task, payloads,
                     Resources(custom=self.engine.options.sandbox.node_resources),
                     on_outcome, self.engine.cancel)

    def _one(self, pr: PullRequest, environment: Environment | None
             ) -> tuple[Outcome, TaskInstance | None, Environment | None]:
        iid = instance_id(pr.repo, pr.number)
        self.progress(f"{iid}: base {pr.base_commit[:12]}")
        started = time.monotonic()
        source = pr.source or f"https://github.com/{pr.repo}"
        day = day_not_before_commit(source, pr.base_commit, pr.created_at, pr.repo)
        checkout = resolve(source, rev=pr.base_commit, on_date=day, repo=pr.repo)
        reused = environment is not None and same_dependencies(checkout, environment.commit)
        if not reused:
            if environment is not None:
                environment.close()
            # The validating sandbox is installed at this very commit: the first instance runs there.
            made = set_up(self.engine, source, pr.base_commit, day, pr.repo)
            if isinstance(made, SetupRecord):  # an error (the task's limit, the machine) is no verdict
                return (Outcome(instance_id=iid, repo=pr.repo,
                                stage="error" if made.status == "error" else "setup_failed",
                                reason=made.failure_reason or made.status), None, None)
            environment = made
            started = time.monotonic()  # the marginal time starts once the environment is known
        assert environment is not None
        plan = environment.plan.model_copy(update={"exclude_newer": checkout.exclude_newer})
        try:
            sandbox = sandbox_at(self.engine, environment, plan, checkout)
            worktree = Worktree(sandbox)  # the base, for the gold re-grade
            behaviour = run_instance_tests(sandbox, plan_spec(plan, [], self.engine.apt), pr.patch, pr.test_patch,
                                           runs=self.runs,
                                           timeout=self.engine.options.test_timeout_s,
                                           progress=lambda message: self.progress(f"{iid}: {message.strip()}"),
                                           stall_timeout=self.engine.options.stall_timeout_s)
        except BenchsmithError as exc:
            environment.close()
            return Outcome(instance_id=iid, repo=pr.repo, stage="error", reason=str(exc),
                           setup_reused=reused), None, environment

        def ended(stage: str, **fields: Any) -> Outcome:
            """The PR's outcome once its tests ran: with the flaky tests they showed."""
            return Outcome(instance_id=iid, repo=pr.repo, stage=stage, setup_reused=reused,
                           flaky=behaviour.flaky_runs, **fields)

        if behaviour.error:
            environment.close()  # patches may be half applied: never reuse this sandbox
            return ended("error", reason=behaviour.error), None, environment
        if not behaviour.FAIL_TO_PASS:
            counts = (f"{len(behaviour.PASS_TO_PASS)} PASS_TO_PASS, "
                      f"{len(behaviour.FAIL_TO_FAIL)} FAIL_TO_FAIL")
            return ended("no_fail_to_pass", reason=counts), None, environment
        hung = list(dict.fromkeys(t for run in behaviour.before + behaviour.after for t in run.hung))
        if hung_f2p := [t for t in behaviour.FAIL_TO_PASS if t in hung]:
            # every unresolved prediction would wait the stall limit for it
            why = f"FAIL_TO_PASS test {hung_f2p[0]} hangs before the fix"
            return ended("hung", hung=hung, reason=why), None, environment
        before = behaviour.before[0].statuses if behaviour.before else {}
        flags = quality_flags(pr.problem_statement, pr.problem_source, pr.patch,
                              behaviour.FAIL_TO_PASS, before, _base_text(checkout, pr.patch))
        if dropped_by := dropped(flags, self.quality):
            return ended("low_quality", flags=flags,
                         reason="; ".join(f"{f}: {flags[f]}" for f in dropped_by)), None, environment
        instance = self._instance(pr, checkout, plan, environment, behaviour, hung)
        instance.quality_flags = flags
        if self.regrade is not None:
            try:
                worktree.reset()
                failed = self.regrade(instance, worktree)
                worktree.reset()
                sandbox.exec("git reset -q", timeout=120)  # as it was before the work tree's checkpoints
            except BenchsmithError as exc:
                failed = str(exc)
            if failed:
                environment.close()  # the re-grade may have left the tree changed
                return ended("gold_unresolved", hung=hung, reason=failed, flags=flags), None, environment
        if environment.record.image:
            instance.image, instance.history = instance_image(self.engine, environment.record,
                                                              checkout)
        instance.instance_s = round(time.monotonic() - started, 2)
        return ended("valid", flags=flags, hung=hung), instance, environment

    def _instance(self, pr: PullRequest, checkout: Checkout, plan: Plan,
                  environment: Environment, behaviour: Behaviour, hung: list[str]) -> TaskInstance:
        spec = plan_spec(plan, behaviour.test_files, self.engine.apt)
        # tests that hung (none of them FAIL_TO_PASS) are left out of the instance's command
        spec.deselect += [t for t in hung if t not in spec.deselect]
        return TaskInstance(
            instance_id=instance_id(pr.repo, pr.number), repo=pr.repo, base_commit=pr.base_commit,
            patch=pr.patch, test_patch=pr.test_patch, problem_statement=pr.problem_statement,
            hints_text=pr.hints_text, created_at=pr.created_at, version=_version(checkout),
            FAIL_TO_PASS=behaviour.FAIL_TO_PASS, PASS_TO_PASS=behaviour.PASS_TO_PASS,
            environment_setup_commit=environment.setup_commit,
            language=instance_language(plan.ecosystem, checkout),
            install=install_commands(self.engine, plan),
            test=[render_spec(spec)], test_spec=spec, test_files=behaviour.test_files,
            python=plan.python, exclude_newer=plan.exclude_newer, runner=plan.runner, node=plan.node,
            flaky=behaviour.flaky, flaky_runs=behaviour.flaky_runs, FAIL_TO_FAIL=behaviour.FAIL_TO_FAIL,
            PASS_TO_FAIL=behaviour.PASS_TO_FAIL, issue_numbers=pr.issue_numbers,
            issue_link=pr.issue_link,
            problem_source=pr.problem_source, tests_s=behaviour.tests_s,
            provenance=self._provenance(),
        )

    def _provenance(self) -> Provenance:
        provenance = self.engine.provenance()
        provenance.options.update(runs=self.runs, per_repo=self.per_repo)
        return provenance


def _base_text(checkout: Checkout, patch: str) -> str:
    """The base versions of the files `patch` changes (new files have none)."""
    texts = []
    for path in touched_files(patch):
        try:
            texts.append(git("show", f"{checkout.commit}:{path}", cwd=checkout.git_dir))
        except BenchsmithError:
            continue
    return "\n".join(texts)


def _done(log: Path) -> dict[str, dict[str, object]]:
    return records_by_key(log, "instance_id")


def read_outcomes(log: Path) -> list[Outcome]:
    """The build log's outcomes, one per PR (the last line of a PR wins)."""
    return [Outcome.model_validate(record) for record in records_by_key(log, "instance_id").values()]


@dataclass
class RepoTask:
    """One repository's PRs as a remote worker receives them, with what the builder needs."""

    prs: list[PullRequest]
    done: set[str]
    valid: int
    options: SetupOptions
    per_repo: int | None
    runs: int
    quality: Policy
    regrade: Regrade | None
    references: list[ReferenceSpec] = field(default_factory=list)


@dataclass
class RepoAnswer:
    """A repository's outcomes (with the instance records of the valid ones) and the plans
    its setups validated, for the driver to write."""

    results: list[tuple[Outcome, dict[str, Any] | None]]
    saved: list[ReferenceSpec]


def build_repo_task(task: RepoTask, cancelled: threading.Event) -> RepoAnswer:
    """Worker side of a remote build: an engine of its own over the plans it was handed."""
    plans = ReferencePlans(task.references) if task.options.use_refdb else None
    engine = SetupEngine(task.options, refdb=plans)
    engine.cancelled = cancelled
    builder = InstanceBuilder(engine, task.per_repo, task.runs, quality=task.quality,
                              regrade=task.regrade)
    results: list[tuple[Outcome, dict[str, Any] | None]] = []
    builder.build_repo(task.prs, task.done, task.valid,
                       lambda outcome, record: results.append((outcome, record)))
    return RepoAnswer(results=results, saved=plans.saved if plans else [])
