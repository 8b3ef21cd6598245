"""The core interfaces and typed results of benchsmith, on one page.

*Where* commands run is a :class:`Sandbox`; *how* they run is :meth:`Sandbox.exec`
returning an :class:`ExecResult`; *what* is done (setting up a repository) is
driven by a :class:`Planner`, a :class:`Repairer` and a :class:`LogParser`.
A :class:`Model` (an LLM) is optional and plugs into planners and repairers.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, BeforeValidator, Field

from benchsmith.core.node import NODE_RUNNERS, NodePlan, NodeTestRun

__all__ = ["BenchsmithError", "CHECKOUT_PATH", "CommandRun", "Diagnosis", "DiagnosisKind",
           "Ecosystem", "EcosystemEvidence", "EcosystemName", "ErrorCategory", "ExecResult",
           "FAILING", "History", "LogParser", "Model", "NODE_RUNNERS", "NodePlan", "NodeTestRun",
           "PASSING", "Plan", "Planner", "Provenance", "Repairer", "RunnerKind", "SCRIPT_RUNNERS",
           "Sandbox", "Service", "ServiceKind", "TestResult", "TestScript", "TestStatus",
           "output_tail"]


class BenchsmithError(Exception):
    """An error with a one-line message meant for the user (bad input, missing tool)."""


class ExecResult(BaseModel):
    """The outcome of one command run in a sandbox."""

    command: str
    returncode: int
    output: str = Field(description="stdout and stderr interleaved, possibly truncated")
    timed_out: bool = False
    stalled: bool = False  # killed because its output stopped growing (see `stall_timeout`)
    duration_s: float = 0.0
    truncated: bool = False
    # what the sandbox had to stop: a limit reached (memory, processes, disk), the sandbox
    # itself stopped, processes left running after the command; one line each
    contained: list[str] = Field(default_factory=list)
    sandbox_stopped: bool = False  # the command stopped its sandbox: nothing more runs there

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.stalled


class TestStatus(str, Enum):
    """Per-test outcome, as pytest names them."""

    __test__ = False  # not a pytest test class

    PASSED = "PASSED"
    FAILED = "FAILED"
    ERROR = "ERROR"
    SKIPPED = "SKIPPED"
    XFAIL = "XFAIL"
    XPASS = "XPASS"


# Statuses that count as a pass wherever tests are graded (setup validation, mining, evaluation).
PASSING: frozenset[TestStatus] = frozenset({TestStatus.PASSED, TestStatus.XFAIL, TestStatus.XPASS})
FAILING: frozenset[TestStatus] = frozenset({TestStatus.FAILED, TestStatus.ERROR})
# Where a container (and an exported image) keeps the checkout. A test ID that carries the
# checkout's path (a parametrized path) is spelled with this one whatever the sandbox, so the
# same test has the same name in every run and on every backend.
CHECKOUT_PATH = "/work/repo"


def output_tail(output: str, lines: int = 1, width: int = 200) -> str:
    """The last `lines` non-blank lines of `output` (each cut to `width`), or "no output"."""
    kept = [line[:width] for line in output.strip().splitlines() if line.strip()][-lines:]
    return "\n".join(kept) if kept else "no output"


class CommandRun(BaseModel):
    """One command as a record keeps it: what ran, its exit status and time, the output's end."""

    command: str
    returncode: int
    duration_s: float = 0.0
    timed_out: bool = False
    phase: Literal["setup", "install", "test"] | None = None
    tests: int | None = None  # per-test results parsed from its output, for test commands
    log_tail: str = ""


class TestResult(BaseModel):
    """One test and its status."""

    __test__ = False

    name: str
    status: TestStatus
    # the first line of its docstring where the runner printed it in place of the name
    # (unittest and Django at verbosity 2): some producers' parsers named the test so
    description: str | None = None


