"""Which test runner a Node.js repository uses, and how its tests are started: read from
package.json's `scripts.test` (and the scripts it calls), the runners' config files and the
dependencies."""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import Field

from benchsmith.core.node import NodeReportFormat, NodeRunnerName, NodeTestRun
from benchsmith.harness.node_render import positionals
from benchsmith.setup.node.runner_options import strip_options
from benchsmith.setup.node.scripts import Invocation, called_scripts, expand, glob_matches
from benchsmith.setup.node.tasks import is_check, node_side_scripts, tape_started_by_node

RunnerName = NodeRunnerName
ReportFormat = NodeReportFormat

BROWSER_RUNNERS: frozenset[str] = frozenset({"karma", "playwright", "web-test-runner"})
# Debian's headless-capable browser (package "chromium") and where it installs its binary.
CHROMIUM_PACKAGE = "chromium"
CHROMIUM_BINARY = "/usr/bin/chromium"

_CONFIGS: tuple[tuple[RunnerName, re.Pattern[str]], ...] = (
    ("jest", re.compile(r"jest\.config\.(?:js|ts|mjs|cjs|cts|mts|json)")),
    ("vitest", re.compile(r"vitest\.(?:config|workspace)\.(?:js|ts|mjs|cjs|mts|cts)")),
    ("mocha", re.compile(r"\.mocharc(?:\.(?:js|cjs|mjs|json|jsonc|yaml|yml))?")),
    ("ava", re.compile(r"ava\.config\.(?:js|cjs|mjs)")),
    ("tap", re.compile(r"\.taprc")),
    ("jasmine", re.compile(r"spec/support/jasmine\.(?:json|js|mjs)")),
    ("karma", re.compile(r"karma\.conf(?:ig)?\.(?:js|ts|cjs|mjs)")),
    ("playwright", re.compile(r"playwright(?:-ct)?\.config\.(?:js|ts|mjs|cjs|mts)")),
    ("web-test-runner", re.compile(r"(?:web-test-runner|wtr)\.config\.(?:js|mjs|cjs|ts)")),
)
# package.json keys that configure a runner
_PACKAGE_KEYS: dict[str, RunnerName] = {"jest": "jest", "mocha": "mocha", "ava": "ava",
                                        "tap": "tap"}
_DEPENDENCIES: tuple[tuple[str, RunnerName], ...] = (
    ("jest", "jest"), ("react-scripts", "jest"), ("vitest", "vitest"), ("mocha", "mocha"),
    ("ava", "ava"), ("tap", "tap"), ("tape", "tape"), ("jasmine", "jasmine"), ("uvu", "uvu"),
    ("karma", "karma"), ("@playwright/test", "playwright"), ("@web/test-runner", "web-test-runner"),
)
_BUILDS = re.compile(r"^(?:tsc|babel|rollup|webpack|esbuild|tsup|swc|vite|microbundle|unbuild|"
                     r"pkgroll|bob|ncc|node-gyp|tsx|ts-node|lerna|turbo|gulp|grunt|make)$")
# uvu's default test file pattern
_UVU_PATTERN = re.compile(r"((/|^)(tests?|__tests?__)/.*|\.(tests?|spec)|^/?tests?)\.([mc]js|[jt]sx?)$",
                          re.IGNORECASE)
_NPM_DEFAULT = "no test specified"
# node --test's default file patterns (Node 20)
_NODE_DEFAULTS = ("**/*.test.{js,cjs,mjs}", "**/*-test.{js,cjs,mjs}", "**/*_test.{js,cjs,mjs}",
                  "**/test-*.{js,cjs,mjs}", "**/test.{js,cjs,mjs}", "**/test/**/*.{js,cjs,mjs}")
_SCRIPT_EXTENSIONS = (".js", ".cjs", ".mjs", ".ts", ".mts", ".cts", ".tsx", ".jsx")

