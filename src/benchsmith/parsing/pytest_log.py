"""Parse pytest's console output (pytest 4 to 9: -v, -rap or -rA, xdist, colours; the verbose
lines of pytest 2 and 3) into test results.

The log is read as a sequence of sections delimited by pytest's ``=== title ===`` lines:
verbose result lines are read in the run section, ``-rap`` summary lines only inside
"short test summary info", and tracebacks or captured output (FAILURES, PASSES, ...)
are skipped, so a test that prints something shaped like a result does not count.
"""

from __future__ import annotations

import re
from enum import Enum

from benchsmith.core import TestResult, TestStatus

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")

_WORDS = {
    "PASSED": TestStatus.PASSED,
    "FAILED": TestStatus.FAILED,
    "ERROR": TestStatus.ERROR,
    "SKIPPED": TestStatus.SKIPPED,
    "XFAIL": TestStatus.XFAIL,
    "XPASS": TestStatus.XPASS,
    "xfail": TestStatus.XFAIL,  # pytest 3 wrote these in lower case
    "xpass": TestStatus.XPASS,
}
_WORD = r"(?P<word>PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS|xfail|xpass)"
# "path::name[params]": no spaces before the parameters, anything inside them.
_NODEID = r"(?P<nodeid>[^\s\[:]+::[^\s\[]+(?:\[.*?\])?)"
_REASON = r"(?:\s+\(.*\))?"
# " [ 10%]", " [ 3/20]", or a duration with console_output_style=times (pytest 9).
_PROGRESS = r"(?:\s*\[[\s\d/%]+\]|(?:\s+\d+(?:\.\d+)?[a-z]+)+)?"
_ORIGIN = r"(?:\s+<-\s+\S+)?"  # "-vv" names the file a test was inherited from
# pytest before 2.7 put the test's line after its file in verbose lines: "path.py@12::name"
_LINE_IN_PATH = re.compile(r"^(?P<path>[^\s:]+?\.py)@\d+::")

# pytest before 2.6 named a test by its location in verbose lines: "path.py:12: Class.test_x",
# its file relative to the working directory ("a.py <- b.py" when inherited), the line optional
_LOCATION_HEAD = (r"^(?P<path>[^\s:]+?\.py)(?: <- \S+?\.py)?(?::\d+)?: "
                  r"(?P<domain>[A-Za-z_][\w.]*(?:\[.*?\])?)")
_LOCATION = re.compile(rf"{_LOCATION_HEAD}\s+{_WORD}\s*$")
_LOCATION_STARTED = re.compile(rf"{_LOCATION_HEAD}(?:\s|$)")

_VERBOSE = re.compile(rf"^{_NODEID}{_ORIGIN}\s+{_WORD}{_REASON}{_PROGRESS}\s*$")
_XDIST = re.compile(rf"^\[gw\d+\]{_PROGRESS}\s+{_WORD}\s+(?P<rest>\S.*?){_ORIGIN}\s*$")
_BARE_WORD = re.compile(rf"^{_WORD}{_REASON}{_PROGRESS}\s*$")
_STARTED = re.compile(rf"^{_NODEID}(?:\s|$)")

_HEADER = re.compile(r"^=+ (?P<title>.*?) =+\s*$")
_STATS = re.compile(
    r"^(?:\d+ [a-z]+(?:, \d+ [a-z]+)*|no tests ran)(?: in \d+(?:\.\d+)?\s*s(?:econds)?\b.*)?$"
)
_BARE_STATS = re.compile(r"^(?:\d+ [a-z]+(?:, \d+ [a-z]+)*|no tests ran) in \d+(?:\.\d+)?\s*s")
_COLLECT_ERROR = re.compile(r"^_+ ERROR collecting (?P<path>.+?) _+$")

