"""A test that crashes the runner: node dies on an uncaught exception thrown from a test file
(a callback of a test that had already finished), and the tests after it never run. The file
is left out of the suite once, so that the rest of the suite is measured."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path, PurePosixPath
from typing import Any

from benchsmith.core import Diagnosis, NodePlan, Plan
from benchsmith.harness.node_render import can_leave_out

__all__ = ["crashed_runner", "repair_crashed_file"]

# node's report of an uncaught exception, the process's last words: the throwing line, a caret
# under it, a blank line, the error, its stack
_FATAL = re.compile(r"^[^\n]*\n[ \t]*\^+[ \t]*\n[ \t]*\n(?P<error>[^\n]+)\n"
                    r"(?P<stack>(?:[ \t]+at [^\n]*\n?)+)", re.MULTILINE)
_FRAME = re.compile(r"(?:\(|at )(?:file://)?(?P<path>[^\s()]+?):\d+:\d+\)?\s*$")
_TEST_PATH = re.compile(r"(?:^|/)(?:tests?|__tests__|specs?)/|[._-](?:test|spec)s?\.[cm]?[jt]sx?$")
# JavaScript and TypeScript sources; fixtures and helpers beside the tests are not test files
_SOURCE = re.compile(r"\.[cm]?[jt]sx?$")
_NOT_TESTS = re.compile(r"(?:^|/)(?:node_modules|fixtures?|__fixtures__|__mocks__|helpers?|"
                        r"support|__snapshots__)/")


def crashed_runner(out: str, returncode: int, context: Any) -> Diagnosis | None:
    """The runner died of an uncaught exception whose stack names a test file of the checkout:
    that file (checkout-relative) and the error line, as a diagnosis."""
    if returncode == 0:
        return None
    root = Path(getattr(context, "repo_root", "") or ".")
    for found in reversed(list(_FATAL.finditer(out))):
        error = found.group("error").strip()
        for line in found.group("stack").splitlines():
            frame = _FRAME.search(line)
            path = _checkout_path(frame.group("path"), root) if frame else None
            if path and _TEST_PATH.search(path) and not _NOT_TESTS.search(path):
                return Diagnosis(category="testing", kind="test_file_crashed",
                                 evidence=f"{error}\n{found.group('stack').rstrip()}"[:2_000],
                                 facts={"file": [path], "error": [error[:300]]},
                                 reason=f"a test in {path} crashed the runner: {error[:200]}")
    return None


def _checkout_path(path: str, root: Path) -> str | None:
    """`path` (as node printed it: absolute in the sandbox, or relative) relative to the
    checkout, when a file of the checkout is at its end; never one under node_modules."""
    if "node_modules/" in path or path.startswith(("node:", "internal/")):
        return None
    parts = PurePosixPath(path).parts
    for start in range(len(parts)):
        candidate = PurePosixPath(*parts[start:])
        if not candidate.is_absolute() and (root / candidate).is_file():
            return candidate.as_posix()
    return None


def repair_crashed_file(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any
                        ) -> str | None:
    """Leave the crashing test file out of the suite, once per file and only when other test
    files remain; the rest of the suite is judged as usual."""
    file, error = diagnosis.facts.get("file", [""])[0], diagnosis.facts.get("error", [""])[0]
    run = node.tests
    if not file or file in run.crashed or not can_leave_out(run) or not _excludable(run, context):
        return None
    rest = _other_test_files(run.test_files, file, run.crashed, context)
    if not rest:
        diagnosis.reason += " (no other test file to run without it)"
        return None
    run.crashed.append(file)
    plan.notes.append(f"left out {file}: a test in it crashed the runner ({error}); the suite's "
                      f"other {len(rest)} test file(s) are judged without it")
    plan.sources.setdefault("runner", []).append(f"repair: {file} crashed the runner")
    return f"leave out {file} (a test in it crashed the runner: {error})"


def _excludable(run: Any, context: Any) -> bool:
    """mocha leaves files out with `--exclude` from mocha 5.1 on: a declared mocha that
    installs an older one cannot (its test files would have to be listed one by one)."""
    if run.runner != "mocha":
        return True
    declared = {**(getattr(context, "dependencies", None) or {}),
                **(getattr(context, "dev_dependencies", None) or {})}
    found = re.match(r"^\s*([\^~=v]*)\s*(\d+)(?:\.(\d+))?", str(declared.get("mocha", "")))
    if found is None:
        return True
    major, minor = int(found.group(2)), int(found.group(3) or 0)
    return major > 5 or (major == 5 and (minor >= 1 or found.group(1) == "^"))


def _other_test_files(listed: list[str], file: str, crashed: list[str], context: Any) -> list[str]:
    """The test files still to run: the plan's list, else the checkout's files that look like
    tests (under a test directory or named *.test.js / *.spec.ts ...)."""
    if listed:
        return [f for f in listed if f != file and f not in crashed]
    root = getattr(context, "repo_root", None)
    if not root:
        return []
    result = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True)
    tracked = result.stdout.splitlines() if result.returncode == 0 else []
    return [f for f in tracked if f != file and f not in crashed and _SOURCE.search(f)
            and _TEST_PATH.search(f) and not _NOT_TESTS.search(f)]
