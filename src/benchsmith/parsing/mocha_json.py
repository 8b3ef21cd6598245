"""Read mocha's JSON report: ``passes``, ``failures`` and ``pending``, each test with ``title``,
``fullTitle`` and ``file`` (and ``titlePath`` where benchsmith's file reporter wrote it).

mocha's own ``json`` reporter prints to stdout, amid whatever the tests print: the report is the
last JSON object there that has ``stats``."""

from __future__ import annotations

import json
import re
from typing import Any

from benchsmith.core import TestResult, TestStatus
from benchsmith.parsing.node_ids import relative_path, results, test_id

_OBJECT_START = re.compile(r"^\{", re.MULTILINE)


def find_mocha_report(output: str) -> dict[str, Any] | None:
    """The last JSON object with ``stats`` that starts a line of `output`, or None."""
    decoder = json.JSONDecoder()
    for start in reversed([match.start() for match in _OBJECT_START.finditer(output)]):
        try:
            data, _ = decoder.raw_decode(output, start)
        except ValueError:
            continue
        if isinstance(data, dict) and "stats" in data:
            return data
    return None


def parse_mocha_json(report: str, root: str | None = None) -> list[TestResult]:
    """Per-test results of a mocha JSON report (a file's content, or output that holds one);
    raises ValueError when there is none."""
    data = find_mocha_report(report)
    if data is None:
        raise ValueError("no mocha JSON report (an object with stats) in the output")
    found: list[tuple[str, TestStatus]] = []
    for key, status in (("passes", TestStatus.PASSED), ("pending", TestStatus.SKIPPED),
                        ("failures", TestStatus.FAILED)):
        for test in data.get(key) or []:
            found.append((mocha_name(test, root), status))
    return results(found)


def mocha_name(test: dict[str, Any], root: str | None) -> str:
    """The ID of one test of a mocha JSON report."""
    file = relative_path(str(test.get("file") or ""), root)
    titles = test.get("titlePath")
    if isinstance(titles, list):
        return test_id(file, [str(title) for title in titles])
    # mocha's own reporter joins the describe titles with spaces: they cannot be told apart
    title, full = str(test.get("title", "")), str(test.get("fullTitle", ""))
    parents = full[: -len(title)].rstrip() if title and full.endswith(title) else ""
    return test_id(file, [parents, title] if parents else [full or title])
