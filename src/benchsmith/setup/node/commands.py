"""Render a detected Node test runner as the shell command that runs the tests (all, or the files
of a test patch) with the runner's machine-readable reporter writing outside the checkout."""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Sequence

from pydantic import BaseModel, Field

from benchsmith.parsing.junit import REPORT_DIR
from benchsmith.setup.node.runners import (
    VALUE_OPTIONS,
    NodeTestRunner,
    ReportFormat,
    positionals,
)

# The marker a per-file loop prints before each file's TAP stream (parsing/tap.py reads it).
FILE_MARKER = "# benchsmith-file: "
# Binaries a project installs are found the way npm's scripts find them.
PATH_PREFIX = 'PATH="$PWD/node_modules/.bin:$PATH"'

# A mocha reporter that writes mocha's json reporter's shape, each test also with its
# `titlePath` (the describe titles, then its own): the space-joined `fullTitle` cannot be split.
MOCHA_REPORTER = """'use strict';
const fs = require('fs');
const path = require('path');
function titles(runnable) {
  if (typeof runnable.titlePath === 'function') return runnable.titlePath();
  const found = [];
  for (let node = runnable; node; node = node.parent) if (node.title) found.unshift(node.title);
  return found;
}
function clean(test) {
  const err = test.err || {};
  return { title: test.title, fullTitle: titles(test).join(' '), titlePath: titles(test),
           file: test.file, duration: test.duration,
           err: err.message ? { message: String(err.message), stack: String(err.stack || '') } : {} };
}
function Reporter(runner, options) {
  const settings = (options && (options.reporterOption || options.reporterOptions)) || {};
  const output = settings.output || process.env.BENCHSMITH_MOCHA_REPORT;
  const tests = [], passes = [], failures = [], pending = [];
  runner.on('test end', (test) => tests.push(test));
  runner.on('pass', (test) => passes.push(test));
  runner.on('fail', (test) => failures.push(test));
  runner.on('pending', (test) => pending.push(test));
  runner.once('end', () => {
    const report = { stats: runner.stats || {}, tests: tests.map(clean), passes: passes.map(clean),
                     failures: failures.map(clean), pending: pending.map(clean) };
    fs.mkdirSync(path.dirname(output), { recursive: true });
    fs.writeFileSync(output, JSON.stringify(report, null, 2));
  });
}
module.exports = Reporter;
"""


class NodeTestCommand(BaseModel):
    """A rendered test command, where its report goes and the files to write before it runs."""

    command: str
    report_format: ReportFormat
    report_path: str | None = Field(
        default=None, description="the report's file; None: the report is the command's output")
    files: dict[str, str] = Field(default_factory=dict,
                                  description="path -> content written before the command runs")


def render_build_commands(spec: NodeTestRunner) -> list[str]:
    """The build steps the tests need first, as shell commands run in the checkout."""
    return [f"{PATH_PREFIX} {step}" for step in spec.build_steps]


def render_test_command(spec: NodeTestRunner, test_files: Sequence[str] = (),
                        report_dir: str = REPORT_DIR) -> NodeTestCommand:
    """The command running `spec`'s tests (only `test_files`, paths relative to the checkout,
    when given) with its report written into `report_dir`."""
    runner = spec.runner
    focused = list(test_files)
    args = list(spec.args)
    if focused:  # the script's own test paths give way to the focused files
        paths = set(positionals(runner, args))
        args = _without(args, paths, VALUE_OPTIONS.get(runner, frozenset()))
    env = {**spec.env, **spec.browser_env}
    prefix = " ".join([PATH_PREFIX, *(f"{key}={shlex.quote(value)}" for key, value in env.items())])
    start = shlex.join(spec.command)
    quoted = shlex.join(args)
    report = posixpath.join(report_dir, f"{runner}-report")
    files: dict[str, str] = {}
    if runner == "jest":
        report += ".json"
        tail = ["--ci", "--watchAll=false", "--json", f"--outputFile={report}"]
        if focused:
            tail += ["--runTestsByPath", *focused]
        body = _line(start, quoted, shlex.join(tail))
    elif runner == "vitest":
        report += ".json"
        body = _line(start, quoted, shlex.join(["--reporter=json", f"--outputFile={report}", *focused]))
    elif runner == "mocha":
        report += ".json"
        reporter = posixpath.join(report_dir, "benchsmith-mocha-reporter.js")
        files[reporter] = MOCHA_REPORTER
        tail = ["--reporter", reporter, "--reporter-options", f"output={report}", *focused]
        body = _line(start, quoted, shlex.join(tail))
    elif runner in {"tape", "node"}:
        selected = focused or spec.test_files
        options = shlex.join(_without(args, set(positionals(runner, args)),
                                      VALUE_OPTIONS[runner]))
        reporter = " --test-reporter=tap" if runner == "node" else ""
        sources = shlex.join(selected) if selected else _found_at_run_time(spec)
        body = (f"rc=0; for f in {sources}; do "
                f"printf '{FILE_MARKER}%s\\n' \"$f\"; {_line(start + reporter, options)} \"$f\" || rc=1; "
                "done; exit $rc")
        return NodeTestCommand(command=_line(prefix, "sh -c", shlex.quote(body)),
                               report_format="tap-files")
    elif runner == "ava":
        return NodeTestCommand(command=_line(prefix, start, quoted, "--tap", shlex.join(focused)),
                               report_format="tap")
    elif runner == "tap":
        return NodeTestCommand(
            command=_line(prefix, start, quoted, "--reporter=tap", shlex.join(focused)),
            report_format="tap")
    elif runner == "playwright":
        report += ".xml"
        prefix += f" PLAYWRIGHT_JUNIT_OUTPUT_NAME={shlex.quote(report)}"
        body = _line(start, quoted, "--reporter=junit", shlex.join(focused))
    elif runner == "karma":
        return NodeTestCommand(
            command=_line(prefix, start, quoted, "--single-run --browsers ChromeHeadless"),
            report_format="console")
    else:  # jasmine, uvu, web-test-runner: their console is what there is
        return NodeTestCommand(command=_line(prefix, start, quoted, shlex.join(focused)),
                               report_format="console")
    return NodeTestCommand(command=_line(f"mkdir -p {shlex.quote(report_dir)} &&", prefix, body),
                           report_format=spec.report_format, report_path=report, files=files)


def _found_at_run_time(spec: NodeTestRunner) -> str:
    """Shell words listing the test files when the checkout's files did not hold them (the
    output of a build step): directories searched with find, globs left to the shell."""
    words: list[str] = []
    for target in positionals(spec.runner, spec.args):
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