ErrorCategory = Literal["python", "installation", "testing", "undecidable"]
# What a diagnosis found; repair rules are keyed by it (setup/repair.py::RULES).
DiagnosisKind = Literal[
    "build_dependency_missing", "build_needs_network", "collection_errors", "dependency_build_failed",
    "direct_url_unreachable", "extra_dependency_build_failed", "install_failed", "invalid_metadata",
    "invalid_requirement", "killed", "missing_modules", "missing_path", "missing_plugins", "missing_programs",
    "missing_requirement_file", "needs_network", "needs_service", "network", "no_pep660", "no_tests", "not_in_registry",
    "prepare_step", "project_build_failed", "project_not_importable", "pytest_internal_error",
    "python_incompatible", "python_unavailable", "removed_api", "stalled",
    "syntax_error_in_dependency",
    "system_packages", "test_environment", "tests_failing", "timeout", "unknown_options", "unsatisfiable",
    "warnings_as_errors", "yanked",
    # Node.js: runtime engines, peer dependencies, lockfiles, module formats, build output, heap
    "build_output_missing", "engine_mismatch", "gyp_python", "heap_exhausted", "lockfile_unusable",
    "manager_defect", "module_format", "node_version", "peer_conflict", "script_download_failed",
    "test_file_crashed",
    "unknown",  # no rule of the ecosystem names the cause
]
_KIND_ALIASES = {"system_package": "system_packages"}  # written by benchsmith 0.1.0 records


def _kind_alias(value: Any) -> Any:
    return _KIND_ALIASES.get(value, value) if isinstance(value, str) else value


class Diagnosis(BaseModel):
    """What went wrong in an attempt, in the paper's four categories, with evidence."""

    category: ErrorCategory
    kind: Annotated[DiagnosisKind, BeforeValidator(_kind_alias)]
    reason: str
    evidence: str = ""
    # Machine-readable facts a repairer may act on (e.g. {"modules": ["yaml"]}).
    facts: dict[str, list[str]] = Field(default_factory=dict)
    infrastructure: bool = False  # the machine, not the repository, is at fault


ServiceKind = Literal["postgresql", "mysql", "redis"]


class Service(BaseModel):
    """A server the tests need (started from Debian's package where the backend can)."""

    kind: ServiceKind
    user: str | None = None
    password: str | None = None
    database: str | None = None
    root_password: str | None = None  # MySQL/MariaDB: the administrator's, beside `user`'s
    source: str = ""  # where the need was seen: a file, or "test output"


EcosystemName = Literal["python", "node"]

# How a repository's tests run: pytest, unittest (or a unittest-format module such as Django's
# `django test`), or the repository's own test script (:class:`TestScript`): "runtests", a
# Django-shaped `tests/runtests.py` printing unittest's verbose format, or "bintest", a `bin/test`
# driving the project's own runner module, which prints one line per test function; "node": a
# JavaScript runner, which one and how in the plan's `node.tests` (:class:`NodeTestRun`).
RunnerKind = Literal["pytest", "unittest", "runtests", "bintest", "node"]
SCRIPT_RUNNERS: frozenset[str] = frozenset({"runtests", "bintest"})


class TestScript(BaseModel):
    """A repository's own test script, as read from its source (runners "runtests", "bintest")."""

    __test__ = False

    path: str  # repository-relative: "tests/runtests.py", "bin/test"
    options: list[str] = Field(default_factory=list)  # the options its argument parser declares
    settings: str = ""  # runtests: the settings module passed as --settings
    seed: int | None = None  # bintest: passed as --seed where the script declares it
    rule: str = ""  # why this script runs the tests (what was read, from which files)


