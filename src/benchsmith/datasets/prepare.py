"""`benchsmith prepare`: published SWE-bench-format instances in, runnable instances out, each
checked against its own FAIL_TO_PASS / PASS_TO_PASS labels (resumable, incremental)."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from benchsmith.core import BenchsmithError, Plan, Sandbox
from benchsmith.datasets.formats import DatasetFormat, FormatError, normalise
from benchsmith.datasets.instance_images import Build, ImageBuilds, Judged
from benchsmith.datasets.labels import Cause, LabelCheck
from benchsmith.datasets.verdict import (
    FAILED_STATUSES,
    PrepareStatus,
    Verdict,
    judge,
    keeping_labels,
    slow_labels,
)
from benchsmith.harness.behaviour import Behaviour, run_instance_tests, seeded_reruns
from benchsmith.harness.checkout import cache_dir, resolve, resolve_source
from benchsmith.harness.jsonl import JsonlWriter, Resume, read_records, records_by_key
from benchsmith.harness.patches import runnable_test_files
from benchsmith.harness.prepare import network_for_tests
from benchsmith.harness.render import plan_spec, render_reinstall, render_spec
from benchsmith.instance import TaskInstance, TestSpec
from benchsmith.sandbox.config import make_sandbox
from benchsmith.sandbox.pythons import version_key
from benchsmith.sandbox.store import make_prepared_store, prepared_key
from benchsmith.setup.engine import SetupEngine
from benchsmith.setup.environments import (
    Environment,
    install_commands,
    instance_image,
    run_groups,
    sandbox_at,
    set_up,
)
from benchsmith.setup.pyversion import RELEASE_DATES
from benchsmith.setup.record import SetupRecord

_REQUIRED = ("instance_id", "repo", "base_commit", "patch", "test_patch")


class Published(BaseModel):
    """One input record: the instance as benchsmith reads it and the record as published."""

    instance: TaskInstance
    raw: dict[str, Any]  # in SWE-bench's shape (converted from its own format)
    fingerprint: str
    format: DatasetFormat = "swe-bench"


def read_published(path: Path) -> tuple[list[Published], list[str]]:
    """The usable instances of a published file (SWE-bench's or Multi-SWE-bench's format,
    :mod:`benchsmith.datasets.formats`), and one line per problem (the rest goes on)."""
    problems: list[str] = []
    found: list[Published] = []
    seen: set[str] = set()
    for where, record in read_records(path, "instance"):
        if not isinstance(record, dict):
            problems.append(f"{where}: {record if isinstance(record, str) else 'not a JSON object'}")
            continue
        try:
            record, published_as = normalise(record)
        except FormatError as exc:
            problems.append(f"{where}: {exc}")
            continue
        missing = [key for key in _REQUIRED if not record.get(key)]
        if missing:
            problems.append(f"{where}: missing {', '.join(missing)}")
            continue
        iid = str(record["instance_id"])
        if iid in seen:
            problems.append(f"{where}: duplicate instance_id {iid}")
            continue
        try:
            instance = TaskInstance.model_validate(record)
        except (ValidationError, json.JSONDecodeError) as exc:
            problems.append(f"{where}: {iid}: FAIL_TO_PASS/PASS_TO_PASS must be lists "
                            f"({str(exc).splitlines()[0]})")
            continue
        seen.add(iid)
        found.append(Published(instance=instance, raw=record, fingerprint=fingerprint(instance),
                               format=published_as))
    return found, problems


def fingerprint(instance: TaskInstance) -> str:
    """What decides an instance's verdict: a changed patch or label means it is redone."""
    parts = [instance.repo, instance.base_commit, instance.patch, instance.test_patch,
             json.dumps(instance.FAIL_TO_PASS), json.dumps(instance.PASS_TO_PASS),
             instance.environment_setup_commit, instance.created_at[:10]]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def pin_day(first: TaskInstance, setup_commit_day: str) -> str:
    """The date a group's environment is pinned to: its earliest instance's date, but never
    before its setup commit (whose requirements may need releases newer than that instance)."""
    created = first.created_at[:10]
    return max(created, setup_commit_day[:10]) if created else setup_commit_day[:10]


def _differs(verdict: Verdict) -> bool:
    """True when a published label's outcome differs from the run (not a naming question)."""
    return bool(verdict.fail_to_pass.differs or verdict.pass_to_pass.differs)


def _python_after(plan: Plan, instance: TaskInstance, available: list[str]) -> bool:
    """True when `plan`'s Python came out after the instance's own date, and one of the
    `available` Python 3 versions, older, had come out by then."""
    if plan.node is not None or not instance.created_at or plan.python not in RELEASE_DATES:
        return False
    day = date.fromisoformat(instance.created_at[:10])
    return RELEASE_DATES[plan.python] > day and any(
        (3, 0) <= version_key(v) < version_key(plan.python) and RELEASE_DATES.get(v, day) < day
        for v in available)


