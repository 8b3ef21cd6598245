"""Read JUnit XML as JavaScript runners write it (vitest's junit reporter, playwright's,
jest-junit, node's test runner) into the IDs the JSON and TAP reports give."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

from benchsmith.core import TestResult, TestStatus
from benchsmith.parsing.node_ids import relative_path, results, test_id

_PATH_LIKE = re.compile(r"[/\\]|\.(?:[cm]?[jt]sx?)$")
# vitest joins titles with " > ", playwright with " › "
_TITLE_SPLIT = re.compile(r" (?:>|›) ")


def parse_js_junit(xml: str, root: str | None = None) -> list[TestResult]:
    """Per-test results of a JUnit report; raises ValueError when it is unreadable."""
    try:
        top = ElementTree.fromstring(xml)
    except ElementTree.ParseError as exc:
        raise ValueError(f"unreadable JUnit report: {exc}") from None
    found: list[tuple[str, TestStatus]] = []
    _walk(top, [], "", root, found)
    return results(found)


def _walk(element: ElementTree.Element, suites: list[str], file: str, root: str | None,
          found: list[tuple[str, TestStatus]]) -> None:
    for child in element:
        if child.tag == "testsuite":
            name = child.get("name", "")
            named_file = child.get("file") or (name if _PATH_LIKE.search(name) else "")
            if named_file:
                _walk(child, suites, relative_path(named_file, root), root, found)
            else:
                _walk(child, [*suites, name], file, root, found)
        elif child.tag == "testcase":
            classname = child.get("classname", "")
            case_file = child.get("file") or (classname if _PATH_LIKE.search(classname) else "")
            path = relative_path(case_file, root) if case_file else file
            titles = _TITLE_SPLIT.split(child.get("name", ""))
            # a suite named like the test's file is the file, not a describe block
            kept = [suite for suite in suites if suite and suite != path]
            found.append((test_id(path, [*kept, *titles]), _status(child)))


def _status(case: ElementTree.Element) -> TestStatus:
    tags = {child.tag for child in case}
    if "failure" in tags:
        return TestStatus.FAILED
    if "error" in tags:
        return TestStatus.ERROR
    if "skipped" in tags:
        return TestStatus.SKIPPED
    return TestStatus.PASSED
