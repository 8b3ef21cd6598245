"""Change coverage arithmetic on hand-written coverage.py reports."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import benchsmith.evaluation
from benchsmith.evaluation.changecov import (
    CoverageData,
    change_coverage,
    changed_lines,
    context_matches,
    coverage_from_report,
    key_of_test,
    parse_coverage_json,
)

PATCH = "".join(line + "\n" for line in [
    "diff --git a/pkg/core.py b/pkg/core.py",
    "--- a/pkg/core.py",
    "+++ b/pkg/core.py",
    "@@ -1,5 +1,6 @@",
    " def f(x):",
    "-    return x",
    "+    # doubled now",
    "+    return 2 * x",
    " ",
    " ",
    " def g():",
    "diff --git a/docs/notes.md b/docs/notes.md",
    "--- a/docs/notes.md",
    "+++ b/docs/notes.md",
    "@@ -1 +1 @@",
    "-old",
    "+new",
])


def report(lines: dict[int, list[str]], missing: list[int] = ()) -> str:
    """A coverage.py JSON report of pkg/core.py: executed lines with their contexts."""
    return json.dumps({"files": {"pkg/core.py": {
        "executed_lines": sorted(lines), "missing_lines": list(missing),
        "contexts": {str(n): names for n, names in lines.items()}}}})


def test_changed_lines_keep_python_files_only() -> None:
    removed, added = changed_lines(PATCH)
    assert removed == {"pkg/core.py": {2}}
    assert added == {"pkg/core.py": {2, 3}}


def test_lines_run_by_more_tests_or_by_predicted_tests_count() -> None:
    base_original = parse_coverage_json(report({1: [""], 2: ["tests.test_core.test_f"]}))
    base_fixed = parse_coverage_json(report({1: [""], 3: ["tests.test_core.test_f"]}))
    # Line 2 of the fixed file is a comment: coverage never lists it, so it is not executable.
    more = parse_coverage_json(report({1: [""], 3: ["tests.test_core.test_f", "test_core.test_new"]}))
    coverage = change_coverage(PATCH, base_original, base_original, base_fixed, base_fixed,
                               base_original, more)
    assert (coverage.executable_removed, coverage.executable_added) == (1, 1)
    assert (coverage.covered_removed, coverage.covered_added, coverage.value) == (0, 1, 0.5)
    # An edited test replaces its old version: same number of tests, but it is the prediction's.
    edited = change_coverage(PATCH, base_original, base_original, base_fixed, base_fixed,
                             base_original, base_original, {"tests.test_core.test_f"})
    assert edited.covered_removed == 1 and edited.value == 0.5
    assert edited.counting == "tests"


def test_no_executable_changed_line_gives_no_value() -> None:
    nothing = parse_coverage_json(json.dumps({"files": {}}))
    coverage = change_coverage(PATCH, nothing, nothing, nothing, nothing, nothing, nothing)
    assert coverage.value is None and coverage.executable_removed == coverage.executable_added == 0


def test_keys_of_tests_and_contexts() -> None:
    assert key_of_test("tests/test_x.py::TestA::test_b[1-2]") == "tests.test_x.TestA.test_b"
    assert key_of_test("pkg.tests.test_x.TestA.test_b") == "pkg.tests.test_x.TestA.test_b"
    assert context_matches("test_x.TestA.test_b", "tests.test_x.TestA.test_b")
    assert context_matches("tests.test_x.TestA.test_b", "tests.test_x.TestA.test_b")
    assert not context_matches("test_x.TestA.test_bb", "tests.test_x.TestA.test_b")
    assert not context_matches("", "tests.test_x.TestA.test_b")


def test_a_change_inside_a_multi_line_statement_counts_by_its_statement() -> None:
    from benchsmith.evaluation.changecov import statement_lines

    source = "SETTINGS = dict(\n    a=1,\n    # a note\n    b=2,\n)\n\n\ndef f():\n    return SETTINGS\n"
    assert statement_lines(source) == {1: 1, 2: 1, 4: 1, 5: 1, 8: 8, 9: 9}
    patch = "".join(line + "\n" for line in [
        "diff --git a/pkg/core.py b/pkg/core.py", "--- a/pkg/core.py", "+++ b/pkg/core.py",
        "@@ -1,5 +1,5 @@", " SETTINGS = dict(", "-    a=1,", "+    a=10,", "     # a note",
        "     b=2,", " )"])
    # coverage.py knows the assignment by its first line only
    base = parse_coverage_json(report({1: [""], 8: [""], 9: ["t.test_old"]}))
    tests = parse_coverage_json(report({1: ["", "t.test_new"], 8: [""], 9: ["t.test_old"]}))
    judged = change_coverage(patch, base, base, base, base, tests, tests, None,
                             ({"pkg/core.py": source}, {"pkg/core.py": source.replace("a=1", "a=10")}))
    assert (judged.executable_removed, judged.executable_added) == (1, 1)
    assert judged.value == 1.0
    unjudged = change_coverage(patch, base, base, base, base, tests, tests)
    assert unjudged.value is None  # line 2 alone is no statement


@pytest.mark.slow
@pytest.mark.parametrize("version", ["coverage==5.5", "coverage==7.6.1"])
def test_the_sandbox_report_script_reads_what_coverage_json_reports(tmp_path: Path, version: str) -> None:
    """covreport.py gives change coverage the same data as ``coverage json --show-contexts``
    (which coverage 7 bloats with a copy of the context table per function and class)."""
    from benchsmith.evaluation.covrun import REPORT_SCRIPT
    from benchsmith.sandbox.tools import uv_binary

    venv = tmp_path / "venv"
    subprocess.run([uv_binary(), "venv", "-q", "-p", "3.11", str(venv)], check=True)
    subprocess.run([uv_binary(), "pip", "install", "-q", "--python", str(venv / "bin" / "python"),
                    version, "pytest<8.4"], check=True)
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("")
    functions = "".join(f"def f{i}(x):\n    if x:\n        return (x +\n                {i})\n    return 0\n\n\n"
                        for i in range(30))
    (repo / "pkg" / "core.py").write_text(functions + "class C:\n    def m(self):\n        return f1(1)\n")
    (repo / "test_core.py").write_text("from pkg.core import *\n\n" + "".join(
        f"def test_{i}():\n    assert f{i}({i % 2}) == {i if i % 2 else 0} + {i % 2}\n\n" for i in range(20))
        + "def test_m():\n    assert C().m() == 2\n")
    cov = tmp_path / "benchsmith-cov"
    cov.mkdir()
    (cov / "run.rc").write_text("[run]\ndata_file = ../benchsmith-cov/run.data\nrelative_files = True\n"
                                "dynamic_context = test_function\ninclude =\n    pkg/core.py\n")
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "coverage", "run", "--rcfile=../benchsmith-cov/run.rc", "-m",
                    "pytest", "-q", "-p", "no:cacheprovider", "test_core.py"], cwd=repo, check=True)
    subprocess.run([python, "-m", "coverage", "json", "--rcfile=../benchsmith-cov/run.rc",
                    "-o", "../full.json", "--show-contexts"], cwd=repo, check=True)
    script = Path(benchsmith.evaluation.__file__).with_name("covreport.py")
    shutil.copy(script, repo / REPORT_SCRIPT)
    subprocess.run([python, REPORT_SCRIPT, "../ours.json", "../benchsmith-cov/run.rc"], cwd=repo, check=True)
    ours = json.loads((tmp_path / "ours.json").read_text())["run"]
    expected = parse_coverage_json((tmp_path / "full.json").read_text())
    assert coverage_from_report(ours) == expected
    # f1's `return (x +` (line 10) runs in the tests that call f1 with a true x
    assert expected.contexts and expected.tests("pkg/core.py", 10) == {"test_core.test_1",
                                                                        "test_core.test_m"}
    assert (tmp_path / "ours.json").stat().st_size < (tmp_path / "full.json").stat().st_size
    # a run that measured nothing reads as no data
    (cov / "none.rc").write_text("[run]\ndata_file = ../benchsmith-cov/none.data\n")
    subprocess.run([python, REPORT_SCRIPT, "../none.json", "../benchsmith-cov/none.rc"], cwd=repo, check=True)
    assert coverage_from_report(json.loads((tmp_path / "none.json").read_text())["none"]) == CoverageData()
