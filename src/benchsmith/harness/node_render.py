"""Render a Node test run (:class:`~benchsmith.core.NodeTestRun`) as the shell command that runs
its tests (all, or given test files) with the runner's machine-readable reporter. A report the
runner writes to a file goes to ``$BENCHSMITH_REPORT``, a path outside the checkout that
:func:`benchsmith.harness.testrun.run_tests` gives each command and reads afterwards."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from pydantic import BaseModel

from benchsmith.core import NodePlan, NodeTestRun
from benchsmith.core.node import NodeReportFormat
from benchsmith.harness.node_hooks import MOCHA_HOOK, UVU_HOOK, UVU_LOADER, UVU_MODULE

__all__ = ["FILE_MARKER", "MOCHA_REPORTER", "PATH_PREFIX", "REPORT_ENV", "REPORT_FILE_FORMATS",
           "VALUE_OPTIONS", "NodeTestCommand", "can_leave_out", "positionals", "render_build_commands",
           "render_test_command"]

REPORT_ENV = "BENCHSMITH_REPORT"
# Formats the runner writes to the report file; the others are read from the command's output.
REPORT_FILE_FORMATS: frozenset[str] = frozenset({"jest-json", "mocha-json", "junit", "uvu-files",
                                                 "script"})
# Runners started once per file, on the plan's `test_files` when the checkout holds them.
_PER_FILE = frozenset({"tape", "node", "uvu"})
# The marker a per-file loop prints before each file's TAP stream (parsing/tap.py reads it).
FILE_MARKER = "# benchsmith-file: "
# Binaries a project installs are found the way npm's scripts find them.
PATH_PREFIX = 'PATH="$PWD/node_modules/.bin:$PATH"'
_REPORT = f'"${REPORT_ENV}"'
# Run by hand, a recorded command still has somewhere to write its report.
_REPORT_DEFAULT = (f'export {REPORT_ENV}="${{{REPORT_ENV}:-${{TMPDIR:-/tmp}}/benchsmith-node-report}}"'
                   f' && mkdir -p "$(dirname {_REPORT})" &&')

# Options of each runner that take a separate value (to tell option values from test paths).
VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "jest": frozenset({"-c", "--config", "-t", "--testNamePattern", "-w", "--maxWorkers",
                       "--rootDir", "--roots", "--selectProjects", "--testEnvironment", "--env",
                       "--testTimeout", "--shard", "--testPathIgnorePatterns", "--seed",
                       "--testPathPattern", "--reporters", "--outputFile"}),
    "vitest": frozenset({"-c", "--config", "-r", "--root", "--dir", "-t", "--testNamePattern",
                         "--project", "--environment", "--pool", "--shard", "--mode",
                         "--reporter", "--outputFile"}),
    "mocha": frozenset({"--config", "--package", "-r", "--require", "--ui", "-u", "--timeout",
                        "-t", "--slow", "-s", "--grep", "-g", "--fgrep", "-f", "--extension",
                        "--file", "--ignore", "--exclude", "--spec", "-n", "--node-option",
                        "--jobs", "-j", "--retries", "--reporter", "-R", "--reporter-option",
                        "--reporter-options", "-O"}),
    "ava": frozenset({"--match", "-m", "--config", "--concurrency", "-c", "--timeout", "-T",
                      "--node-arguments"}),
    "tap": frozenset({"--timeout", "-t", "--jobs", "-j", "--grep", "-g", "--node-arg",
                      "--test-arg", "--test-env", "--before", "--after", "--nyc-arg", "-R",
                      "--reporter", "--coverage-report", "-o", "--reporter-file"}),
    "tape": frozenset({"-r", "--require", "-i", "--ignore"}),
    "node": frozenset({"--import", "--require", "-r", "--loader", "--experimental-loader",
                       "--test-name-pattern", "--test-concurrency", "--test-timeout",
                       "--test-shard", "--test-reporter", "--test-reporter-destination"}),
    "jasmine": frozenset({"--config", "--filter", "--helper", "--require", "--reporter"}),
    "uvu": frozenset({"-i", "--ignore", "-r", "--require"}),
    "karma": frozenset({"--reporters", "--browsers", "--port", "--log-level"}),
    "playwright": frozenset({"-c", "--config", "--project", "-g", "--grep", "--reporter",
                             "-j", "--workers", "--shard", "--timeout"}),
    "web-test-runner": frozenset({"--config", "--files", "--browsers", "--concurrency"}),
}

# A mocha reporter that writes mocha's json reporter's shape, each test also with its
# `titlePath` (the describe titles, then its own): the space-joined `fullTitle` cannot be split.
# Written in ES5 without `recursive` directory creation, so that the Node lines of old commits
# (0.10 to 10.11) run it too.
MOCHA_REPORTER = """'use strict';
var fs = require('fs');
var path = require('path');
function titles(runnable) {
  if (typeof runnable.titlePath === 'function') return runnable.titlePath();
  var found = [];
  for (var node = runnable; node; node = node.parent) if (node.title) found.unshift(node.title);
  return found;
}
function clean(test) {
  var err = test.err || {};
  return { title: test.title, fullTitle: titles(test).join(' '), titlePath: titles(test),
           file: test.file, duration: test.duration,
           err: err.message ? { message: String(err.message), stack: String(err.stack || '') } : {} };
}
function makeDirectory(directory) {
  if (fs.existsSync(directory)) return;
  makeDirectory(path.dirname(directory));
  fs.mkdirSync(directory);
}
function Reporter(runner, options) {
  var settings = (options && (options.reporterOption || options.reporterOptions)) || {};
  var output = settings.output || process.env.BENCHSMITH_REPORT;
  var tests = [], passes = [], failures = [], pending = [];
  runner.on('test end', function (test) { tests.push(test); });
  runner.on('pass', function (test) { passes.push(test); });
  runner.on('fail', function (test, err) { if (err && !test.err) test.err = err; failures.push(test); });
  runner.on('pending', function (test) { pending.push(test); });
  runner.once('end', function () {
    var report = { stats: runner.stats || {}, tests: tests.map(clean), passes: passes.map(clean),
                   failures: failures.map(clean), pending: pending.map(clean) };
    makeDirectory(path.dirname(output));
    fs.writeFileSync(output, JSON.stringify(report, null, 2));
  });
}
module.exports = Reporter;
"""


class NodeTestCommand(BaseModel):
    """A rendered test command and where its report is: the file ``$BENCHSMITH_REPORT``
    (`report_file`) or the command's output."""

    command: str
    report_format: NodeReportFormat
    report_file: bool = False


