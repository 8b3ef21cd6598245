"""Read the JSON lines benchsmith's preloaded hooks write for runners without a usable reporter
(see ``harness/node_hooks.py``): mocha runs started by a project's own task, uvu test files. A
script's report without such lines is its console: TAP, or a jest/vitest/mocha console."""

from __future__ import annotations

import json
import re

from benchsmith.core import TestResult, TestStatus
from benchsmith.parsing.js_console import parse_js_console
from benchsmith.parsing.node_ids import relative_path, results, test_id
from benchsmith.parsing.tap import parse_tap

_STATUSES = {"passed": TestStatus.PASSED, "failed": TestStatus.FAILED,
             "skipped": TestStatus.SKIPPED}
_TAP_RESULT = re.compile(r"^\s*(?:not ok|ok)\b", re.MULTILINE)


def parse_node_events(report: str, root: str | None = None) -> list[TestResult]:
    """Per-test results of the hooks' JSON lines in `report` (the last status of a test wins)."""
    found: list[tuple[str, TestStatus]] = []
    for line in report.splitlines():
        if not line.startswith('{"benchsmith"'):
            continue
        try:
            event = json.loads(line)
        except ValueError:  # a line cut short by a killed process
            continue
        status = _STATUSES.get(str(event.get("status")))
        if status is None:
            continue
        file = relative_path(str(event.get("file") or ""), root)
        if event.get("benchsmith") == "uvu":
            titles = [str(event.get("suite") or ""), str(event.get("name") or "")]
        else:
            titles = [str(title) for title in event.get("titlePath") or []]
        found.append((test_id(file, titles), status))
    return results(found)


def parse_script_report(report: str, root: str | None = None) -> list[TestResult]:
    """Per-test results of a script run as it is: the mocha runs its hook reported, else its
    console read as TAP or as a jest/vitest/mocha console."""
    if any(line.startswith('{"benchsmith"') for line in report.splitlines()):
        return parse_node_events(report, root)
    if _TAP_RESULT.search(report):
        return parse_tap(report, root)
    return parse_js_console(report, root)
