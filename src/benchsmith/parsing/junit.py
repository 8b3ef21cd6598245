"""A second, unforgeable channel for pytest results: the JUnit XML report pytest itself writes.

Console output is what the code under test can print to: a patch that prints
``PASSED tests/test_x.py::test_y`` (and exits early) fools a harness that only reads the log.
The report is written by pytest, at the end of the session, to a path outside the repository
that the code under test is not told about. A test counts as passing only when the report agrees.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

from benchsmith.core import PASSING, TestStatus

# Where pytest is asked to write its report (outside any checkout; one file per command).
REPORT_DIR = "/tmp/benchsmith-reports"


def report_options(path: str) -> str:
    """PYTEST_ADDOPTS that make every pytest session of a command write its report to `path`
    (the environment variable reaches pytest however the command starts it)."""
    return f"--junitxml={path}"


def junit_key(nodeid: str) -> tuple[str, str]:
    """(classname, name) pytest writes for the test with node ID `nodeid` (its
    ``mangle_test_address``: the file part dotted without ``.py``, parameters kept; characters
    XML cannot hold written as pytest's ``bin_xml_escape`` writes them)."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return _xml_visible(".".join(names[:-1])), _xml_visible(names[-1])


# What XML 1.0 cannot hold. pytest writes such a character of a test ID (a control character
# in a parameter's ID, as old pytest versions printed bytes parameters) as ``#x01``.
_NOT_XML = re.compile("[^\u0009\u000A\u000D\u0020-\u007E\u0080-\uD7FF\uE000-\uFFFD"
                      "\U00010000-\U0010FFFF]")


def _xml_visible(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"#x{ord(m.group()):02X}" if ord(m.group()) <= 0xFF
                        else f"#x{ord(m.group()):04X}", text)


def junit_statuses(xml: bytes) -> dict[tuple[str, str], TestStatus]:
    """Status per (classname, name) in a JUnit report; raises ValueError when it is unreadable.

    A test case written twice (a rerun, or a teardown error after a pass) keeps its worst status.
    """
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError as exc:
        raise ValueError(f"unreadable JUnit report: {exc}") from None
    statuses: dict[tuple[str, str], TestStatus] = {}
    for case in root.iter("testcase"):
        key = (case.get("classname", ""), case.get("name", ""))
        status = _case_status(case)
        previous = statuses.get(key)
        if previous is None or (previous in PASSING and status not in PASSING):
            statuses[key] = status
    return statuses


def _case_status(case: ElementTree.Element) -> TestStatus:
    tags = {child.tag: child for child in case}
    if "error" in tags:
        return TestStatus.ERROR
    if "failure" in tags:
        return TestStatus.FAILED
    if "skipped" in tags:
        xfail = tags["skipped"].get("type") == "pytest.xfail"
        return TestStatus.XFAIL if xfail else TestStatus.SKIPPED
    return TestStatus.PASSED


def confirm(console: dict[str, TestStatus],
            report: dict[tuple[str, str], TestStatus] | None) -> tuple[dict[str, TestStatus], list[str]]:
    """Console statuses with every pass the report does not confirm turned into a failure.

    Returns the statuses and the tests whose console pass was not confirmed. Without a report
    (pytest never finished its session), no console pass is confirmed.
    """
    confirmed = dict(console)
    refuted: list[str] = []
    for name, status in console.items():
        if status not in PASSING:
            continue
        written = None if report is None else report.get(junit_key(name))
        if written in PASSING:
            continue
        confirmed[name] = written if written is not None else TestStatus.FAILED
        refuted.append(name)
    return confirmed, refuted
