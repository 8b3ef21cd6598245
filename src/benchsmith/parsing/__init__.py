"""Turn a test command's console output into per-test results."""

from __future__ import annotations

from benchsmith.core import LogParser, TestResult
from benchsmith.parsing.pytest_log import PytestLogParser, strip_ansi
from benchsmith.parsing.unittest_log import UnittestLogParser

__all__ = ["PytestLogParser", "UnittestLogParser", "parse_test_output", "strip_ansi"]

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
