"""Tests that failed because the browser their test library drives is not installed (Playwright's
or Puppeteer's own download, which installs skip here): they say nothing about the environment,
as tests that need the network say nothing, and are named so that they are not counted."""

from __future__ import annotations

import json
import re
from typing import Any

from benchsmith.parsing.mocha_json import find_mocha_report, mocha_name
from benchsmith.parsing.node_ids import relative_path, test_id
from benchsmith.parsing.tap import tap_failures

__all__ = ["BROWSER_MISSING", "browser_missing"]

BROWSER_MISSING = re.compile(
    r"browserType\.launch: Executable doesn't exist|Executable doesn't exist at \S*ms-playwright|"
    r"Please run the following command to download new browsers|"
    r"Could not find (?:Chrome|Chromium|Firefox|expected browser)\b|"
    r"Browser was not found at the configured executablePath")


def browser_missing(report_format: str, text: str, root: str | None = None) -> list[str]:
    """The tests of a report (`report_format` as :func:`parse_node_report` reads it) that failed
    on a browser that is not installed."""
    if not BROWSER_MISSING.search(text):
        return []
    if report_format == "tap-flat":
        return [test_id("", [name]) for name, detail in tap_failures(text)
                if BROWSER_MISSING.search(detail)]
    try:
        data: Any = json.loads(text) if report_format == "jest-json" else find_mocha_report(text)
    except ValueError:
        return []
    found: list[str] = []
    if report_format == "jest-json" and isinstance(data, dict):
        for suite in data.get("testResults") or []:
            file = relative_path(str(suite.get("name") or suite.get("testFilePath") or ""), root)
            for case in suite.get("assertionResults") or []:
                messages = "\n".join(str(m) for m in case.get("failureMessages") or [])
                if case.get("status") == "failed" and BROWSER_MISSING.search(messages):
                    titles = [str(t) for t in case.get("ancestorTitles") or []]
                    found.append(test_id(file, [*titles, str(case.get("title", ""))]))
    elif report_format == "mocha-json" and isinstance(data, dict):
        for case in data.get("failures") or []:
            error = case.get("err") or {}
            if BROWSER_MISSING.search(f"{error.get('message', '')}\n{error.get('stack', '')}"):
                found.append(mocha_name(case, root))
    return found