def positionals(runner: str, args: Sequence[str], values: frozenset[str] | None = None
                ) -> list[str]:
    """The non-option arguments (test paths or patterns) among `args`, skipping the values of
    `runner`'s options that take one (or of the options `values` names)."""
    values = VALUE_OPTIONS.get(runner, frozenset()) if values is None else values
    found: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg.startswith("-"):
            skip = "=" not in arg and arg in values
        else:
            found.append(arg)
    return found


def can_leave_out(run: NodeTestRun) -> bool:
    """Whether a whole-suite run of `run` can leave a test file out (its `crashed`)."""
    return run.runner in {"mocha", "jest"} or (run.runner in _PER_FILE and bool(run.test_files))


def _left_out(run: NodeTestRun) -> str:
    """The runner's options leaving out the files of `run.crashed`: mocha's `--exclude` (5.1+;
    each path also as `./path`, which a spec glob starting with `./` yields), jest's ignore
    patterns (given on the command line, they replace the configured ones: node_modules named)."""
    if run.runner == "mocha":
        return " ".join(f"--exclude {shlex.quote(p)} --exclude {shlex.quote('./' + p)}"
                        for p in run.crashed)
    if run.runner == "jest" and run.crashed:
        patterns = ["/node_modules/", *(f"/{re.escape(p)}$" for p in run.crashed)]
        return " ".join(shlex.quote(f"--testPathIgnorePatterns={p}") for p in patterns)
    return ""


def heap_env(node: NodePlan) -> dict[str, str]:
    """The variables that give node the heap a repair chose (none when no repair did)."""
    return {"NODE_OPTIONS": f"--max-old-space-size={node.memory_mb}"} if node.memory_mb else {}


def render_build_commands(steps: Sequence[str]) -> list[str]:
    """The build steps the tests need first, as shell commands run in the checkout."""
    return [f"{PATH_PREFIX} {step}" for step in steps]