_SUMMARY = re.compile(r"^(?P<word>PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\s+(?P<rest>\S.*?)\s*$")
_FOLDED_SKIP = re.compile(r"^\[\d+\]\s+(?P<location>\S+?(?::\d+)?):(?:\s|$)")
# A summary line is "WORD nodeid - message"; brackets hold parameters, which may contain " - ".
_ID_BEFORE_DASH = re.compile(r"[^\s\[]+(?:\[.*?\])?(?=\s+-\s|$)")
_ID_BEFORE_SPACE = re.compile(r"[^\s\[]+(?:\[.*?\])?(?=\s|$)")


def strip_ansi(text: str) -> str:
    """Remove ANSI escape sequences (colours, cursor moves, hyperlinks) from `text`."""
    return _ANSI.sub("", text)


def split_lines(output: str) -> list[str]:
    """Strip colours from `output` and split it on any newline convention."""
    return re.split(r"\r\n|\r|\n", strip_ansi(output))


class _Section(Enum):
    RUN = "run"
    REPORT = "report"
    SUMMARY = "summary"


class _Session:
    """Results of one pytest session, where summary lines outrank verbose lines."""

    def __init__(self) -> None:
        self.seen: dict[str, None] = {}
        self.verbose: dict[str, TestStatus] = {}
        self.summary: dict[str, TestStatus] = {}

    def record(self, name: str, status: TestStatus, *, summary: bool) -> None:
        self.seen.setdefault(name)
        (self.summary if summary else self.verbose)[name] = status

    def flush_into(self, results: dict[str, TestStatus]) -> None:
        for name in self.seen:
            if self.verbose and _is_location(name) and name not in self.verbose:
                continue  # "SKIPPED [2] path:line": the verbose lines named those tests already
            results[name] = self.summary[name] if name in self.summary else self.verbose[name]


class PytestLogParser:
    """Reads pytest output; the summary beats verbose lines, and the last status wins."""

    def parse(self, output: str) -> list[TestResult]:
        """Return one result per test in `output`, in the order tests first appear."""
        results: dict[str, TestStatus] = {}
        session = _Session()
        section = _Section.RUN
        started: str | None = None  # a test whose verbose line was split by its output (-s)
        for line in split_lines(output):
            header = _HEADER.match(line)
            if header or (section is _Section.SUMMARY and _BARE_STATS.match(line)):
                title = header.group("title").strip() if header else line
                if title == "short test summary info":
                    section = _Section.SUMMARY
                elif title == "test session starts" or _STATS.match(title):
                    session.flush_into(results)
                    session, section = _Session(), _Section.RUN
                else:
                    section = _Section.REPORT
                started = None
            elif section is _Section.SUMMARY:
                parsed = _parse_summary_line(line)
                if parsed:
                    session.record(*parsed, summary=True)
            elif collect_error := _COLLECT_ERROR.match(line):
                session.record(collect_error["path"], TestStatus.ERROR, summary=True)
            elif section is _Section.RUN:
                parsed = _parse_run_line(line, started)
                if parsed:
                    session.record(*parsed, summary=False)
                    started = None
                elif begun := started_test(line):
                    started = begun
        session.flush_into(results)
        return [TestResult(name=name, status=status) for name, status in results.items()]


def _is_location(name: str) -> bool:
    """A skip reported by location (``path.py:12``), not by node ID."""
    return "::" not in name and bool(re.search(r"\.py:\d+$", name))


def _parse_run_line(line: str, started: str | None) -> tuple[str, TestStatus] | None:
    if match := _XDIST.match(line):
        return match["rest"], _WORDS[match["word"]]
    if match := _VERBOSE.match(line):
        return _node_id(match["nodeid"]), _WORDS[match["word"]]
    if match := _LOCATION.match(line):
        return _location_id(match), _WORDS[match["word"]]
    if started and (match := _BARE_WORD.match(line)):
        return started, _WORDS[match["word"]]
    return None