class Plan(BaseModel):
    """How to install and test a repository: the structure planners and repairers edit.

    Its ecosystem's :meth:`Ecosystem.render` turns it into shell commands (for Python,
    :func:`benchsmith.harness.render.render`, once, there).
    """

    ecosystem: EcosystemName = "python"  # whose rules made it and render it
    python: str  # node plans: the Python node-gyp builds native addons with
    python_fallbacks: list[str] = Field(default_factory=list)
    exclude_newer: str  # RFC 3339 timestamp for uv --exclude-newer
    install_project: bool = True
    editable: bool = True
    # the legacy `setup.py develop` (dependencies from the project's metadata through uv, the
    # project linked in place, C extensions built next to their sources): for build backends
    # of a date without PEP 660 editable hooks
    develop: bool = False
    # with `develop`: the dependencies the project declares statically (packages, extras read
    # from its files), not its metadata, where setup.py works only as the script it is
    develop_declared: bool = False
    extras: list[str] = Field(default_factory=list)
    requirement_files: list[str] = Field(default_factory=list)
    groups: list[str] = Field(default_factory=list)
    packages: list[str] = Field(default_factory=list)
    # sources of packages a CI job installed from a git forge, at the date, written into the
    # checkout by the harness: "./.benchsmith-deps/owner+name-<commit>" (harness/vendored.py)
    vendored: list[str] = Field(default_factory=list)
    apt_packages: list[str] = Field(default_factory=list)  # installed only where apt is allowed
    services: list[Service] = Field(default_factory=list)  # started before the tests where apt is allowed
    # public hosts the tests call that a local stand-in answers for (harness/stand_ins.py)
    stand_ins: list[str] = Field(default_factory=list)
    exclude_newer_packages: dict[str, str] = Field(default_factory=dict)
    # "NAME==VERSION" -> that release's requirements, mended, given to uv as its metadata (its
    # own cannot be read by today's installers: setup/metadata_repairs.py)
    dependency_metadata: dict[str, list[str]] = Field(default_factory=dict)
    build_isolation: bool = True
    # settings for one package's build backend, "PACKAGE:KEY" -> VALUE (uv's
    # --config-settings-package), e.g. the project's setuptools editable_mode
    config_settings: dict[str, str] = Field(default_factory=dict)
    prerelease: bool = False  # uv --prerelease allow: the project's own version is a dev release
    build_requirements: list[str] = Field(default_factory=list)
    runner: RunnerKind = "pytest"
    script: TestScript | None = None  # runners "runtests" and "bintest": the script that runs
    # unittest-format runners other than unittest itself: the module `python -m` runs and its
    # leading options, e.g. ["django", "test", "--verbosity=2"] (empty: `python -m unittest`)
    entry: list[str] = Field(default_factory=list)
    test_args: list[str] = Field(default_factory=list)
    deselect: list[str] = Field(default_factory=list)  # tests left out (hung ones), by node ID
    ini_overrides: dict[str, str] = Field(default_factory=dict)
    disabled_plugins: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    build_env: dict[str, str] = Field(default_factory=dict)  # set for the install commands only
    # a published source archive of the project: the files the checkout lacks and git ignores
    # (generated or downloaded by a build step that cannot run here) are taken from it
    release_files: str = ""
    # commands of the project's own that its tests ask to run first (a script that fills a
    # test cache), run after the install, with the network the install has
    prepare: list[str] = Field(default_factory=list)
    # the project's configured options that would change the exit status without a failing
    # test or stop the run early, and what the test command adds to cancel each
    neutralised: list[str] = Field(default_factory=list)
    sources: dict[str, list[str]] = Field(
        default_factory=dict, description="plan item -> files it was derived from"
    )
    notes: list[str] = Field(default_factory=list)
    node: NodePlan | None = None  # ecosystem "node": runtime, manager, dating, test run


class History(BaseModel):
    """What a handed-out checkout's git history holds once cut at its base commit
    (:mod:`benchsmith.harness.history`): nothing in it reaches a later commit."""

    base_commit: str
    commits: int  # commits any ref reaches, every one an ancestor of base_commit (or it)
    newest_commit_date: str  # ISO 8601, UTC
    refs: list[str] = Field(default_factory=list)  # refs kept: the tags made by then
    submodules: int = 0  # submodule checkouts cut the same way


class Provenance(BaseModel):
    """How a record was produced: benchsmith's version, the backend and its configuration, the
    knobs that decide a verdict (timeouts, thresholds). Every record we write carries one."""

    benchsmith_version: str
    backend: str
    sandbox: dict[str, Any] = Field(default_factory=dict)
    options: dict[str, Any] = Field(default_factory=dict)


