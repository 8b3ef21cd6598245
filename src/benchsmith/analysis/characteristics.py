"""Per-instance characteristics, as the benchmark paper's Table 2 measures them.

Every value is computed from the instance record and, where a repository is available, its
git history at `base_commit`; a value that cannot be computed is None (n/a), never guessed.
:data:`DESCRIPTIONS` says how each one is computed (the report prints it).
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import subprocess
import tempfile
from datetime import datetime, timezone
from difflib import SequenceMatcher
from typing import Any

from benchsmith.core import BenchsmithError
from benchsmith.harness.checkout import git, instant
from benchsmith.harness.patches import file_diffs, is_test_path
from benchsmith.parsing.python_source import parse_source
from benchsmith.sandbox.tools import git_binary

Value = float | int | None

DESCRIPTIONS: dict[str, str] = {
    "codebase_files": "Python files at base_commit, excluding test files (harness test-path rule) "
                      "and vendored/third-party/docs/examples/build directories",
    "codebase_lines": "lines of those files",
    "issue_words": "whitespace-separated words of the problem statement",
    "issue_code_blocks": "fenced (``` or ~~~) code blocks in the problem statement",
    "issue_tracebacks": "Python tracebacks ('Traceback (most recent call last):') in the statement",
    "issue_error_messages": "lines of the statement that start with an exception name and a colon "
                            "(ValueError: ...)",
    "issue_fix_files_named": "files the fix modifies whose name (or path) the statement mentions",
    "issue_fix_lcs": "characters of the longest common substring of the statement and the lines "
                     "the fix adds",
    "issue_fix_shared_lines": "non-blank lines (stripped, at least 10 characters) that occur both "
                              "in the statement and among the lines the fix adds",
    "fail_to_pass": "FAIL_TO_PASS tests", "pass_to_pass": "PASS_TO_PASS tests",
    "fail_to_fail": "FAIL_TO_FAIL tests (benchsmith's own field; n/a when absent)",
    "pass_to_fail": "PASS_TO_FAIL tests (benchsmith's own field; n/a when absent)",
    "test_patch_files": "files the test patch changes",
    "test_patch_lines": "lines the test patch adds plus lines it removes",
    "tests_added": "test functions (def test*, also methods) in the patched test files that the base "
                   "files do not have, read with ast",
    "tests_removed": "test functions of the base test files that the patched files no longer have",
    "fix_files": "files the gold patch changes", "fix_lines": "lines the gold patch adds plus removes",
    "pr_year": "year of created_at (fractional)",
    "repo_age_years": "years from the repository's first commit to created_at",
}
CHARACTERISTICS = tuple(DESCRIPTIONS)
_VENDORED = {"vendor", "vendored", "_vendor", "third_party", "thirdparty", "extern", "externals",
             "docs", "doc", "examples", "example", "build", "dist", "benchmarks", "site-packages"}
_FENCE = re.compile(r"^\s*(```|~~~)", re.MULTILINE)
_ERROR_LINE = re.compile(r"^\s*([A-Z]\w*(Error|Exception|Warning)|[A-Z]\w*Exit)(:|$)", re.MULTILINE)
_TEST_DEF = re.compile(r"^test")


def labels(value: Any) -> list[str] | None:
    """A label list as published: a list, a JSON-encoded list, or None."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return [str(v) for v in value] if isinstance(value, list) else None


def _changed(patch: str) -> tuple[list[str], int, list[str]]:
    """Files, changed line count (added + removed) and added lines of a unified diff."""
    files, count, added = [], 0, []
    for path, text in file_diffs(patch):
        files.append(path)
        for line in text.splitlines():
            if line.startswith(("+++", "---")):
                continue
            if line.startswith(("+", "-")):
                count += 1
                if line.startswith("+"):
                    added.append(line[1:])
    return files, count, added


def text_characteristics(statement: str, patch: str) -> dict[str, Value]:
    """What the statement says, and how much of the fix it gives away."""
    fix_files, _, added = _changed(patch)
    added_text = "\n".join(added)
    lowered = statement.lower()
    named = sum(1 for path in fix_files
                if path.lower() in lowered or os.path.basename(path).lower() in lowered)
    statement_lines = {line.strip() for line in statement.splitlines() if len(line.strip()) >= 10}
    shared = {line.strip() for line in added if line.strip() in statement_lines}
    match = SequenceMatcher(None, statement, added_text, autojunk=False).find_longest_match(
        0, len(statement), 0, len(added_text)) if statement and added_text else None
    return {
        "issue_words": len(statement.split()),
        "issue_code_blocks": len(_FENCE.findall(statement)) // 2,
        "issue_tracebacks": statement.count("Traceback (most recent call last)"),
        "issue_error_messages": len(_ERROR_LINE.findall(statement)),
        "issue_fix_files_named": named,
        "issue_fix_lcs": match.size if match else 0,
        "issue_fix_shared_lines": len(shared),
    }


def _test_functions(source: str | None) -> set[str] | None:
    """Qualified names of test functions and methods in `source` (None: it does not parse)."""
    if source is None:
        return set()
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return None
    found: set[str] = set()

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and _TEST_DEF.match(child.name):
                found.add(prefix + child.name)
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
    visit(tree, "")
    return found


