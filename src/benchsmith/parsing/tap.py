"""Read TAP 13/14 as JavaScript runners write it: node's test runner and node-tap (nested
subtests, indented four spaces), tape (flat assertions grouped under ``# test name`` comments),
``# SKIP``/``# TODO`` directives and YAML diagnostics after a result.

Tests are the subtests that hold no further subtests; assertions inside a subtest (node-tap's
``ok 1 - should be equal``) make up its status. A stream cut into files by
``# benchsmith-file: <path>`` lines (a per-file loop) names each file's tests by that file."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from benchsmith.core import TestResult, TestStatus
from benchsmith.parsing.node_ids import relative_path, results, test_id

FILE_MARKER = "# benchsmith-file: "
_RESULT = re.compile(r"^(?P<indent>\s*)(?P<ok>not ok|ok)\b(?:\s+\d+)?(?:\s*-)?\s?(?P<rest>.*)$")
_SUBTEST = re.compile(r"^\s*# Subtest(?::\s*(?P<name>.*))?$")
_DIRECTIVE = re.compile(r"^\s*(?P<kind>skip|todo)\w*\b", re.IGNORECASE)
_UNESCAPED_HASH = re.compile(r"(?<!\\)#")
# tape's closing counts, which are comments too
_SUMMARY = re.compile(r"^# (?:tests|pass|fail|ok|skip|todo|cancelled|suites|duration_ms)\b")
# a tape test's title comment; ava's `t.log` lines, printed after their test's result, are
# comments indented under it ("#   message")
_TITLE = re.compile(r"^# \S")


@dataclass
class _Node:
    title: str
    status: TestStatus
    subtest: bool  # announced with "# Subtest:" (or in tape, a "# name" comment)
    children: list[_Node] = field(default_factory=list)


def parse_tap(output: str, root: str | None = None, files_at_top: bool = False,
              flat: bool = False) -> list[TestResult]:
    """Per-test results of TAP `output`. With `files_at_top`, the top-level subtests are the test
    files (node-tap); ``# benchsmith-file:`` lines name the file of what follows them. With
    `flat`, every result line is a test and no comment is a tape title (ava)."""
    found: list[tuple[str, TestStatus]] = []
    for file, chunk in _chunks(output):
        file = relative_path(file, root) if file else ""
        if not flat and not any(_SUBTEST.match(line) for line in chunk) and _tape_style(chunk):
            found += [(test_id(file, [title]), status) for title, status in _tape(chunk)]
            continue
        for node in _tree(chunk):
            if files_at_top and not file:
                top = relative_path(node.title, root)
                found += [(test_id(top, path[1:]), status) for path, status in _tests(node, [])]
            else:
                found += [(test_id(file, path), status) for path, status in _tests(node, [])]
    return results(found)


def _chunks(output: str) -> list[tuple[str, list[str]]]:
    chunks: list[tuple[str, list[str]]] = [("", [])]
    for line in output.splitlines():
        if line.startswith(FILE_MARKER):
            chunks.append((line[len(FILE_MARKER):].strip(), []))
        else:
            chunks[-1][1].append(line.rstrip("\r"))
    return [chunk for chunk in chunks if chunk[0] or chunk[1]]


def _split(rest: str) -> tuple[str, str | None]:
    """(description, directive kind) of a result line's text after its number."""
    parts = _UNESCAPED_HASH.split(rest, maxsplit=1)
    description = parts[0].strip().replace("\\#", "#").replace("\\\\", "\\")
    directive = _DIRECTIVE.match(parts[1]) if len(parts) > 1 else None
    return description, directive["kind"].lower() if directive else None


def _status(ok: str, directive: str | None) -> TestStatus:
    if directive is not None:  # a TODO's failure is expected; a SKIP did not run
        return TestStatus.SKIPPED
    return TestStatus.PASSED if ok == "ok" else TestStatus.FAILED