def _reproduced(verdict: Verdict) -> int:
    """How many of the instance's labels `verdict` reproduced (none when it has no verdict)."""
    if verdict.status in FAILED_STATUSES:
        return -1
    return len(verdict.fail_to_pass.reproduced) + len(verdict.pass_to_pass.reproduced)


def _tests_failed(made: Environment | SetupRecord) -> bool:
    """True when a setup's last round installed and ran the tests, and too few passed."""
    last = made.iterations[-1] if isinstance(made, SetupRecord) and made.iterations else None
    return (isinstance(made, SetupRecord) and made.status == "failed" and last is not None
            and any(command.phase == "test" for command in last.commands)
            and made.failure_category in ("testing", "undecidable"))


def group_key(instance: TaskInstance) -> tuple[str, str]:
    """Instances that share an environment: the same repository and environment_setup_commit,
    else the same version, else each its own."""
    if instance.environment_setup_commit:
        return instance.repo, f"commit {instance.environment_setup_commit}"
    if instance.version:
        return instance.repo, f"version {instance.version}"
    return instance.repo, f"instance {instance.instance_id}"


class Preparer:
    """Sets each group of instances up once and checks every instance's labels in it."""

    def __init__(self, engine: SetupEngine, mirrors: str | None = None, runs: int = 1,
                 progress: Callable[[str], None] | None = None,
                 on_record: Callable[[Published, Verdict], None] | None = None,
                 keep_environments: bool = True) -> None:
        self.engine, self.mirrors, self.runs = engine, mirrors, runs
        # where the backend keeps validated environments for `evaluate` (its sandboxes are
        # then made where the store can keep them without moving them)
        self.kept = (make_prepared_store(engine.options.sandbox, cache_dir() / "envs")
                     if keep_environments and engine is not None else None)
        if self.kept is not None:
            engine.options.sandbox = self.kept.sandbox_config()
        self.progress = progress or (lambda message: None)
        self.on_record = on_record or (lambda published, verdict: None)
        self._available: list[str] | None = None

    def prepare(self, published: list[Published], out: Path, jobs: int = 1,
                resume: Resume | None = None) -> list[Verdict]:
        """Prepare every instance not already in `out` with the same fingerprint and at least
        as many runs (with `resume.retry_failed`, also those whose environment failed or that
        ended in an error)."""
        resume = resume or Resume()
        done = {key: record.get("prepare") or {}
                for key, record in records_by_key(out, "instance_id").items()}
        answered = [p for p in published
                    if (done.get(p.instance.instance_id) or {}).get("fingerprint") == p.fingerprint
                    and done[p.instance.instance_id].get("runs", 1) >= self.runs]
        failed = {p.instance.instance_id for p in answered
                  if done[p.instance.instance_id].get("status") in FAILED_STATUSES}
        resume.skipping(len(answered), len(failed))
        kept = {p.instance.instance_id for p in answered
                if not resume.redo(p.instance.instance_id in failed)}
        todo = [p for p in published if p.instance.instance_id not in kept]
        groups: dict[tuple[str, str], list[Published]] = {}
        for item in sorted(todo, key=lambda p: p.instance.created_at):
            groups.setdefault(group_key(item.instance), []).append(item)
        writer = JsonlWriter(out)
        verdicts: list[Verdict] = []

        def one_group(items: list[Published]) -> None:
            written: set[str] = set()
            try:
                for item, verdict, record in self._group(items):
                    if self.engine.cancelled.is_set():
                        return  # its sandbox was torn down mid-run: no verdict, resume redoes it
                    writer.write(record)
                    written.add(item.instance.instance_id)
                    verdicts.append(verdict)
                    self.on_record(item, verdict)
            except Exception as exc:  # noqa: BLE001 — a fault of ours: this group alone ends
                if self.engine.cancelled.is_set():
                    return
                why = f"internal error ({type(exc).__name__}: {exc})"
                for item in items:
                    if item.instance.instance_id not in written:
                        _, verdict, record = self._failed(item, "error", why, "")
                        writer.write(record)
                        verdicts.append(verdict)
                        self.on_record(item, verdict)

        run_groups(self.engine, one_group, groups.values(), jobs)
        return verdicts

    def _group(self, items: list[Published]) -> Iterator[tuple[Published, Verdict, dict[str, Any]]]:
        first = items[0].instance
        setup_commit = first.environment_setup_commit or first.base_commit
        source = resolve_source(first.repo, self.mirrors)
        # validated on the group's own test files: the labels, not the whole suite, say
        # whether the environment works (a suite with a module hanging on a download is fine)
        focus = list(dict.fromkeys(f for item in items
                                   for f in runnable_test_files(item.instance.test_patch,
                                                                item.instance.language)))
        try:
            day = pin_day(first, resolve(source, rev=setup_commit).pin_date)
            self.progress(f"{first.repo}: {len(items)} instance(s), environment at "
                          f"{setup_commit[:12]} pinned to {day}, validated on {len(focus)} "
                          "test file(s) of theirs")
            made = set_up(self.engine, source, setup_commit, day, first.repo, focus=focus)
            if _tests_failed(made) and first.base_commit != setup_commit:
                # the setup commit's own tests may be broken (a module that no longer
                # imports): the environment is the same, so validate it where an instance is
                self.progress(f"{first.repo}: the tests fail at {setup_commit[:12]}; the same "
                              f"environment again at {first.instance_id}'s base commit "
                              f"{first.base_commit[:12]}")
                again = set_up(self.engine, source, first.base_commit, day, first.repo, focus=focus)
                if isinstance(again, Environment):
                    made, setup_commit = again, first.base_commit
        except BenchsmithError as exc:
            for item in items:
                yield self._failed(item, "setup_failed", str(exc), setup_commit)
            return
        if isinstance(made, SetupRecord):
            reason = f"{made.failure_category or made.status}: {made.failure_reason or ''}".strip()
            last = made.iterations[-1].diagnosis if made.iterations else None
            cause: Cause = "network" if last is not None and last.kind == "needs_network" else (
                "environment")
            for item in items:
                yield self._failed(item, "setup_failed", reason, setup_commit, cause)
            return
        self._keep(made, first.repo)
        builds = ImageBuilds()  # each instance image is built while the next instance runs
        try:
            for item in items:
                if self.engine.cancelled.is_set():
                    raise KeyboardInterrupt
                judged = self._instance(item, made, source, setup_commit)
                if judged[1].status in ("differs", "fail_to_pass_reproduced") and _python_after(
                        made.plan, item.instance, self._pythons()):
                    judged = self._alone(item, source, judged)
                builds.add(judged[:3], judged[3])
                yield from builds.ready()
            yield from builds.rest()
        finally:
            builds.close()
            made.close()

    def _pythons(self) -> list[str]:
        """The Python versions the backend has (asked once)."""
        if self._available is None:
            probe = make_sandbox(self.engine.options.sandbox)
            try:
                self._available = list(probe.available_pythons())
            finally:
                probe.close()
        return self._available

    def _alone(self, item: Published, source: str, found: Judged) -> Judged:
        """An instance whose labels are not all reproduced in its group's environment, whose
        Python came out after the instance's date, in an environment of its own: set up at its
        base commit and date, with a Python of then (old code may not run on a newer one: an
        ABC gone from `collections`, a warning the suite turns into an error). Kept when it
        reproduces more labels."""
        instance = item.instance
        day = pin_day(instance, resolve(source, rev=instance.base_commit).pin_date)
        self.progress(f"{instance.instance_id}: labels not reproduced on a Python newer than the instance; "
                      f"an environment of its own at {instance.base_commit[:12]} pinned to {day}")
        made = set_up(self.engine, source, instance.base_commit, day, instance.repo,
                      focus=runnable_test_files(instance.test_patch, instance.language))
        if not isinstance(made, Environment):
            return found
        try:
            self._keep(made, instance.repo)
            again = self._instance(item, made, source, instance.base_commit)
        finally:
            made.close()
        better = _reproduced(again[1]) > _reproduced(found[1])
        self.progress(f"{instance.instance_id}: on Python {made.plan.python}, "
                      f"{_reproduced(again[1])} label(s) reproduced against {_reproduced(found[1])}"
                      + ("; kept" if better else "; the group's verdict stays"))
        return again if better else found

    def _keep(self, environment: Environment, repo: str) -> None:
        """Keep the validated environment (still at its setup commit) for `evaluate`, under
        the key its instances' records give (:func:`prepared_key`)."""
        if self.kept is None or environment.sandbox is None:
            return
        plan = environment.plan
        key = prepared_key(repo, environment.setup_commit, plan.python, plan.exclude_newer,
                           install_commands(self.engine, plan))
        try:
            environment.sandbox.set_network(True)  # as it was validated: its next owner installs
            self.kept.keep(environment.sandbox, key)
        except BenchsmithError as exc:  # the verdicts still stand; evaluate installs instead
            self.progress(f"{repo}: the environment could not be kept for evaluate: {exc}")
        else:
            self.progress(f"{repo}: environment kept for evaluate ({key.name})")

    def _instance(self, item: Published, environment: Environment, source: str, setup_commit: str
                  ) -> Judged:
        """The instance judged in the environment, and how its instance image is built."""
        instance = item.instance
        started = time.monotonic()
        plan = environment.plan
        self.progress(f"{instance.instance_id}: base {instance.base_commit[:12]}")
        try:
            checkout = resolve(source, rev=instance.base_commit, on_date=environment.record.date,
                               repo=instance.repo)
            sandbox = sandbox_at(self.engine, environment, plan, checkout)
            # the labels are checked in the network `evaluate` gives a prediction's tests
            network = network_for_tests(sandbox, self.engine.options.sandbox.network,
                                     offline=self.engine.options.offline_tests)
            behaviour = self._run(sandbox, instance, plan, self.runs)
            verdict = judge(instance, behaviour)
            if self.runs == 1 and not behaviour.error and _differs(verdict):
                # a label that differs once is run twice more per side, under other hash
                # seeds (the producer's were random): a test whose outcome changes is
                # flaky, no verdict (sympy's, as its bin/test randomises string hashing)
                self.progress(f"{instance.instance_id}: labels differ; two more runs per "
                              "side, under other hash seeds")
                options = self.engine.options
                behaviour = seeded_reruns(
                    lambda: sandbox_at(self.engine, environment, plan, checkout),
                    self._spec(plan, instance), instance.patch, instance.test_patch, behaviour,
                    ("1", "2"), options.test_timeout_s, options.stall_timeout_s,
                    slow_labels(instance))
                verdict = judge(instance, behaviour)
        except BenchsmithError as exc:
            environment.close()
            return (*self._failed(item, "error", str(exc), setup_commit), None)
        if behaviour.error:
            environment.close()  # patches may be half applied: never reuse this sandbox
            return (*self._failed(item, "error", behaviour.error, setup_commit,
                                  behaviour.error_cause), None)
        verdict.fingerprint, verdict.setup_commit = item.fingerprint, setup_commit
        verdict.runs, verdict.test_network = len(behaviour.after) or self.runs, network
        spec = keeping_labels(plan_spec(plan, behaviour.test_files, self.engine.apt), instance)
        build: Build | None = (lambda: instance_image(self.engine, environment.record, checkout)
                               ) if environment.record.image else None
        verdict.environment = environment.record.image or setup_commit
        verdict.instance_s = round(time.monotonic() - started, 2)
        verdict.tests_s = behaviour.tests_s
        verdict.environment_s = environment.record.duration_s or 0.0
        # the install ran at the setup commit; the project then went in at base_commit
        moved = setup_commit != instance.base_commit
        record = {**item.raw,
                  "install": install_commands(self.engine, plan),
                  "node": plan.node.model_dump(mode="json") if plan.node else None,
                  "reinstall": render_reinstall(plan) if moved else None, "test": [render_spec(spec)],
                  "test_spec": spec.model_dump(mode="json"), "test_files": behaviour.test_files,
                  "python": plan.python, "exclude_newer": plan.exclude_newer, "runner": plan.runner,
                  "image": None, "provenance": self.engine.provenance().model_dump(mode="json"),
                  "history": None, "prepare": verdict.model_dump(mode="json")}
        return item, verdict, record, build

    def _run(self, sandbox: Sandbox, instance: TaskInstance, plan: Plan, runs: int) -> Behaviour:
        """The instance's tests before and after its gold patch, `runs` times per side."""
        options = self.engine.options
        return run_instance_tests(sandbox, self._spec(plan, instance), instance.patch,
                                  instance.test_patch, runs=runs, timeout=options.test_timeout_s,
                                  stall_timeout=options.stall_timeout_s, labels=slow_labels(instance))

    def _spec(self, plan: Plan, instance: TaskInstance) -> TestSpec:
        """How the plan runs the instance's tests (with every test its labels name)."""
        return keeping_labels(plan_spec(plan, [], self.engine.apt), instance)

    def _failed(self, item: Published, status: PrepareStatus, reason: str, setup_commit: str,
                cause: Cause | None = None) -> tuple[Published, Verdict, dict[str, Any]]:
        labels = item.instance  # nothing reproduced: every published label is still to check
        cause = cause or ("environment" if status == "setup_failed" else "error")
        verdict = Verdict(status=status, reason=reason, cause=cause, fingerprint=item.fingerprint,
                          setup_commit=setup_commit,
                          fail_to_pass=LabelCheck(total=len(labels.FAIL_TO_PASS)),
                          pass_to_pass=LabelCheck(total=len(labels.PASS_TO_PASS)), runs=self.runs)
        return item, verdict, {**item.raw, "prepare": verdict.model_dump(mode="json")}
