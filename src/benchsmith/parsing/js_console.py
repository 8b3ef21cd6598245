"""The fallback for JavaScript runners without a usable reporter: their default consoles (jest's
and vitest's ``✓``/``✕`` lines under a file header, mocha's spec reporter with its numbered
failures). The describe blocks are read from the indentation."""

from __future__ import annotations

import re

from benchsmith.core import TestResult, TestStatus
from benchsmith.parsing.node_ids import relative_path, results, test_id
from benchsmith.parsing.pytest_log import strip_ansi

# "PASS test/a.test.js" (jest), "✓ test/a.test.js (3 tests)" / "❯ ..." (vitest)
_FILE = re.compile(r"^\s*(?:PASS|FAIL|[✓❯×✗]|√)\s+(?P<file>\S+\.[cm]?[jt]sx?)\b(?:\s+\(.*\))?\s*$")
_MARKS: tuple[tuple[re.Pattern[str], TestStatus], ...] = (
    (re.compile(r"^(?P<indent>\s*)(?:✓|✔|√)\s+(?P<title>.+?)(?:\s+\(\d+(?:\.\d+)?\s*m?s\))?\s*$"),
     TestStatus.PASSED),
    (re.compile(r"^(?P<indent>\s*)(?:✕|✖|×|✗|\d+\))\s+(?P<title>.+?)(?:\s+\(?\d+(?:\.\d+)?\s*m?s\)?)?\s*$"),
     TestStatus.FAILED),
    (re.compile(r"^(?P<indent>\s*)(?:○ skipped|○ todo|✎ todo|↓|-)\s+(?P<title>.+?)(?:\s+\[skipped\])?\s*$"),
     TestStatus.SKIPPED),
)
# where the per-test lines end and failure details begin (vitest; jest's "●" per file)
_DETAILS = re.compile(r"^\s*(?:⎯+ Failed Tests|⎯+ Failed Suites|●)")
_SUMMARY = re.compile(r"^\s*(?:\d+ (?:passing|failing|pending)\b|Tests?:|Test Files|Test Suites:|"
                      r"Snapshots:|Time:|Ran all|Duration|Start at)")


def parse_js_console(output: str, root: str | None = None) -> list[TestResult]:
    """Per-test results from a jest, vitest or mocha console (the last status wins)."""
    found: list[tuple[str, TestStatus]] = []
    file = ""
    describes: list[tuple[int, str]] = []  # (indent, title) of the open describe blocks
    details = False
    for raw in strip_ansi(output).splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        if header := _FILE.match(line):
            file, describes, details = relative_path(header["file"], root), [], False
            continue
        if details or _DETAILS.match(line):
            details = True
            continue
        if _SUMMARY.match(line):
            describes = []
            if re.match(r"^\s*\d+ failing", line):
                break  # mocha's numbered failure reports follow: their titles repeat the tests'
            continue
        indent = len(line) - len(line.lstrip())
        for pattern, status in _MARKS:
            if mark := pattern.match(line):
                parents = [title for depth, title in describes if depth < indent]
                titles = mark["title"].split(" > ")
                if len(titles) > 1 and _FILE.match(f"PASS {titles[0]}"):  # vitest's verbose line
                    found.append((test_id(relative_path(titles[0], root), titles[1:]), status))
                else:
                    found.append((test_id(file, [*parents, mark["title"]]), status))
                break
        else:
            # describe titles are indented; what starts a line is output of the tests
            if indent < 2 or line.lstrip().startswith(("at ", "→", "stdout |", "stderr |")):
                continue
            describes = [(depth, title) for depth, title in describes if depth < indent]
            describes.append((indent, line.strip()))
    return results(found)