@runtime_checkable
class Sandbox(Protocol):
    """A fresh, isolated place to run commands: a temp dir + venv, or a container."""

    workdir: str  # the repository's path inside the sandbox

    def upload(self, host_path: Path, sandbox_path: str) -> None:
        """Copy a host directory or file into the sandbox."""

    def setup_python(self, version: str) -> str:
        """Create the project's virtualenv with Python `version`; return the interpreter used."""

    def exec(
        self,
        command: str,
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
        stall_timeout: float | None = None,
        sweep: bool = False,
    ) -> ExecResult:
        """Run a shell command; on timeout kill all its processes. With `stall_timeout`, also
        kill them once the output has not grown for that many seconds (a hung test). With
        `sweep`, kill what it left running once it ended. Limits it reached and processes
        swept are in the result's `contained`."""

    def write_file(self, path: str, content: bytes) -> None:
        """Write a file inside the sandbox."""

    def read_file(self, path: str) -> bytes:
        """Read a file from inside the sandbox."""

    def available_pythons(self) -> dict[str, str]:
        """Python minor versions ("3.11") this sandbox can provide, mapped to an interpreter."""

    def close(self) -> None:
        """Remove everything the sandbox created. Safe to call twice."""

    def snapshot(self, name: str, labels: dict[str, str]) -> str:
        """Save the sandbox's current state as a reusable environment `name` and return it;
        raises BenchsmithError where the backend cannot (see the config's `snapshots`)."""

    def set_network(self, enabled: bool) -> bool:
        """Give later commands network access or take it away (loopback stays); return whether
        the backend could (the host's network cannot be taken away)."""


class EcosystemEvidence(BaseModel):
    """Why a repository looks like a project of one ecosystem: its files, and whether its CI
    runs that ecosystem's tests (which decides for a repository that has two)."""

    ecosystem: EcosystemName
    files: list[str] = Field(default_factory=list)
    ci_tests: list[str] = Field(default_factory=list)  # CI files whose jobs run its tests


@runtime_checkable
class Ecosystem(Protocol):
    """What differs between languages behind the one setup engine: the files read, the
    runtime chosen at the date, the plans, the install and test commands, and the repair
    rules. The loop, the records, the sandboxes and the reference database are shared. One is
    made per setup, knowing whether system packages may be installed (apt)."""

    name: EcosystemName

    def evidence(self, repo: Path) -> EcosystemEvidence | None:
        """Why the checkout at `repo` is a project of this ecosystem; None when it is not."""

    def context(self, repo: Path) -> Any:
        """Everything the checkout's own files say about installing and testing it."""

    def plans(self, context: Any, pin_day: Any, available: dict[str, str], exclude_newer: str,
              planner: Planner | None) -> list[tuple[str, Plan]]:
        """The plans to try, first first, each with where it came from ("rules", ...)."""

    def adapt(self, plan: Plan, context: Any, pin_day: Any, available: dict[str, str]) -> Plan:
        """A stored plan (another commit's) made fit for this commit and date."""

    def repairer(self) -> Repairer:
        """The ecosystem's rule-based diagnosis and repair."""

    def render(self, plan: Plan) -> tuple[list[str], list[str]]:
        """The plan's install commands and whole-suite test commands."""

    def install_env(self, plan: Plan) -> dict[str, str]:
        """The environment of the install commands (the date pin of its package manager)."""

    def stage(self, sandbox: Sandbox, repo_dir: Path, plan: Plan, install: list[str]
              ) -> Diagnosis | None:
        """Put the checkout and the runtime into a fresh sandbox; the diagnosis when it cannot."""


class LogParser(Protocol):
    """Turns a test command's output into per-test results."""

    def parse(self, output: str) -> list[TestResult]:
        """Return the tests found in `output`; the last status of a test wins."""


class Model(Protocol):
    """A language model: prompt in, text out. Optional everywhere."""

    def complete(self, prompt: str) -> str:
        """Return the model's answer to `prompt`."""


class Planner(Protocol):
    """Proposes the first plan for a repository from what its files say."""

    def plan(self, context: Any, python: Any, exclude_newer: str) -> Plan:
        """Return the initial plan (`context` is a RepoContext, `python` a PythonChoice)."""


class Repairer(Protocol):
    """Diagnoses a failed attempt and proposes a changed plan."""

    def diagnose(self, plan: Plan, failed: ExecResult, phase: str, context: Any) -> Diagnosis:
        """Classify why `failed` (a command of `phase` "install" or "test") went wrong."""

    def repair(self, plan: Plan, diagnosis: Diagnosis, context: Any) -> tuple[Plan, str] | None:
        """Return a changed plan and a one-line description of the repair, or None."""
