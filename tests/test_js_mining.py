"""Mining JavaScript and TypeScript repositories: their test-file conventions split a PR's diff,
their sources count as code, and the language is recorded (real git repositories)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from benchsmith.harness.checkout import resolve
from benchsmith.harness.languages import instance_language, language_of
from benchsmith.harness.patches import is_test_path, runnable_test_files, split_patch, task_patches
from tests.conftest import RepoBuilder
from tests.test_cli_batch import run_cli
from tests.test_git_miner import branch, merge

PACKAGE = json.dumps({"name": "csv-lite", "version": "1.0.0", "scripts": {"test": "jest"},
                      "devDependencies": {"jest": "29.7.0"}}, indent=2) + "\n"
PARSE_V1 = "function parse(text) {\n  return text.split(',');\n}\nmodule.exports = { parse };\n"
PARSE_V2 = ("function parse(text) {\n  return text ? text.split(',') : [];\n}\n"
            "module.exports = { parse };\n")
TEST_V1 = ("const { parse } = require('../src/parse');\n\ndescribe('parse', () => {\n"
           "  test('splits on commas', () => {\n    expect(parse('a,b')).toEqual(['a', 'b']);\n"
           "  });\n});\n")
TEST_V2 = TEST_V1.replace("});\n});\n", "});\n  test('handles empty input', () => {\n"
                          "    expect(parse('')).toEqual([]);\n  });\n});\n")


@pytest.mark.parametrize(("path", "expected"), [
    ("src/parse.test.js", True), ("lib/a.spec.ts", True), ("src/App.test.tsx", True),
    ("src/util.spec.mjs", True), ("src/x.test.cjs", True), ("src/Button.spec.jsx", True),
    ("src/__tests__/parse.js", True), ("test/parse.js", True), ("tests/unit/a.ts", True),
    ("spec/parse_spec.js", True), ("lib/parse-test.js", True), ("lib/test-parse.js", True),
    ("test/fixtures/input.json", True), ("packages/a/__mocks__/fs.js", True),
    ("src/parse.js", False), ("src/testing.js", False), ("src/contest.ts", False),
    ("index.d.ts", False), ("README.md", False), ("src/latest/a.js", False),
])
def test_node_test_paths(path: str, expected: bool) -> None:
    assert is_test_path(path, "javascript") is expected
    assert is_test_path(path, "typescript") is expected


def test_python_rules_are_unchanged_for_python_repositories() -> None:
    assert is_test_path("tests/test_a.py") and is_test_path("src/pkg/conftest.py")
    assert not is_test_path("spec/openapi.py") and not is_test_path("src/a.test.js")
    assert is_test_path("spec/openapi.py", "javascript")  # a spec/ directory is Node's


def test_runnable_test_files_leave_fixtures_mocks_and_helpers_out() -> None:
    diff = "".join(f"diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -0,0 +1 @@\n+x\n" for p in (
        "test/parse.test.js", "test/fixtures/case.js", "__tests__/helpers/render.js",
        "src/__tests__/a.ts", "test/types.d.ts", "test/snap.txt", "src/utils/x.spec.ts"))
    assert runnable_test_files(diff, "javascript") == [
        "test/parse.test.js", "src/__tests__/a.ts", "src/utils/x.spec.ts"]
    assert runnable_test_files(diff) == []  # by Python's rules no module runs


def test_a_node_diff_needs_a_source_change() -> None:
    def section(path: str) -> str:
        return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"

    docs = section("README.md") + section("test/parse.test.js")
    assert task_patches(docs, "javascript") == (
        "the code changes touch no source file (only documentation, data or configuration)")
    code = section("src/parse.ts") + section("test/data/in.csv") + section("test/parse.test.ts")
    patch, test_patch = task_patches(code, "typescript")  # type: ignore[misc]
    assert patch == section("src/parse.ts")
    assert split_patch(code, "typescript")[1] == section("test/data/in.csv") + section(
        "test/parse.test.ts")
    # by Python's rules the same diff has no test module
    assert task_patches(code) == ("the test changes touch no test module (only test data, "
                                  "fixtures or helpers)")


@pytest.mark.parametrize(("paths", "expected"), [
    (["package.json", "src/a.js", "test/a.test.js"], "javascript"),
    (["package.json", "tsconfig.json", "src/a.ts", "src/b.js"], "typescript"),
    (["package.json", "src/a.ts", "src/b.ts", "src/c.js"], "typescript"),
    (["package.json", "index.js", "index.d.ts", "types/x.d.ts"], "javascript"),
    (["setup.py", "pkg/a.py", "pkg/static/app.js", "pkg/static/b.js"], "python"),
    (["package.json", "pyproject.toml", "a.py", "b.js", "c.js"], "javascript"),
    (["package.json", "node_modules/x/index.ts", "node_modules/y/index.ts", "a.js"], "javascript"),
    (["README.md"], "python"),
])
def test_language_of_a_tree(paths: list[str], expected: str) -> None:
    assert language_of(paths) == expected


def js_project(make_repo: Callable[..., RepoBuilder]) -> RepoBuilder:
    """csv-lite: jest tests under test/, a fix PR merged by a merge commit, a PR with only a
    README change beside its test, and a squashed TypeScript port."""
    repo = make_repo("csv-lite", {"package.json": PACKAGE, "src/parse.js": PARSE_V1,
                                  "test/parse.test.js": TEST_V1, "README.md": "csv-lite\n"},
                     date="2023-01-01T10:00:00+00:00")
    branch(repo, "empty-input")
    repo.commit({"src/parse.js": PARSE_V2}, "Handle empty input", date="2023-02-01T09:00:00+00:00")
    repo.commit({"test/parse.test.js": TEST_V2, "test/fixtures/empty.csv": ""},
                "Test empty input\n\nFixes #4", date="2023-02-02T09:00:00+00:00")
    merge(repo, "empty-input", "Merge pull request #5 from alice/empty-input\n\nHandle empty input",
          "2023-02-03T09:00:00+00:00")
    branch(repo, "docs")
    repo.commit({"README.md": "csv-lite: split CSV lines\n",
                 "test/parse.test.js": TEST_V2.replace("handles", "copes with")},
                "Document parse\n\nCloses #6", date="2023-02-10T09:00:00+00:00")
    merge(repo, "docs", "Merge pull request #7 from bob/docs\n\nDocs", "2023-02-11T09:00:00+00:00")
    return repo


def test_mine_from_git_splits_a_javascript_project(make_repo: Callable[..., RepoBuilder],
                                                  tmp_path: Path) -> None:
    repo = js_project(make_repo)
    repos = tmp_path / "repos.txt"
    repos.write_text(f"{repo.path} acme/csv-lite\n")
    out = tmp_path / "prs.jsonl"
    result = run_cli("mine", str(repos), "--from-git", "--out", str(out))
    assert result.returncode == 0, result.stderr
    [pr] = [json.loads(line) for line in out.read_text().splitlines()]
    assert (pr["number"], pr["language"]) == (5, "javascript")
    assert "diff --git a/src/parse.js" in pr["patch"] and "test/" not in pr["patch"]
    assert "diff --git a/test/parse.test.js" in pr["test_patch"]
    assert "diff --git a/test/fixtures/empty.csv" in pr["test_patch"]
    [log] = map(json.loads, (tmp_path / "prs.jsonl.repos.jsonl").read_text().splitlines())
    assert any("touch no source file" in reason for reason in log["skipped"]), log


def test_mine_from_git_finds_typescript_and_its_spec_files(make_repo: Callable[..., RepoBuilder],
                                                           tmp_path: Path) -> None:
    repo = make_repo("ts-lite", {"package.json": PACKAGE, "tsconfig.json": "{}\n",
                                 "src/parse.ts": "export const parse = (t: string) => t.split(',');\n",
                                 "src/__tests__/parse.spec.ts": "it('splits', () => {});\n"},
                     date="2023-03-01T10:00:00+00:00")
    repo.commit({"src/parse.ts": "export const parse = (t: string) => (t ? t.split(',') : []);\n",
                 "src/__tests__/parse.spec.ts": "it('splits', () => {});\nit('empty', () => {});\n"},
                "Handle empty input (#12)\n\nFixes #11", date="2023-03-02T10:00:00+00:00")
    repos = tmp_path / "repos.txt"
    repos.write_text(f"{repo.path} acme/ts-lite\n")
    out = tmp_path / "prs.jsonl"
    result = run_cli("mine", str(repos), "--from-git", "--out", str(out))
    assert result.returncode == 0, result.stderr
    [pr] = [json.loads(line) for line in out.read_text().splitlines()]
    assert (pr["number"], pr["language"]) == (12, "typescript")
    assert "src/__tests__/parse.spec.ts" in pr["test_patch"] and "spec" not in pr["patch"]
    checkout = resolve(str(repo.path), rev=pr["base_commit"], repo="acme/ts-lite")
    assert instance_language("node", checkout) == "typescript"  # what build records
    assert instance_language("python", checkout) == "python"