def _parse_summary_line(line: str) -> tuple[str, TestStatus] | None:
    match = _SUMMARY.match(line)
    if not match:
        return None
    status, rest = _WORDS[match["word"]], match["rest"]
    if status is TestStatus.SKIPPED and (folded := _FOLDED_SKIP.match(rest)):
        return folded["location"], status
    if status in (TestStatus.XFAIL, TestStatus.XPASS):
        nodeid = _ID_BEFORE_SPACE.match(rest)  # before pytest 8: "XPASS nodeid reason"
    else:
        nodeid = _ID_BEFORE_DASH.match(rest) or _ID_BEFORE_SPACE.match(rest)
    # pytest 3 names a class's tests "Class::()::test" in its summary, "Class::test" elsewhere
    return (nodeid.group().replace("::()::", "::"), status) if nodeid else None


def started_test(line: str) -> str | None:
    """The node ID a verbose line begins with (``path::name[params]``, or before pytest 2.6
    ``path:line: Class.name``), if it does."""
    if match := _STARTED.match(line):
        return _node_id(match["nodeid"])
    location = _LOCATION_STARTED.match(line)
    return _location_id(location) if location else None


def _location_id(match: re.Match[str]) -> str:
    """The node ID of a test pytest before 2.6 named by its location."""
    name, bracket, params = match["domain"].partition("[")
    return f"{match['path']}::{name.replace('.', '::')}{bracket}{params}"


def _node_id(verbose_id: str) -> str:
    """The node ID a verbose line names, without the line number pytest before 2.7 added."""
    return _LINE_IN_PATH.sub(r"\g<path>::", verbose_id)


def failure_messages(output: str) -> dict[str, str]:
    """The message of each FAILED/ERROR line of the short test summary (``-rap``), by node ID;
    empty where the line has none (pytest before 5 printed ``FAIL nodeid`` alone)."""
    messages: dict[str, str] = {}
    in_summary = False
    for line in split_lines(output):
        header = _HEADER.match(line)
        if header:
            in_summary = header.group("title").strip() == "short test summary info"
            continue
        if not in_summary or not line.startswith(("FAILED ", "ERROR ", "FAIL ")):
            continue
        rest = line.split(" ", 1)[1]
        nodeid = _ID_BEFORE_DASH.match(rest)
        tail = rest[nodeid.end():] if nodeid else " "
        if nodeid and (not tail.strip() or tail.startswith(" - ")):
            messages[nodeid.group().replace("::()::", "::")] = tail[3:]
    return messages


_BLOCK = re.compile(r"^_{3,} (?:ERROR at (?:setup|teardown) of )?(?P<head>.+?) _{3,}$")
_CAPTURED = re.compile(r"^-{3,} Captured (?:stdout|stderr|log) (?:setup|call|teardown) -{3,}$")


def failure_details(output: str) -> dict[str, str]:
    """What the FAILURES and ERRORS sections say of each failed test beyond the summary's one
    line: its exception lines (``E   ...``) and its captured output, by node ID. The test's
    source, shown in the traceback, is left out (it may name an error it only handles)."""
    blocks: dict[str, list[str]] = {}
    lines: list[str] | None = None
    in_failures = captured = False
    for line in split_lines(output):
        header = _HEADER.match(line)
        if header:
            in_failures = header.group("title").strip() in ("FAILURES", "ERRORS")
            lines = None
            continue
        block = _BLOCK.match(line) if in_failures else None
        if block:
            lines, captured = blocks.setdefault(block.group("head"), []), False
        elif lines is not None and _CAPTURED.match(line):
            captured = True
        elif lines is not None and (captured or line.startswith("E ")):
            lines.append(line)
    # A block is headed by the test's name within its module ("TestX.test_y[1]").
    named: dict[str, list[str]] = {}
    # pytest before 2.9 prints no summary under -rap: the failed tests its verbose lines name
    failed = list(failure_messages(output)) or [
        t.name for t in PytestLogParser().parse(output)
        if t.status in (TestStatus.FAILED, TestStatus.ERROR)]
    for nodeid in failed:
        named.setdefault(nodeid.split("::", 1)[-1].replace("::", "."), []).append(nodeid)
    return {ids[0]: "\n".join(blocks[head]) for head, ids in named.items()
            if len(ids) == 1 and blocks.get(head)}

