"""One entry point for the reports of JavaScript test runners, by the format the rendered
command asked for (see ``setup/node``): jest/vitest JSON, mocha JSON, TAP, JUnit, console."""

from __future__ import annotations

from benchsmith.core import TestResult
from benchsmith.parsing.jest_json import parse_jest_json
from benchsmith.parsing.js_console import parse_js_console
from benchsmith.parsing.js_junit import parse_js_junit
from benchsmith.parsing.mocha_json import parse_mocha_json
from benchsmith.parsing.node_events import parse_node_events, parse_script_report
from benchsmith.parsing.tap import parse_tap

REPORT_FORMATS = ("jest-json", "mocha-json", "tap", "tap-files", "tap-flat", "junit", "console",
                  "uvu-files", "script")


def parse_node_report(report_format: str, report: str, root: str | None = None) -> list[TestResult]:
    """Per-test results of `report` (a report file's text, or the command's output for the
    formats written to it) in `report_format`; IDs are relative to `root`, the checkout."""
    if report_format == "jest-json":
        return parse_jest_json(report, root)
    if report_format == "mocha-json":
        return parse_mocha_json(report, root)
    if report_format in {"tap", "tap-files", "tap-flat"}:
        return parse_tap(report, root, files_at_top=report_format == "tap",
                         flat=report_format == "tap-flat")
    if report_format == "junit":
        return parse_js_junit(report, root)
    if report_format == "console":
        return parse_js_console(report, root)
    if report_format == "uvu-files":
        return parse_node_events(report, root)
    if report_format == "script":
        return parse_script_report(report, root)
    raise ValueError(f"unknown report format {report_format!r}; expected one of {REPORT_FORMATS}")