def render_test_command(run: NodeTestRun, test_files: Sequence[str] = ()) -> NodeTestCommand:
    """The command running `run`'s tests (only `test_files`, paths relative to the checkout,
    when given), its report written to ``$BENCHSMITH_REPORT`` or to its output."""
    runner = run.runner
    focused = list(test_files)
    args = list(run.args)
    if focused:  # the script's own test paths give way to the focused files
        args = _without(args, set(positionals(runner, args)), VALUE_OPTIONS.get(runner, frozenset()))
    env = {**run.env, **run.browser_env}
    prefix = " ".join([PATH_PREFIX, *(f"{key}={shlex.quote(value)}" for key, value in env.items())])
    start = shlex.join(run.command)
    quoted = shlex.join(args)
    left_out = "" if focused else _left_out(run)
    if runner == "jest":
        tail = "--ci --watchAll=false --json " + f"--outputFile={_REPORT}"
        body = _line(start, quoted, left_out, tail,
                     "--runTestsByPath " + shlex.join(focused) if focused else "")
    elif runner == "vitest":
        body = _line(start, quoted, f"--reporter=json --outputFile={_REPORT}", shlex.join(focused))
    elif runner == "mocha":
        reporter = f'"${REPORT_ENV}.reporter.cjs"'
        write = f"printf '%s' {shlex.quote(MOCHA_REPORTER)} > {reporter} &&"
        body = _line(write, prefix, start, quoted, left_out, f"--reporter {reporter}",
                     shlex.join(focused))
        return NodeTestCommand(command=_line(_REPORT_DEFAULT, body), report_format=run.report_format,
                               report_file=True)
    elif runner in {"tape", "node"}:
        selected = focused or [f for f in run.test_files if f not in run.crashed]
        options = shlex.join(_without(args, set(positionals(runner, args)), VALUE_OPTIONS[runner]))
        reporter = " --test-reporter=tap" if runner == "node" else ""
        sources = shlex.join(selected) if selected else _found_at_run_time(run)
        loop = (f"rc=0; for f in {sources}; do "
                f"printf '{FILE_MARKER}%s\\n' \"$f\"; {_line(start + reporter, options)} \"$f\" || rc=1; "
                "done; exit $rc")
        return NodeTestCommand(command=_line(prefix, "sh -c", shlex.quote(loop)),
                               report_format="tap-files")
    elif runner == "script":
        return NodeTestCommand(command=_line(_REPORT_DEFAULT, _script(run, prefix, start, quoted)),
                               report_format="script", report_file=True)
    elif runner == "uvu":
        return NodeTestCommand(command=_line(_REPORT_DEFAULT, _uvu(run, prefix, args, focused)),
                               report_format="uvu-files", report_file=True)
    elif runner == "ava":
        return NodeTestCommand(command=_line(prefix, start, quoted, "--tap", shlex.join(focused)),
                               report_format="tap-flat")
    elif runner == "tap":
        return NodeTestCommand(
            command=_line(prefix, start, quoted, "--reporter=tap", shlex.join(focused)),
            report_format="tap")
    elif runner == "playwright":
        prefix += f" PLAYWRIGHT_JUNIT_OUTPUT_NAME={_REPORT}"
        body = _line(start, quoted, "--reporter=junit", shlex.join(focused))
    elif runner == "karma":
        return NodeTestCommand(
            command=_line(prefix, start, quoted, "--single-run --browsers ChromeHeadless"),
            report_format="console")
    else:  # jasmine, uvu, web-test-runner: their console is what there is
        return NodeTestCommand(command=_line(prefix, start, quoted, shlex.join(focused)),
                               report_format="console")
    return NodeTestCommand(command=_line(_REPORT_DEFAULT, prefix, body),
                           report_format=run.report_format, report_file=True)


def _script(run: NodeTestRun, prefix: str, start: str, quoted: str) -> str:
    """The script's command with the mocha hook preloaded into its node processes; its output
    becomes the report when no mocha run reported (a TAP or console runner)."""
    hook = f'"${REPORT_ENV}.mocha-hook.cjs"'
    console, status = f'"${REPORT_ENV}.console"', f'"${REPORT_ENV}.status"'
    options = f'NODE_OPTIONS="--require ${REPORT_ENV}.mocha-hook.cjs ${{NODE_OPTIONS:-}}"'
    return _line(f"printf '%s' {shlex.quote(MOCHA_HOOK)} > {hook} &&",
                 f"{{ {_line(prefix, options, start, quoted)} 2>&1; echo $? > {status}; }}",
                 f"| tee {console}; [ -s {_REPORT} ] || cp {console} {_REPORT};",
                 f"rc=$(cat {status}); rm -f {hook} {console} {status}; exit $rc")


def _uvu(run: NodeTestRun, prefix: str, args: Sequence[str], focused: Sequence[str]) -> str:
    """Each uvu test file run by node with the hooks that report its tests (uvu's own console
    names only the failures)."""
    files = focused or [f for f in run.test_files if f not in run.crashed]
    requires = [word for option, value in zip(args, args[1:], strict=False) if option in {"-r", "--require"}
                for word in ("-r", value)]
    base = f"${{{REPORT_ENV}}}.benchsmith-uvu"
    writes = " && ".join(f"printf '%s' {shlex.quote(text)} > \"{base}-{name}\""
                         for name, text in (("hook.cjs", UVU_HOOK), ("loader.mjs", UVU_LOADER),
                                            ("module.mjs", UVU_MODULE)))
    node = _line("node", f'-r "{base}-hook.cjs" --experimental-loader "file://{base}-loader.mjs"',
                 shlex.join(requires))
    sources = shlex.join(files) if files else "/dev/null"
    loop = (f"{writes} && rc=0; for f in {sources}; do {node} \"$f\" || rc=1; done; "
            f'rm -f "{base}"-*; exit $rc')
    return _line(prefix, "sh -c", shlex.quote(loop))


def _found_at_run_time(run: NodeTestRun) -> str:
    """Shell words listing the test files when the checkout's files did not hold them (the
    output of a build step): directories searched with find, globs left to the shell."""
    words: list[str] = []
    for target in positionals(run.runner, run.args):
        if any(char in target for char in "*?["):
            words.append(target)
        else:
            words.append(f"$(find {shlex.quote(target)} -type f \\( -name '*.js' -o -name '*.cjs' "
                         "-o -name '*.mjs' \\) -not -path '*/node_modules/*' 2>/dev/null | sort)")
    return " ".join(words) or "/dev/null"


def _without(args: Sequence[str], paths: set[str], values: frozenset[str]) -> list[str]:
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            kept.append(arg)
            skip = False
        elif arg.startswith("-"):
            kept.append(arg)
            skip = "=" not in arg and arg in values
        elif arg not in paths:
            kept.append(arg)
    return kept


def _line(*parts: str) -> str:
    return " ".join(part for part in parts if part)