class NodeTestRunner(NodeTestRun):
    """How a repository's tests run (:class:`NodeTestRun`), plus what detection found beside it:
    the steps the tests need first and what the runner needs from the machine (a browser)."""

    build_steps: list[str] = Field(default_factory=list, description="shell commands run before the tests")
    typescript: bool = False
    browser: bool = False
    browser_runnable: bool = True
    checks: list[str] = Field(default_factory=list, description="checks of the test script left out")
    apt_packages: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list, description="where the runner was read from")
    notes: list[str] = Field(default_factory=list)

    def run(self) -> NodeTestRun:
        """The part a plan and a test spec keep."""
        return NodeTestRun.model_validate(self.model_dump(include=set(NodeTestRun.model_fields)))


_FORMATS: dict[RunnerName, ReportFormat] = {
    "jest": "jest-json", "vitest": "jest-json", "mocha": "mocha-json", "ava": "tap-flat", "tap": "tap",
    "tape": "tap-files", "node": "tap-files", "jasmine": "console", "uvu": "uvu-files",
    "karma": "console", "playwright": "junit", "web-test-runner": "console", "script": "script",
}


def runner_of(invocation: Invocation) -> tuple[RunnerName, list[str], list[str]] | None:
    """(runner, its start words, the remaining arguments) when `invocation` starts a runner."""
    name = posixpath.basename(invocation.command)
    args = list(invocation.args)
    first = args[0] if args else ""
    if name == "jest":
        return "jest", ["jest"], args
    if name in {"react-scripts", "craco", "rescripts", "react-app-rewired"} and first == "test":
        return "jest", [name, "test"], args[1:]
    if name == "vitest":
        rest = args[1:] if first in {"run", "watch", "dev", "related"} else args
        return "vitest", ["vitest", "run"], rest
    if name in {"mocha", "_mocha"}:
        return "mocha", ["mocha"], args
    if name in {"ava", "tap", "tape", "jasmine", "uvu"}:
        return name, [name], args  # type: ignore[return-value]
    if name in {"node", "tsx"} and "--test" in args:
        return "node", [name, "--test"], args
    if name == "karma" and first in {"start", "run"}:
        return "karma", ["karma", "start"], args[1:]
    if name == "ng" and first == "test":
        return "karma", ["ng", "test"], args[1:]
    if name == "playwright" and first == "test":
        return "playwright", ["playwright", "test"], args[1:]
    if name in {"wtr", "web-test-runner"}:
        return "web-test-runner", [name], args
    return None


def detect_test_runner(package: dict[str, Any], files: Sequence[str],
                       read: Callable[[str], str | None] | None = None) -> NodeTestRunner | None:
    """The test runner of a repository from its parsed package.json, its files (paths relative
    to its root) and, where given, `read` (a file's text, or None); None when nothing says."""
    scripts = package.get("scripts") if isinstance(package.get("scripts"), dict) else {}
    assert isinstance(scripts, dict)
    makefile = read("Makefile") if read is not None and "Makefile" in files else None
    invocations = ([] if _NPM_DEFAULT in str(scripts.get("test", ""))
                   else expand(scripts, "test", makefile=makefile))
    checks = [invocation.text for invocation in invocations if is_check(invocation)]
    spec = _from_invocations(invocations, scripts, package, files)
    if spec is not None and spec.runner in BROWSER_RUNNERS:
        spec = _node_side(spec, scripts, package, files, makefile) or spec
    if spec is None:
        spec = _without_runner(invocations, scripts, package, files)
    if spec is None:
        return None
    if checks:
        spec.checks = checks
        spec.notes.append("checks of the test script left out of the test command: "
                          + ", ".join(f"`{check}`" for check in checks))
    return _complete(spec, package, files, read)


