"""Tests that compare against a snapshot file the source lacks (a mirror that left a tracked
file out): syrupy's ``tests/__snapshots__/test_x.ambr`` (or ``__snapshots__/test_x/...``) for
``tests/test_x.py``, jest's and vitest's ``__snapshots__/x.test.js.snap`` for ``x.test.js``.
Their failures say nothing of the environment: like tests that need the network, they are
recorded and not counted."""

from __future__ import annotations

import posixpath

from benchsmith.core import TestResult, TestStatus

SNAPSHOT_DIR = "__snapshots__"
_FAILING = (TestStatus.FAILED, TestStatus.ERROR)


def snapshot_modules(missing_files: list[str]) -> set[str]:
    """The test modules (repository-relative, without their extension where the snapshot's
    name leaves it open) whose snapshot files are among `missing_files`."""
    modules: set[str] = set()
    for path in missing_files:
        parts = path.split("/")
        if SNAPSHOT_DIR not in parts[:-1]:
            continue
        at = parts.index(SNAPSHOT_DIR)
        folder, name = "/".join(parts[:at]), parts[at + 1]
        if at + 2 == len(parts):  # a file per module: drop the snapshot's own extension
            name = name.rsplit(".", 1)[0]
        modules.add(posixpath.join(folder, name) if folder else name)
    return modules


def tests_lacking_snapshots(tests: list[TestResult], missing_files: list[str]) -> list[str]:
    """The failing tests (``path::name`` IDs) of modules whose snapshot files the source lacks."""
    modules = snapshot_modules(missing_files)
    if not modules:
        return []
    found = []
    for test in tests:
        module = test.name.split("::", 1)[0]
        if test.status in _FAILING and "::" in test.name and (
                module in modules or posixpath.splitext(module)[0] in modules):
            found.append(test.name)
    return found
