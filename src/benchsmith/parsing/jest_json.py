"""Read the JSON report of jest (``--json``) and vitest (``--reporter=json``): ``testResults[]``
per file, each with ``assertionResults[]`` (``ancestorTitles``, ``title``, ``status``)."""

from __future__ import annotations

import json
from typing import Any

from benchsmith.core import TestResult, TestStatus
from benchsmith.parsing.node_ids import relative_path, results, test_id

STATUSES: dict[str, TestStatus] = {
    "passed": TestStatus.PASSED, "failed": TestStatus.FAILED, "pending": TestStatus.SKIPPED,
    "skipped": TestStatus.SKIPPED, "todo": TestStatus.SKIPPED, "disabled": TestStatus.SKIPPED,
    "focused": TestStatus.PASSED,
}


def parse_jest_json(report: str, root: str | None = None) -> list[TestResult]:
    """Per-test results of a jest or vitest JSON report; a file that failed before its tests
    ran (a syntax error, a failed import) is one ERROR result named by the file. Raises
    ValueError when `report` is not such a report."""
    try:
        data: Any = json.loads(report)
    except ValueError as exc:
        raise ValueError(f"unreadable jest/vitest JSON report: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("testResults"), list):
        raise ValueError("not a jest/vitest JSON report: no testResults")
    found: list[tuple[str, TestStatus]] = []
    for suite in data["testResults"]:
        file = relative_path(str(suite.get("name") or suite.get("testFilePath") or ""), root)
        assertions = suite.get("assertionResults") or suite.get("testResults") or []
        for assertion in assertions:
            status = STATUSES.get(str(assertion.get("status")), TestStatus.FAILED)
            titles = [str(title) for title in assertion.get("ancestorTitles") or []]
            found.append((test_id(file, [*titles, str(assertion.get("title", ""))]), status))
        if not assertions and suite.get("status") == "failed":
            found.append((file, TestStatus.ERROR))
    return results(found)