def _results(lines: list[str]) -> list[tuple[int, str, TestStatus, bool]]:
    """(indent, description, status, announced as a subtest) per result line, YAML skipped."""
    found: list[tuple[int, str, TestStatus, bool]] = []
    announced: list[str] = []
    yaml_indent: int | None = None
    previous_result = False
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if yaml_indent is not None:
            if line.strip() == "..." and indent == yaml_indent:
                yaml_indent = None
            continue
        if previous_result and line.strip() == "---":
            yaml_indent = indent
            continue
        previous_result = False
        subtest = _SUBTEST.match(line)
        if subtest:
            announced.append((subtest["name"] or "").strip().replace("\\#", "#"))
            continue
        result = _RESULT.match(line)
        if result:
            description, directive = _split(result["rest"])
            is_subtest = description in announced
            if is_subtest:
                announced.reverse()
                announced.remove(description)
                announced.reverse()
            found.append((indent, description, _status(result["ok"], directive), is_subtest))
            previous_result = True
    return found


def _tree(lines: list[str]) -> list[_Node]:
    """The results as a tree: a result's children are the deeper results just before it."""
    pending: dict[int, list[_Node]] = {}
    for indent, title, status, subtest in _results(lines):
        children = [node for depth in sorted(pending) if depth > indent for node in pending[depth]]
        for depth in [depth for depth in pending if depth > indent]:
            del pending[depth]
        pending.setdefault(indent, []).append(_Node(title, status, subtest, children))
    # a stream cut short (a crash, a timeout) leaves results without their parent
    return [node for depth in sorted(pending) for node in pending[depth]]


def _is_test(node: _Node, siblings: list[_Node]) -> bool:
    """A subtest, or a plain result among subtests (node-tap's skipped subtests are not
    announced), as opposed to an assertion inside a test."""
    return node.subtest or any(sibling.subtest for sibling in siblings)


def _tests(node: _Node, parents: list[str]) -> list[tuple[list[str], TestStatus]]:
    path = [*parents, node.title]
    nested = [child for child in node.children if _is_test(child, node.children)]
    if not nested:
        return [(path, node.status)]
    found = [test for child in nested for test in _tests(child, path)]
    if node.status is TestStatus.FAILED and all(status is not TestStatus.FAILED
                                                for _, status in found):
        found.append((path, TestStatus.FAILED))  # a hook or an assertion of the suite failed
    return found


def _title(line: str) -> bool:
    return bool(_TITLE.match(line)) and not _SUMMARY.match(line)


def tap_failures(output: str) -> list[tuple[str, str]]:
    """(description, the YAML and comments after it) of each failed result of a flat TAP
    stream (ava's), its own comments included: what the failure says."""
    found: list[tuple[str, list[str]]] = []
    for line in output.splitlines():
        result = _RESULT.match(line)
        if result and not result["indent"]:
            description, directive = _split(result["rest"])
            failed = _status(result["ok"], directive) is TestStatus.FAILED
            found.append((description if failed else "", []))
        elif found:
            found[-1][1].append(line)
    return [(name, "\n".join(lines)) for name, lines in found if name]


def _tape_style(lines: list[str]) -> bool:
    """Whether results are grouped under title comments (tape), as opposed to comments that
    only annotate the results before them (ava's logs)."""
    return any(_title(line) for line in lines)


def _tape(lines: list[str]) -> list[tuple[str, TestStatus]]:
    """tape's tests: each ``# name`` comment and the assertions printed after it."""
    tests: dict[str, TestStatus] = {}
    current: str | None = None
    yaml = False
    for line in lines:
        if yaml:
            yaml = line.strip() != "..."
            continue
        if line.strip() == "---" and current is not None:
            yaml = True
        elif _title(line):
            title = line[2:].strip()
            skipped = title.startswith("SKIP ")
            current = title[5:] if skipped else title
            tests[current] = TestStatus.SKIPPED if skipped else TestStatus.PASSED
        elif (result := _RESULT.match(line)) and current is not None:
            status = _status(result["ok"], _split(result["rest"])[1])
            if status is TestStatus.FAILED:
                tests[current] = TestStatus.FAILED
    return list(tests.items())
