"""Parse the verbose output of a project's own function-based test runner (SymPy's ``bin/test
--verbose`` and runners printing its format).

Each test file opens with its repository-relative path and test count, ``pkg/tests/test_a.py[3]``;
each test function then starts a line with its name and one status: ``ok``, ``F`` (failed),
``E`` (an exception), ``T`` (timed out), ``f`` (expected to fail), ``X`` (expected to fail but
passed), or a skip (``<reason> s``, `` - s``; ``Slow w``, ``Timeout T``, ``KeyboardInterrupt K``).
A file ends with ``[OK]`` or ``[FAIL]`` aligned right; a file that does not import prints
``path[?]   Failed to import``. After the last file, each failure and exception gets a section
headed ``___ path:test_name ___`` (``___ path ___`` for an import). Test IDs are
``path::test_name``.
"""

from __future__ import annotations

import re

from benchsmith.core import FAILING, TestResult, TestStatus
from benchsmith.parsing.pytest_log import split_lines

_FILE = re.compile(r"^(?P<path>\S+\.py)\[(?P<count>\d+|\?)\]\s*(?P<rest>.*)$")
_TEST = re.compile(r"^(?P<name>test\w*) ?(?P<rest>.*)$")
_VERDICT = re.compile(r"\s*\[(?:OK|FAIL)\]\s*$")
_SECTION = re.compile(r"^_*\s(?P<path>\S+\.py)(?::(?P<name>\w+))?\s_*$")
_RULE = re.compile(r"^_{10,}$")
_FINISHED = re.compile(r"^=*\s*tests finished: ")
_STATUS = {
    "ok": TestStatus.PASSED,
    "F": TestStatus.FAILED,
    "E": TestStatus.ERROR,
    "T": TestStatus.ERROR,  # the test raised the runner's timeout
    "f": TestStatus.XFAIL,
    "X": TestStatus.XPASS,
}
_SKIP = re.compile(r"^.+ [swKT]$")  # a skip writes its reason (or " - ") before its letter


def _status(text: str) -> TestStatus | None:
    text = _VERDICT.sub("", text).strip() if _VERDICT.search(text) else text.strip()
    if text in _STATUS:
        return _STATUS[text]
    return TestStatus.SKIPPED if _SKIP.match(text) or text in ("- s", "s", "w", "K") else None


class BintestLogParser:
    """Reads the verbose per-function output; the failure sections at the end confirm failures."""

    def parse(self, output: str) -> list[TestResult]:
        """Return one result per test in `output`, in the order tests first appear."""
        results, _ = _read(output)
        return [TestResult(name=name, status=status) for name, status in results.items()]


def _read(output: str) -> tuple[dict[str, TestStatus], str | None]:
    """The statuses in `output`, and the test that started last without a status (or None)."""
    results: dict[str, TestStatus] = {}
    path: str | None = None
    running: str | None = None
    for line in split_lines(output):
        if section := _SECTION.match(line) if line.startswith(("_", " ")) else None:
            name = f"{section['path']}::{section['name']}" if section["name"] else section["path"]
            if results.get(name) not in FAILING:
                results[name] = TestStatus.FAILED if section["name"] else TestStatus.ERROR
            path = running = None
        elif _RULE.match(line) or _FINISHED.match(line):
            path = running = None
        elif opened := _FILE.match(line):
            path, running = opened["path"], None
            if opened["count"] == "?":  # the module did not import
                results[path] = TestStatus.ERROR
                path = None
        elif path and (test := _TEST.match(line)):
            running = f"{path}::{test['name']}"
            if status := _status(test["rest"]):
                results[running] = status
                running = None
        elif running and (status := _status(line)):
            results[running] = status  # its status, after what the test printed
            running = None
    return results, running


def started_function(output: str) -> str | None:
    """The test that had started but printed no status when `output` ends (a hung test)."""
    return _read(output)[1]


def bintest_failure_messages(output: str) -> dict[str, str]:
    """The traceback of each failure or exception section after the run, by test ID."""
    messages: dict[str, str] = {}
    current: str | None = None
    for line in split_lines(output):
        section = _SECTION.match(line) if line.startswith(("_", " ")) else None
        if section:
            current = f"{section['path']}::{section['name']}" if section["name"] else section["path"]
            messages[current] = ""
        elif _RULE.match(line) or _FINISHED.match(line):
            current = None
        elif current is not None:
            messages[current] += line + "\n"
    return messages