def _from_invocations(invocations: Sequence[Invocation], scripts: dict[str, Any],
                      package: dict[str, Any], files: Sequence[str]) -> NodeTestRunner | None:
    """The first invocation that starts a runner (a browser runner only when no later one runs
    in Node), with the steps before it."""
    found: list[NodeTestRunner] = []
    for position, invocation in enumerate(invocations):
        started = runner_of(invocation) or tape_started_by_node(invocation, _dependencies(package),
                                                                 files)
        if started is None:
            continue
        runner, command, args = started
        spec = NodeTestRunner(runner=runner, command=command, args=strip_options(runner, args),
                              env=dict(invocation.env), report_format=_FORMATS[runner],
                              sources=[f"scripts.{invocation.script}"])
        spec.build_steps = _build_steps(invocations[:position], scripts)
        if runner not in BROWSER_RUNNERS:
            if found:
                spec.notes.append(f"{found[0].runner} (scripts.{found[0].sources[0]}) runs in a "
                                  f"browser; the tests run with {runner} in Node")
            return spec
        found.append(spec)
    return found[0] if found else None


def _node_side(browser: NodeTestRunner, scripts: dict[str, Any], package: dict[str, Any],
               files: Sequence[str], makefile: str | None) -> NodeTestRunner | None:
    """A runner the project also runs its tests with in Node: a script like `test:node`, else a
    Node runner's configuration."""
    for name in node_side_scripts(scripts):
        spec = _from_invocations(expand(scripts, name, makefile=makefile), scripts, package, files)
        if spec is not None and spec.runner not in BROWSER_RUNNERS:
            spec.notes.append(f"scripts.test runs {browser.runner} in a browser; scripts.{name} "
                              f"runs the tests in Node with {spec.runner}")
            return spec
    chosen, source = _from_files(package, files, node_only=True)
    if chosen is None or source.startswith("dependency"):
        return None
    spec = _plain(chosen, source)
    # of the steps before the browser runner, the builds: the others are checks and the Node
    # side's own test runs
    spec.build_steps = [step for step in browser.build_steps
                        if _BUILDS.match(posixpath.basename(step.split()[0]))
                        or re.match(r"^(?:npm|yarn|pnpm) (?:run )?build\b", step)]
    spec.notes.append(f"scripts.test runs {browser.runner} in a browser; {source} runs the "
                      f"tests in Node with {chosen}")
    return spec


def node_side_sequence(scripts: dict[str, Any], makefile: str | None = None
                       ) -> NodeTestRunner | None:
    """scripts.test runs a browser runner beside a script that tests in Node with commands no
    runner rule reads (a runner testing itself with `node bin/x.js`): that script's commands,
    checks left out, run one after the other as they are (the "script" runner, its mocha runs
    reported); None when there is no such script."""
    called = called_scripts(str(scripts.get("test") or ""))
    for name in [n for n in node_side_scripts(scripts) if n in called]:
        invocations = [i for i in expand(scripts, name, makefile=makefile) if not is_check(i)]
        runners = [started[0] for i in invocations if (started := runner_of(i))]
        if not invocations or any(runner in BROWSER_RUNNERS for runner in runners):
            continue
        body = "".join(f"{{ {_keeping_node_options(i)}; }} || rc=1; " for i in invocations)
        spec = NodeTestRunner(runner="script", command=["sh", "-c", f"rc=0; {body}exit $rc"],
                              report_format="script", sources=[f"scripts.{name}"])
        spec.notes.append(f"scripts.{name} runs the tests in Node: its {len(invocations)} "
                          "commands run one after the other as they are")
        return spec
    return None


def _keeping_node_options(invocation: Invocation) -> str:
    """The invocation as a shell command whose own NODE_OPTIONS add to the ones it is given (the
    hook that reports its mocha runs) instead of replacing them."""
    if "NODE_OPTIONS" not in invocation.env:
        return invocation.text
    options = invocation.env["NODE_OPTIONS"]
    rest = Invocation(invocation.command, invocation.args,
                      {k: v for k, v in invocation.env.items() if k != "NODE_OPTIONS"})
    return f'NODE_OPTIONS="${{NODE_OPTIONS:-}} "{shlex.quote(options)} {rest.text}'


