"""Test IDs of JavaScript runners: ``<file relative to the repository root>::<titles>``, the
describe titles then the test's, joined with " > ", the same whichever reporter wrote them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from benchsmith.core import TestResult, TestStatus

TITLE_SEPARATOR = " > "


def relative_path(path: str, root: str | None) -> str:
    """`path` relative to `root` when it lies under it (reports name files absolutely)."""
    path = path.replace("\\", "/").removeprefix("file://")
    if root:
        prefix = root.rstrip("/") + "/"
        if path.startswith(prefix):
            return path[len(prefix):]
    return path.removeprefix("./")


def test_id(file: str, titles: Sequence[str]) -> str:
    """The stable ID of the test `titles` (describe blocks, then the test) in `file`."""
    kept = [title for title in titles if title]
    if not kept:
        return file
    return f"{file}::{TITLE_SEPARATOR.join(kept)}" if file else TITLE_SEPARATOR.join(kept)


def results(found: Iterable[tuple[str, TestStatus]]) -> list[TestResult]:
    """One result per test ID, in the order IDs first appear; the last status wins."""
    statuses: dict[str, TestStatus] = {}
    for name, status in found:
        statuses[name] = status
    return [TestResult(name=name, status=status) for name, status in statuses.items()]
