"""The Node.js part of a plan and of a test spec: structured, like Python's, so that nothing
parses a command line back. The rules that fill it are in :mod:`benchsmith.setup.node`; the
commands are rendered by :mod:`benchsmith.harness.node_render`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

# "script": a command of the package's test script benchsmith cannot read further (a task runner:
# grunt, gulp, nps, a node script), run as it is
NodeRunnerName = Literal["jest", "vitest", "mocha", "ava", "tap", "tape", "node", "jasmine", "uvu",
                         "karma", "playwright", "web-test-runner", "script"]
# jest-json: jest's --json (vitest writes the same shape); mocha-json: mocha's json reporter;
# tap: one TAP stream whose top-level subtests are files (node-tap); tap-files: TAP per file,
# each after a "# benchsmith-file: <path>" line; tap-flat: one TAP stream of tests, its comments
# never titles (ava, which prints a failed hook as a comment before its test); junit: JUnit XML; console: the runner's console;
# uvu-files: uvu's events per file (see harness/node_render.py); script: the mocha events any
# process of a script reported, else the script's console
NodeReportFormat = Literal["jest-json", "mocha-json", "tap", "tap-files", "tap-flat", "junit", "console",
                           "uvu-files", "script"]
NODE_RUNNERS: frozenset[str] = frozenset(NodeRunnerName.__args__)  # type: ignore[attr-defined]
ManagerName = Literal["npm", "yarn", "pnpm"]
# How dependencies were pinned to the date: the project's own lockfile, npm's --before (publish
# times trusted), the newest earlier lockfile of the project's history, or not at all.
DatingMethod = Literal["lockfile", "before", "history-lockfile", "not-dated"]


class NodeTestRun(BaseModel):
    """How a Node test runner starts and reports: the runner, its command and the script's own
    arguments (watch, coverage and reporter options removed), the variables the script sets."""

    __test__ = False

    runner: NodeRunnerName
    command: list[str] = Field(description="how the runner starts, e.g. ['jest'], ['node', '--test']")
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    report_format: NodeReportFormat
    # for runners started once per file (tape, node --test): the files of the whole suite
    test_files: list[str] = Field(default_factory=list)
    browser_env: dict[str, str] = Field(default_factory=dict)  # where a headless browser is
    # test files a whole-suite run leaves out: a test in each crashed the runner (the plan's
    # notes say how); a run of given test files runs them as given
    crashed: list[str] = Field(default_factory=list)


class DependencyEdit(BaseModel):
    """One change to a package.json made before the install: at `path` (a section such as
    ["devDependencies"] or ["overrides", "parent"]) the entry `name` set to `spec`, or removed
    when `spec` is None."""

    manifest: str = "package.json"  # repository-relative
    path: list[str]
    name: str
    spec: str | None = None
    was: str | None = None  # the spec it had
    why: str = ""


class NodePlan(BaseModel):
    """The Node runtime, package manager, dating of dependencies and test run of a plan whose
    ecosystem is "node". Every choice keeps where it came from (`Plan.sources`, `Plan.notes`)."""

    version: str  # the Node release, "18.16.0"
    line: str = ""  # its release line, "18"
    version_source: str = "default"  # ".nvmrc", ".node-version", "volta", "engines.node", "ci", ...
    fallbacks: list[str] = Field(default_factory=list)  # other releases to try, first first
    manager: ManagerName = "npm"
    manager_version: str = ""  # "8.19.4", a range "6", or the checked-in yarn release's path
    berry: bool = False  # yarn 2 and later
    manager_source: str = ""  # "packageManager", "package-lock.json v2", "Node 18's npm", ...
    dating: DatingMethod = "not-dated"
    lockfile: str | None = None  # repository-relative lockfile the install follows
    history_commit: str | None = None  # history-lockfile: the earlier commit it came from
    before: str | None = None  # before: npm's --before date
    dropped_lockfile: str | None = None  # a lockfile the install could not follow, removed first
    # relaxations of the install a repair chose, each recorded: "--legacy-peer-deps", ...
    install_args: list[str] = Field(default_factory=list)
    # dependencies whose install script could not download (name -> why): the install runs
    # with lifecycle scripts off, native addons rebuilt after it
    scripts_off: dict[str, str] = Field(default_factory=dict)
    # variables that keep install scripts from downloading binaries from other hosts
    no_download: list[str] = Field(default_factory=list)
    build: list[str] = Field(default_factory=list)  # shell commands the tests need first
    # build steps a repair left out (they run a program of a left-out dependency): step -> why
    left_out_steps: dict[str, str] = Field(default_factory=dict)
    tests: NodeTestRun
    memory_mb: int | None = None  # --max-old-space-size for the test run, set by a repair
    # package.json changes made before the install, and what each did, by package name:
    # "github:o/n#ref -> 2.7.3 (why)" (replaced), "why" (dropped), "^5 -> 5.2.0 (why)" (pinned)
    edits: list[DependencyEdit] = Field(default_factory=list)
    replaced: dict[str, str] = Field(default_factory=dict)
    dropped: dict[str, str] = Field(default_factory=dict)
    pinned: dict[str, str] = Field(default_factory=dict)
