"""Change coverage (SWT-bench ΔC): how much of the gold patch's executable changed code the
predicted tests execute beyond what the existing tests already execute.

Removed lines are measured on the original code, added lines on the fixed code. A line counts
as executed *more* when more tests execute it (coverage.py's per-test dynamic contexts), or when
a test the prediction added or edited executes it (an edited test replaces its old version, so
counting tests alone would never credit it); without contexts it falls back to plain line
coverage (executed vs not).
"""

from __future__ import annotations

import ast
import functools
import json
import re

from pydantic import BaseModel, Field

from benchsmith.evaluation.models import ChangeCoverage
from benchsmith.parsing.python_source import parse_source

Lines = dict[str, set[int]]
_PARAMS = re.compile(r"\[.*\]$")


def changed_lines(patch: str) -> tuple[Lines, Lines]:
    """(removed lines by old path, added lines by new path) of the patch's Python files."""
    from unidiff import PatchSet
    from unidiff.errors import UnidiffParseError

    removed: Lines = {}
    added: Lines = {}
    try:
        files = PatchSet(patch)
    except UnidiffParseError:
        return removed, added
    for patched in files:
        old = _strip(patched.source_file)
        new = _strip(patched.target_file)
        for hunk in patched:
            for line in hunk:
                if line.is_removed and old.endswith(".py") and line.source_line_no:
                    removed.setdefault(old, set()).add(line.source_line_no)
                elif line.is_added and new.endswith(".py") and line.target_line_no:
                    added.setdefault(new, set()).add(line.target_line_no)
    return removed, added


def _strip(path: str) -> str:
    return path[2:] if path.startswith(("a/", "b/")) else path


class FileCoverage(BaseModel):
    """One measured file: its statements and, per executed line, the tests that ran it."""

    statements: set[int] = Field(default_factory=set)
    contexts: dict[int, set[str]] = Field(default_factory=dict)  # "" = import time / unknown


class CoverageData(BaseModel):
    """A coverage.py JSON report reduced to what change coverage needs."""

    files: dict[str, FileCoverage] = Field(default_factory=dict)
    contexts: bool = False  # per-test counts (True) or executed/not (False)

    def tests(self, path: str, line: int) -> set[str]:
        """The contexts (tests) that executed `line` of `path` ({""} without contexts)."""
        measured = self.files.get(path)
        return measured.contexts.get(line, set()) if measured else set()


def parse_coverage_json(text: str) -> CoverageData:
    """Read ``coverage json --show-contexts`` output (paths relative to the checkout)."""
    return coverage_from_report(json.loads(text))


def coverage_from_report(raw: dict) -> CoverageData:
    """Reduce a coverage JSON report (or :mod:`~benchsmith.evaluation.covreport`'s part of
    one) to :class:`CoverageData`."""
    data = CoverageData()
    for path, entry in (raw.get("files") or {}).items():
        executed = [int(n) for n in entry.get("executed_lines", [])]
        missing = [int(n) for n in entry.get("missing_lines", [])]
        measured = FileCoverage(statements=set(executed) | set(missing))
        contexts = entry.get("contexts")
        if contexts:
            data.contexts = True
            measured.contexts = {int(n): set(names) for n, names in contexts.items()}
        else:
            measured.contexts = {n: {""} for n in executed}
        data.files[path.removeprefix("./")] = measured
    return data


@functools.lru_cache(maxsize=32)  # the same sources, for every prediction of an instance
def statement_lines(source: str) -> dict[int, int]:
    """Map each code line to the first line of the innermost statement containing it.

    coverage.py reports a multi-line statement by its first line only, so a change in the
    middle of a call or a literal is judged by the statement it belongs to. Blank and comment
    lines are not mapped (they are never executable).
    """
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return {}
    texts = source.splitlines()
    spans = sorted(((node.lineno, node.end_lineno or node.lineno) for node in ast.walk(tree)
                    if isinstance(node, ast.stmt)), key=lambda span: span[0] - span[1])
    mapping: dict[int, int] = {}
    for start, end in spans:  # widest first, so inner statements win
        for line in range(start, end + 1):
            text = texts[line - 1].strip() if line <= len(texts) else ""
            if text and not text.startswith("#"):
                mapping[line] = start
    return mapping