class Repository:
    """A local git repository (bare or not) read at one commit, for codebase and test facts."""

    def __init__(self, git_dir: str) -> None:
        self.git_dir = git_dir

    def show(self, commit: str, path: str) -> str | None:
        try:
            return git("show", f"{commit}:{path}", cwd=self.git_dir)
        except BenchsmithError:
            return None

    def codebase(self, commit: str) -> tuple[int, int]:
        """(files, lines) of the non-test, non-vendored Python files at `commit`."""
        listing = git("ls-tree", "-r", "-z", "--name-only", commit, cwd=self.git_dir)
        paths = [p for p in listing.split("\0") if p.endswith(".py") and not is_test_path(p)
                 and not any(part.lower() in _VENDORED for part in p.split("/")[:-1])]
        if not paths:
            return 0, 0
        request = "".join(f"{commit}:{p}\n" for p in paths).encode()
        out = subprocess.run([git_binary(), "cat-file", "--batch"], cwd=self.git_dir,
                             input=request, capture_output=True, check=False, timeout=600).stdout
        lines, index = 0, 0
        while index < len(out):
            header_end = out.index(b"\n", index)
            header = out[index:header_end].split()
            if len(header) < 3 or header[1] != b"blob":
                index = header_end + 1
                continue
            size = int(header[2])
            blob = out[header_end + 1: header_end + 1 + size]
            lines += blob.count(b"\n") + (1 if blob and not blob.endswith(b"\n") else 0)
            index = header_end + 1 + size + 1
        return len(paths), lines

    def first_commit_date(self, commit: str) -> datetime | None:
        try:
            stamps = git("log", "--max-parents=0", "--format=%cI", commit, cwd=self.git_dir).split()
        except BenchsmithError:
            return None
        return min((instant(s) for s in stamps), default=None)

    def patched(self, commit: str, patch: str, paths: list[str]) -> dict[str, str | None] | None:
        """The texts of `paths` after applying `patch` at `commit` (git apply on a scratch
        index, nothing checked out); None when the patch does not apply."""
        with tempfile.TemporaryDirectory() as scratch:
            env = {**os.environ, "GIT_INDEX_FILE": os.path.join(scratch, "index")}
            patch_file = os.path.join(scratch, "p.diff")
            with open(patch_file, "w", encoding="utf-8") as handle:
                handle.write(patch if patch.endswith("\n") else patch + "\n")
            steps = [["read-tree", commit], ["apply", "--cached", patch_file], ["write-tree"]]
            out = ""
            for step in steps:
                proc = subprocess.run([git_binary(), *step], cwd=self.git_dir, env=env,
                                      capture_output=True, text=True, check=False, timeout=300)
                if proc.returncode != 0:
                    return None
                out = proc.stdout.strip()
            return {path: self.show(out, path) for path in paths}


def test_patch_characteristics(test_patch: str, repo: Repository | None, commit: str) -> dict[str, Value]:
    """Size of the test patch, and (with the repository) the test functions it adds and removes."""
    files, count, _ = _changed(test_patch)
    result: dict[str, Value] = {"test_patch_files": len(files), "test_patch_lines": count,
                                "tests_added": None, "tests_removed": None}
    python = [f for f in files if f.endswith(".py")]
    if repo is None or not python:
        return result
    after = repo.patched(commit, test_patch, python)
    if after is None:
        return result
    added = removed = 0
    for path in python:
        old, new = _test_functions(repo.show(commit, path)), _test_functions(after.get(path))
        if old is None or new is None:
            return result
        added += len(new - old)
        removed += len(old - new)
    result.update(tests_added=added, tests_removed=removed)
    return result




def _years(moment: datetime) -> float:
    start = datetime(moment.year, 1, 1, tzinfo=timezone.utc)
    return moment.year + (moment - start).total_seconds() / (365.25 * 86400)


def characteristics(record: dict[str, Any], repo: Repository | None) -> dict[str, Value]:
    """Every characteristic of one instance record (published or benchsmith's)."""
    statement, patch = str(record.get("problem_statement") or ""), str(record.get("patch") or "")
    commit = str(record.get("base_commit") or "")
    values: dict[str, Value] = dict.fromkeys(CHARACTERISTICS)
    values.update(text_characteristics(statement, patch))
    for key, field in (("fail_to_pass", "FAIL_TO_PASS"), ("pass_to_pass", "PASS_TO_PASS"),
                       ("fail_to_fail", "FAIL_TO_FAIL"), ("pass_to_fail", "PASS_TO_FAIL")):
        found = labels(record.get(field))
        values[key] = None if found is None else len(found)
    fix_files, fix_lines, _ = _changed(patch)
    values.update(fix_files=len(fix_files), fix_lines=fix_lines)
    values.update(test_patch_characteristics(str(record.get("test_patch") or ""), repo, commit))
    created = None
    if record.get("created_at"):
        try:
            created = instant(str(record["created_at"]))
        except ValueError:
            created = None
    values["pr_year"] = round(_years(created), 3) if created else None
    if repo is not None and commit:
        with contextlib.suppress(BenchsmithError, ValueError, subprocess.SubprocessError):
            values["codebase_files"], values["codebase_lines"] = repo.codebase(commit)
        first = repo.first_commit_date(commit)
        if first and created:
            values["repo_age_years"] = round((created - first).total_seconds() / (365.25 * 86400), 3)
    return values
