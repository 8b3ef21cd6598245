"""Turn a test command's console output into per-test results."""

from __future__ import annotations

import re

from benchsmith.core import LogParser, TestResult
from benchsmith.parsing.pytest_log import (
    PytestLogParser,
    failure_messages,
    started_test,
    strip_ansi,
)
from benchsmith.parsing.unittest_log import UnittestLogParser, started_description

__all__ = ["PytestLogParser", "UnittestLogParser", "network_failures", "parse_test_output",
           "running_test", "strip_ansi"]

# Exceptions and messages of a test that tried to reach another host (sandboxes reach only the
# package indexes).
_NETWORK = re.compile(
    r"ConnectionError|ConnectionRefusedError|NewConnectionError|MaxRetryError|gaierror|URLError|"
    r"RemoteDisconnected|ProxyError|Name or service not known|Temporary failure in name resolution|"
    r"nodename nor servname|Network is unreachable|getaddrinfo failed|Failed to establish a new "
    r"connection|Could not resolve host|No address associated with hostname")

_PARSERS: dict[str, type[LogParser]] = {
    "pytest": PytestLogParser,
    "unittest": UnittestLogParser,
}


def parse_test_output(output: str, runner: str) -> list[TestResult]:
    """Parse `output` of a test run made with `runner` ("pytest" or "unittest")."""
    parser = _PARSERS.get(runner)
    if parser is None:
        raise ValueError(f"unknown test runner {runner!r}; expected one of {sorted(_PARSERS)}")
    return parser().parse(output)


def running_test(output: str, runner: str) -> str | None:
    """The test that had started but not finished when `output` ends (a hung test), in the
    names :func:`parse_test_output` gives; None when the last test that started finished
    (or no test started: a hang during collection)."""
    finished = {t.name for t in parse_test_output(output, runner)}
    started = started_test if runner == "pytest" else started_description
    for line in reversed(strip_ansi(output).splitlines()):
        if name := started(line):
            return None if name in finished else name
    return None


def network_failures(output: str, runner: str) -> set[str]:
    """Tests whose failure message says they tried to reach the network (pytest summaries)."""
    if runner != "pytest":
        return set()
    return {name for name, message in failure_messages(output).items() if _NETWORK.search(message)}
