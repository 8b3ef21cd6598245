"""The record of one setup: what was run, what came out, and how it was judged."""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, Field

from benchsmith.core import (
    FAILING,
    CommandRun,
    Diagnosis,
    EcosystemEvidence,
    EcosystemName,
    ExecResult,
    History,
    NodePlan,
    Plan,
    Provenance,
    output_tail,
)
from benchsmith.harness.testrun import TestCounts

__all__ = ["CommandRun", "Iteration", "SetupRecord", "TestCounts"]


class Iteration(BaseModel):
    """One attempt: a fresh sandbox, the plan's commands, the verdict, the repair chosen next."""

    round: int
    python: str
    origin: str  # "rules", "reference <commit> <date>", or "repair"
    commands: list[CommandRun] = Field(default_factory=list)
    tests: dict[str, int] = Field(default_factory=dict)
    pass_rate: float | None = None
    validated: bool = False
    diagnosis: Diagnosis | None = None
    repair: str | None = None
    undone: str | None = None  # the previous round's repair, when it changed nothing
    image: str | None = None  # environment image committed from this attempt (Docker)
    history: History | None = None  # the image's git history, cut at the commit
    hung: list[str] = Field(default_factory=list)  # tests stopped for making no progress
    crashed: list[str] = Field(default_factory=list)  # of `hung`: killed the test process
    needs_network: list[str] = Field(default_factory=list)  # failed reaching another host
    needs_browser: list[str] = Field(default_factory=list)  # failed: their browser is not here
    missing_input: list[str] = Field(default_factory=list)  # failed: their snapshot file is absent
    offline: bool = False  # the tests ran cut off from the network (loopback only)
    # requirements of the project's extras that skip reasons named (see setup/optional.py)
    optional: list[str] = Field(default_factory=list)
    # test modules pytest could not import ("path: error"), also in a validated round
    collection_errors: list[str] = Field(default_factory=list)
    system_packages: list[str] = Field(default_factory=list)  # Debian packages it installed
    duration_s: float = 0.0

    def finished(self, started: float) -> Iteration:
        """This attempt, its duration set from `started` (a `time.monotonic()` reading)."""
        self.duration_s = round(time.monotonic() - started, 2)
        return self


class SetupRecord(BaseModel):
    """What `benchsmith setup` writes (setup.json, or one line of setup-batch's JSONL)."""

    repo: str
    source: str
    commit: str | None = None
    date: str | None = None
    exclude_newer: str | None = None
    status: Literal["validated", "failed", "error"]
    ecosystem: EcosystemName = "python"  # whose rules set it up (Plan.ecosystem)
    # why the repository was taken for a project of that ecosystem: its files, its CI
    ecosystem_evidence: EcosystemEvidence | None = None
    python: str | None = None  # node plans: the Python node-gyp builds with
    # ecosystem "node": the Node release and its source, manager and version, dating of the
    # dependencies, install-script download variables set, the runner and its report format
    node: NodePlan | None = None
    install: list[str] = Field(default_factory=list)
    test: list[str] = Field(default_factory=list)
    runner: str | None = None
    tests: TestCounts = Field(default_factory=TestCounts)
    pass_rate: float | None = None
    threshold: float = 0.95
    iterations: list[Iteration] = Field(default_factory=list)
    plan: Plan | None = None
    sources: dict[str, list[str]] = Field(default_factory=dict)
    duration_s: float = 0.0
    clean_run_s: float | None = None
    llm_calls: int = 0
    model_assisted: bool = False  # a repair proposed by the model (--model) is in the validated plan
    failure_category: str | None = None
    failure_reason: str | None = None
    backend: str = "local"
    image: str | None = None  # benchsmith/env.<owner>__<name>:<commit12> (Docker backend)
    dockerfile: str | None = None  # rebuilds `image` from its base with the recorded commands
    history: History | None = None  # what `image`'s checkout keeps of git history (cut at commit)
    benchsmith_version: str = ""
    provenance: Provenance | None = None
    input: str | None = None  # the setup-batch line this record answers
    hung: list[str] = Field(default_factory=list)  # tests left out because they hung
    # of `hung`: killed the test process; Node: test files left out, a test in each crashed the
    # runner (the plan's notes say which error)
    crashed: list[str] = Field(default_factory=list)
    # validated on these test files only (a dataset's own tests, `prepare`); empty: the suite
    focus: list[str] = Field(default_factory=list)
    needs_network: list[str] = Field(default_factory=list)  # not counted: need the network
    needs_browser: list[str] = Field(default_factory=list)  # not counted: their browser is absent
    # not counted: they compare against a snapshot file the source lacks (setup/missing_inputs.py)
    missing_input: list[str] = Field(default_factory=list)
    stand_ins: list[str] = Field(default_factory=list)  # public hosts local stand-ins answered for
    tests_offline: bool = False  # the validating tests ran without network access
    network: dict[str, str] = Field(default_factory=dict)  # phase -> the network it had
    missing_submodules: list[str] = Field(default_factory=list)  # could not be checked out
    # could not be checked out, provided from the package index: path -> "name==version"
    provided_submodules: dict[str, str] = Field(default_factory=dict)
    missing_files: list[str] = Field(default_factory=list)  # tracked files the source lacks
    # of the round reported: test modules that did not import, failing tests by error
    collection_errors: list[str] = Field(default_factory=list)
    failure_groups: list[str] = Field(default_factory=list)  # "count x error (e.g. test)"
    # Debian packages the rounds installed that their sandbox lacked (local: onto this host)
    system_packages: list[str] = Field(default_factory=list)

    def report(self, plan: Plan, rendered: tuple[list[str], list[str]], iteration: Iteration) -> None:
        """Take the plan (and its rendered commands) and the test bookkeeping of the round
        this record reports: the validating one, or the last."""
        self.plan, self.python, self.runner, self.sources = plan, plan.python, plan.runner, plan.sources
        self.node = plan.node
        self.install, self.test = rendered
        self.pass_rate = iteration.pass_rate
        self.hung, self.crashed = list(iteration.hung), list(iteration.crashed)
        if plan.node is not None:  # test files left out: a test in each crashed the runner
            self.crashed += [f for f in plan.node.tests.crashed if f not in self.crashed]
        self.needs_network = list(iteration.needs_network)
        self.needs_browser = list(iteration.needs_browser)
        self.missing_input = list(iteration.missing_input)
        self.collection_errors = list(iteration.collection_errors)
        self.failure_groups = list(iteration.diagnosis.facts.get("failure_groups", [])
                                   if iteration.diagnosis else [])
        self.system_packages = list(dict.fromkeys(p for i in self.iterations for p in i.system_packages))
        self.stand_ins = list(plan.stand_ins)


