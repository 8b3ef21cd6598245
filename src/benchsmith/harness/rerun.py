"""The commands of a test run that leaves out tests that hung, for every runner: pytest
deselects them; a `bin/test` script, which has no deselect, runs the other test files and, by
its ``-k`` keywords, the other functions of a hung test's file."""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection, Iterable
from pathlib import Path

from benchsmith.core import Sandbox
from benchsmith.harness.names import named_by
from benchsmith.harness.render import leaving_out, render_spec, report_format
from benchsmith.harness.testrun import TestRun, run_tests
from benchsmith.instance import TestSpec

__all__ = ["alone_commands", "hung_labels_again", "rerun_commands"]

_TEST_FUNCTION = re.compile(r"^def (test_\w*)\s*\(", re.MULTILINE)


def rerun_commands(sandbox: Sandbox, spec: TestSpec, files: list[str], left_out: list[str]) -> list[str]:
    """The commands that run `files` (none: the whole suite) the way `spec` says, without the
    tests `left_out` (``path::name``, or a whole ``path``)."""
    left_out = list(dict.fromkeys([*spec.deselect, *left_out]))
    if spec.runner == "pytest":
        return [render_spec(leaving_out(spec, [t for t in left_out if t not in spec.deselect]), files)]
    if spec.runner != "bintest" or spec.script is None or not left_out:
        return [render_spec(spec, files)]
    hung: dict[str, list[str]] = {}  # file -> its hung functions (none: the whole file)
    for test in left_out:
        path, _, name = test.partition("::")
        hung.setdefault(path, [])
        if name:
            hung[path].append(name)
    run = files or _test_files(sandbox, sorted({p.split("/")[0] for p in hung}))
    commands = []
    if rest := [f for f in run if f not in hung]:
        commands.append(render_spec(spec, rest))
    if "-k" not in spec.script.options:
        return commands  # the hung files' other functions cannot be named: left out with them
    for path, names in hung.items():
        if names and (not files or path in files):
            others = [n for n in _functions(sandbox, path)
                      if not any(n.lower() in h.lower() for h in names)]  # -k matches substrings
            if others:
                commands.append(render_spec(spec, [path], keywords=tuple(others)))
    return commands


def _test_files(sandbox: Sandbox, folders: list[str]) -> list[str]:
    """The ``test_*.py`` files under `folders` of the checkout, as a whole-suite run finds them."""
    listed = sandbox.exec(f"find {' '.join(shlex.quote(f) for f in folders)} -name 'test_*.py' -type f",
                          timeout=120)
    return sorted(line.strip().removeprefix("./") for line in listed.output.splitlines()
                  if line.strip().endswith(".py"))


def _functions(sandbox: Sandbox, path: str) -> list[str]:
    """The module-level test functions of `path`, in the order they are defined."""
    try:
        text = sandbox.read_file(path).decode("utf-8", errors="replace")
    except OSError:
        return []
    return list(dict.fromkeys(_TEST_FUNCTION.findall(text)))


def alone_commands(spec: TestSpec, tests: list[str]) -> list[str]:
    """The commands that run only `tests` (``path::name`` IDs) the way `spec` says: pytest
    takes the node IDs, a `bin/test` script each file with its functions as ``-k`` keywords;
    none for the runners that cannot select one test."""
    if spec.runner == "pytest":
        return [render_spec(spec, tests)]
    if spec.runner != "bintest" or spec.script is None or "-k" not in spec.script.options:
        return []
    by_file: dict[str, list[str]] = {}
    for test in tests:
        path, _, name = test.partition("::")
        if name:
            by_file.setdefault(path, []).append(name)
    return [render_spec(spec, [path], keywords=tuple(names)) for path, names in by_file.items()]


def hung_labels_again(sandbox: Sandbox, spec: TestSpec, run: TestRun, labels: Iterable[str],
                      timeout: float, stall_timeout: float | None, log: Path | None = None,
                      settled: Collection[str] = ()) -> None:
    """The tests of `run` that hung (not crashed) and that a published name in `labels`
    names get one run of their own, with twice the stall limit: a slow test on a loaded
    machine is not a failing one (the published harnesses have no stall limit). What that run
    says is their status in `run`; a test that hangs again stays hung. Nothing without a stall
    limit, or for a run that cannot be trusted, or for the tests `settled` (their verdict is
    known whatever this run would say)."""
    if not stall_timeout or not run.hung or run.infrastructure:
        return
    named = named_by(labels, run.hung)
    again = [t for t in run.hung if t in named and t not in run.crashed and t not in settled]
    commands = alone_commands(spec, again) if again else []
    if not commands:
        return
    second = run_tests(sandbox, commands, spec.runner, timeout, log, stall_timeout=stall_timeout * 2,
                       report_format=report_format(spec))
    for test in again:
        if test in second.statuses and test not in second.hung:
            run.statuses[test] = second.statuses[test]
            run.hung.remove(test)
    run.duration_s += second.duration_s
    run.contained += [c for c in second.contained if c not in run.contained]
    run.tampered += [t for t in second.tampered if t not in run.tampered]