def _without_runner(invocations: Sequence[Invocation], scripts: dict[str, Any],
                    package: dict[str, Any], files: Sequence[str]) -> NodeTestRunner | None:
    """A runner's configuration, else the test script's own task command run as it is (its
    mocha runs reported, else its console read), else a runner among the dependencies."""
    chosen, source = _from_files(package, files)
    if chosen is not None and not source.startswith("dependency"):
        spec = _plain(chosen, source)
    elif task := task_command(invocations, scripts):
        return task
    elif chosen is not None:
        spec = _plain(chosen, source)
    else:
        return None
    if invocations:
        spec.notes.append(f"scripts.test runs `{invocations[-1].text}`, no runner benchsmith knows")
    spec.build_steps = _build_steps(expand(scripts, "pretest"), scripts)
    return spec


def task_command(invocations: Sequence[Invocation], scripts: dict[str, Any]
                 ) -> NodeTestRunner | None:
    """The test script's last task command (no check) run as it is, the "script" runner."""
    tasks = [(at, invocation) for at, invocation in enumerate(invocations) if not is_check(invocation)]
    if not tasks:
        return None
    position, task = tasks[-1]
    spec = NodeTestRunner(runner="script", command=[task.command, *task.args],
                          env=dict(task.env), report_format="script",
                          sources=[f"scripts.{task.script}"])
    spec.build_steps = _build_steps(invocations[:position], scripts)
    spec.notes.append(f"scripts.test runs `{task.text}`, which names no runner benchsmith "
                      "reads: run as it is, its mocha runs reported, else its console read")
    return spec


def _plain(runner: RunnerName, source: str) -> NodeTestRunner:
    command = {"vitest": ["vitest", "run"], "node": ["node", "--test"], "karma": ["karma", "start"],
               "playwright": ["playwright", "test"]}.get(runner, [runner])
    return NodeTestRunner(runner=runner, command=command, report_format=_FORMATS[runner],
                          sources=[source])


def _from_files(package: dict[str, Any], files: Sequence[str],
                node_only: bool = False) -> tuple[RunnerName | None, str]:
    for runner, pattern in _CONFIGS:
        if node_only and runner in BROWSER_RUNNERS:
            continue
        for path in files:
            if pattern.fullmatch(path):
                return runner, path
    for key, runner in _PACKAGE_KEYS.items():
        if isinstance(package.get(key), dict):
            return runner, f"package.json {key}"
    dependencies = _dependencies(package)
    for dependency, runner in _DEPENDENCIES:
        if dependency in dependencies:
            return runner, f"dependency {dependency}"
    return None, ""