def test_outcome(counts: TestCounts, rate: float | None,
             diagnosis: Diagnosis) -> tuple[frozenset[str], float | None, str] | None:
    """What a test run showed: the failing tests and the pass rate; when no test ran, what the
    diagnosis made of it (another missing module is progress, the same usage error is not)."""
    if not counts.tests:
        return frozenset(), None, diagnosis.reason
    failing = frozenset(t.name for t in counts.tests if t.status in FAILING)
    # The same tests failing for the next missing thing (a shared library, then another) is
    # progress: what is missing is part of the outcome.
    missing = (repr(sorted((k, sorted(v)) for k, v in diagnosis.facts.items()))
               if diagnosis.kind in _MISSING_KINDS else "")
    return failing, rate, missing


def regressed(before: Iteration, after: Iteration) -> bool:
    """True if `after` (the round after a repair) passed fewer tests at a lower rate."""
    if before.pass_rate is None or after.pass_rate is None:
        return False
    return (after.pass_rate < before.pass_rate
            and after.tests.get("PASSED", 0) < before.tests.get("PASSED", 0))


# Diagnoses whose facts name something missing that a repair adds.
_MISSING_KINDS = frozenset({"system_packages", "missing_modules", "missing_plugins", "needs_service",
                            "unknown_options"})


def command_run(phase: Literal["install", "test"], result: ExecResult,
                tests: int | None = None) -> CommandRun:
    """A command's result as the record keeps it."""
    return CommandRun(phase=phase, command=result.command, returncode=result.returncode,
                      duration_s=result.duration_s, timed_out=result.timed_out, tests=tests,
                      log_tail=output_tail(result.output, lines=30, width=10_000))


def failure_summary(record: SetupRecord, diagnosis: Diagnosis) -> tuple[str, str]:
    """(category, reason) of a failed record from its last diagnosis, with what else explains
    it: submodules or files the source lacked, and an earlier round that did better."""
    category = "infrastructure" if diagnosis.infrastructure else diagnosis.category
    reason = diagnosis.reason
    if record.missing_submodules:  # often the cause: sources or data never arrived
        reason += f" (submodules not checked out: {', '.join(record.missing_submodules)})"
    if record.missing_files:  # tests compare against files that never arrived
        reason += (f" (the source lacks {len(record.missing_files)} tracked file(s): "
                   f"{', '.join(record.missing_files[:3])})")
    last = record.iterations[-1] if record.iterations else None
    best = max(record.iterations, key=lambda i: i.pass_rate or 0.0, default=None)
    if last and best and (best.pass_rate or 0.0) > (last.pass_rate or 0.0):  # a later plan did worse
        why = best.diagnosis.reason if best.diagnosis else f"pass rate {best.pass_rate:.1%}"
        reason += f" (best: round {best.round}: {why})"
    return category, reason