def _by_statement(lines: Lines, sources: dict[str, str] | None) -> dict[str, dict[int, int]]:
    """Each changed line with the line coverage.py knows its statement by."""
    result: dict[str, dict[int, int]] = {}
    for path, numbers in lines.items():
        source = (sources or {}).get(path)
        mapping = statement_lines(source) if source is not None else {}
        result[path] = {n: mapping.get(n, n) for n in numbers}
    return result


def _executable(lines: dict[str, dict[int, int]],
                baselines: list[CoverageData]) -> dict[str, dict[int, int]]:
    """Changed lines whose statement is one of a file some baseline run imported."""
    result: dict[str, dict[int, int]] = {}
    for path, numbers in lines.items():
        statements: set[int] = set()
        for data in baselines:
            if path in data.files:
                statements |= data.files[path].statements
        kept = {line: stmt for line, stmt in numbers.items() if stmt in statements}
        if kept:
            result[path] = kept
    return result


def change_coverage(patch: str, base_original: CoverageData, gold_original: CoverageData,
                    base_fixed: CoverageData, gold_fixed: CoverageData,
                    tests_original: CoverageData, tests_fixed: CoverageData,
                    predicted: set[str] | None = None,
                    sources: tuple[dict[str, str], dict[str, str]] | None = None) -> ChangeCoverage:
    """ΔC of the tests measured in `tests_*` for the gold `patch`.

    `base_*` are the existing tests, `gold_*` the existing tests with the gold test patch; these
    decide which changed lines are executable, so the denominator does not depend on the
    predicted tests. `predicted` are the :func:`key_of_test` of the tests the prediction added or
    edited. `sources` are the changed files' texts (original, fixed), to judge each changed line
    by its statement.
    """
    removed, added = changed_lines(patch)
    original, fixed = sources or ({}, {})
    executable_removed = _executable(_by_statement(removed, original), [base_original, gold_original])
    executable_added = _executable(_by_statement(added, fixed), [base_fixed, gold_fixed])
    result = ChangeCoverage(
        executable_removed=sum(map(len, executable_removed.values())),
        executable_added=sum(map(len, executable_added.values())),
        counting="tests" if all(d.contexts for d in (base_original, base_fixed, tests_original,
                                                     tests_fixed) if d.files) else "lines")
    wanted = predicted or set()

    def more(tests: CoverageData, base: CoverageData, path: str, line: int) -> bool:
        ran = tests.tests(path, line)
        return len(ran) > len(base.tests(path, line)) or any(
            context_matches(c, t) for c in ran for t in wanted)

    result.covered_removed = sum(more(tests_original, base_original, p, n)
                                 for p, numbers in executable_removed.items()
                                 for n in numbers.values())
    result.covered_added = sum(more(tests_fixed, base_fixed, p, n)
                               for p, numbers in executable_added.items() for n in numbers.values())
    total = result.executable_removed + result.executable_added
    if total:
        result.value = round((result.covered_removed + result.covered_added) / total, 4)
    return result


def key_of_test(name: str) -> str:
    """A test's dotted name without parameters: ``pkg/test_x.py::A::test_b[1]`` and unittest's
    ``pkg.test_x.A.test_b`` both become ``pkg.test_x.A.test_b``."""
    name = _PARAMS.sub("", name)
    if "::" not in name:
        return name
    path, _, qualified = name.partition("::")
    return path.removesuffix(".py").replace("/", ".") + "." + qualified.replace("::", ".")


def context_matches(context: str, key: str) -> bool:
    """Whether coverage's ``test_function`` context (``module.Class.test``) is the test `key`
    (the module name depends on pytest's rootdir handling, so only its tail has to agree)."""
    return bool(context) and (key == context or key.endswith("." + context))