def _dependencies(package: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for key in ("devDependencies", "dependencies", "peerDependencies", "optionalDependencies"):
        if isinstance(package.get(key), dict):
            names |= set(package[key])
    return names


def _build_steps(before: Sequence[Invocation], scripts: dict[str, Any]) -> list[str]:
    steps = [invocation.text for invocation in before if not is_check(invocation)]
    prepare = expand(scripts, "prepare")
    if any(_BUILDS.match(posixpath.basename(step.command)) for step in prepare) and \
            "npm run prepare" not in steps:
        steps.insert(0, "npm run prepare")
    return list(dict.fromkeys(steps))


def _complete(spec: NodeTestRunner, package: dict[str, Any], files: Sequence[str],
              read: Callable[[str], str | None] | None) -> NodeTestRunner:
    dependencies = _dependencies(package)
    spec.typescript = "typescript" in dependencies or "tsconfig.json" in files
    if spec.typescript:
        _typescript_build(spec, package, files, read)
    if spec.runner in {"tape", "node", "uvu"}:
        spec.test_files = select_files(spec.runner, spec.args, files)
        if not spec.test_files:
            spec.notes.append("no test file matches the runner's patterns")
    if spec.command[0] in {"react-scripts", "craco", "rescripts", "react-app-rewired"}:
        spec.env.setdefault("CI", "true")
    browser = spec.runner in BROWSER_RUNNERS or (
        spec.runner == "vitest" and "@vitest/browser" in dependencies)
    if browser:
        _browser(spec)
    return spec


def _typescript_build(spec: NodeTestRunner, package: dict[str, Any], files: Sequence[str],
                      read: Callable[[str], str | None] | None) -> None:
    """Add the TypeScript compilation when the tests run compiled output and nothing builds it."""
    if any(re.search(r"\btsc\b|\bbuild\b", step) for step in spec.build_steps):
        return
    config = _tsconfig(read) if read else {}
    out_dir = str(config.get("compilerOptions", {}).get("outDir", "") or "").strip("./")
    if not out_dir:
        return
    targets = positionals(spec.runner, spec.args)
    if not any(target.removeprefix("./").startswith(out_dir + "/") or
               target.removeprefix("./") == out_dir for target in targets):
        return
    scripts = package.get("scripts") or {}
    step = "npm run build" if isinstance(scripts, dict) and "build" in scripts else \
        "tsc -p tsconfig.json"
    spec.build_steps.append(step)
    spec.notes.append(f"the tests run the TypeScript output in {out_dir}/: `{step}` first")


def _tsconfig(read: Callable[[str], str | None]) -> dict[str, Any]:
    text = read("tsconfig.json")
    if not text:
        return {}
    # tsconfig.json allows comments and trailing commas
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.DOTALL)
    text = re.sub(r",(\s*[}\]])", r"\1", text)
    try:
        loaded = json.loads(text)
    except ValueError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def select_files(runner: str, args: Sequence[str], files: Sequence[str]) -> list[str]:
    """The test files a runner started with `args` runs (tape's globs, node --test's paths and
    default patterns), among `files`."""
    targets = [target.removeprefix("./") for target in positionals(runner, args)]
    if runner == "uvu":
        return _uvu_files(targets, args, files)
    if not targets and runner == "node":
        targets = list(_NODE_DEFAULTS)
    candidates = [path for path in files
                  if path.endswith(_SCRIPT_EXTENSIONS) and "node_modules/" not in path]
    return sorted(path for path in candidates
                  if any(glob_matches(target, path) for target in targets))


def _uvu_files(targets: Sequence[str], args: Sequence[str], files: Sequence[str]) -> list[str]:
    """uvu's files: under its directory (first argument), matching its pattern (second)."""
    directory = (targets[0] if targets else ".").strip("/")
    directory = "" if directory in {"", "."} else directory + "/"
    try:
        pattern = re.compile(targets[1]) if len(targets) > 1 else _UVU_PATTERN
        ignores = [re.compile(value) for option, value in zip(args, args[1:], strict=False)
                   if option in {"-i", "--ignore"}]
    except re.error:
        return []
    found = []
    for path in files:
        inner = path[len(directory):]
        if (path.startswith(directory) and "node_modules/" not in path and pattern.search(inner)
                and not any(ignore.search(inner) for ignore in ignores)):
            found.append(path)
    return sorted(found)


def _browser(spec: NodeTestRunner) -> None:
    spec.browser = True
    spec.apt_packages = [CHROMIUM_PACKAGE]
    if spec.runner == "karma":
        spec.browser_env = {"CHROME_BIN": CHROMIUM_BINARY}
        spec.notes.append("karma runs in Debian's headless Chromium (CHROME_BIN); as root Chromium "
                          "also needs --no-sandbox, which only a custom launcher in the karma "
                          "config can pass")
    elif spec.runner == "web-test-runner":
        spec.browser_env = {"CHROME_PATH": CHROMIUM_BINARY}
        spec.notes.append("web-test-runner's Chrome launcher uses Debian's Chromium (CHROME_PATH)")
    else:
        spec.browser_runnable = False
        spec.notes.append(f"{spec.runner} launches browser builds of its own, downloaded from "
                          "hosts other than the package registries: not runnable here")
