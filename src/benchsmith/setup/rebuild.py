"""Validate a rebuilt environment again: the record's test command must still pass."""

from __future__ import annotations

from benchsmith.core import Sandbox
from benchsmith.harness.testrun import count_tests, pass_rate
from benchsmith.parsing import parse_test_output
from benchsmith.setup.record import SetupRecord


def validate_in(sandbox: Sandbox, record: SetupRecord, threshold: float,
                timeout_s: float = 1800) -> tuple[bool, float | None, int]:
    """Run the record's test commands in `sandbox`: (validated, pass rate, number of tests)."""
    env = {"UV_EXCLUDE_NEWER": record.exclude_newer or ""}
    results = [sandbox.exec(command, env=env, timeout=timeout_s) for command in record.test]
    tests = [t for r in results for t in parse_test_output(r.output, record.runner or "pytest")]
    rate = pass_rate(count_tests(tests))
    return rate is not None and rate >= threshold, rate, len(tests)
