"""Real JavaScript projects written by the tests, installed from the npm registry with the
machine's node and npm, run with the rendered command and read per test."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from benchsmith.core import TestStatus
from benchsmith.harness.node_render import REPORT_ENV, render_build_commands, render_test_command
from benchsmith.parsing.node_reports import parse_node_report
from benchsmith.setup.node.runners import detect_test_runner

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="needs node and npm")

QUOTED = 'title with "quotes", <angles> & a > arrow'
# the statuses every runner's fixture below must give, by the title path inside the file
EXPECTED = {
    "math > add > adds two numbers": TestStatus.PASSED,
    "math > add > is wrong on purpose": TestStatus.FAILED,
    "math > add > is skipped": TestStatus.SKIPPED,
    f"math > {QUOTED}": TestStatus.PASSED,
    "top level": TestStatus.PASSED,
}

BDD = """{imports}
const add = (a, b) => a + b;
describe('math', () => {{
  describe('add', () => {{
    it('adds two numbers', () => {{ {check}(add(1, 2), 3); }});
    it('is wrong on purpose', () => {{ {check}(add(1, 2), 4); }});
    it.skip('is skipped', () => {{}});
  }});
  it('title with "quotes", <angles> & a > arrow', () => {{ console.log('ok 1 - printed noise'); }});
}});
it('top level', () => {{}});
"""
EXPECT = "(a, b) => expect(a).toBe(b)"


def _project(root: Path, package: dict[str, object], files: dict[str, str]) -> Path:
    root.mkdir()
    (root / "package.json").write_text(json.dumps(package, indent=2))
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm",
                    "fixture"], cwd=root, check=True)
    if package.get("devDependencies"):
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"],
                       cwd=root, check=True, capture_output=True, timeout=600)
    return root


def _run(root: Path, test_files: tuple[str, ...] = ()) -> dict[str, TestStatus]:
    tracked = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True,
                             check=True).stdout.split()
    package = json.loads((root / "package.json").read_text())
    spec = detect_test_runner(package, tracked, lambda p: _read(root / p))
    assert spec is not None
    for build in render_build_commands(spec.build_steps):
        subprocess.run(build, shell=True, cwd=root, check=True, capture_output=True, timeout=300)
    rendered = render_test_command(spec, test_files)
    report_path = root.parent / "reports" / "report"
    run = subprocess.run(rendered.command, shell=True, cwd=root, capture_output=True, text=True,
                         timeout=300, env={**os.environ, REPORT_ENV: str(report_path)})
    assert run.returncode != 0  # a test fails
    report = report_path.read_text() if rendered.report_file else run.stdout
    results = parse_node_report(rendered.report_format, report, root=str(root))
    return {result.name: result.status for result in results}


def _read(path: Path) -> str | None:
    return path.read_text() if path.is_file() else None


def _expected(file: str) -> dict[str, TestStatus]:
    return {f"{file}::{titles}": status for titles, status in EXPECTED.items()}


@pytest.mark.slow
def test_jest_project_runs_per_test_and_focuses_on_a_file(tmp_path: Path) -> None:
    body = BDD.format(imports="", check=f"({EXPECT})")
    root = _project(tmp_path / "jestproj", {
        "name": "jestproj", "version": "1.0.0", "scripts": {"test": "jest --coverage"},
        "devDependencies": {"jest": "29.7.0"}},
        {"test/math.test.js": body, "test/other.test.js": "test('other', () => {});\n"})
    assert _run(root) == {**_expected("test/math.test.js"), "test/other.test.js::other": TestStatus.PASSED}
    assert _run(root, ("test/math.test.js",)) == _expected("test/math.test.js")


@pytest.mark.slow
def test_vitest_project_runs_per_test(tmp_path: Path) -> None:
    body = BDD.format(imports="import { describe, it, expect } from 'vitest';", check=f"({EXPECT})")
    root = _project(tmp_path / "vitestproj", {
        "name": "vitestproj", "version": "1.0.0", "type": "module",
        "scripts": {"test": "npm run test:unit", "test:unit": "vitest"},
        "devDependencies": {"vitest": "1.6.0"}}, {"test/math.test.js": body})
    assert _run(root) == _expected("test/math.test.js")


@pytest.mark.slow
def test_mocha_project_runs_per_test_with_its_describe_titles(tmp_path: Path) -> None:
    body = BDD.format(imports="const assert = require('assert');", check="assert.strictEqual")
    root = _project(tmp_path / "mochaproj", {
        "name": "mochaproj", "version": "1.0.0",
        "scripts": {"test": "cross-env NODE_ENV=test mocha --reporter dot 'test/**/*.test.js'"},
        "devDependencies": {"mocha": "10.7.3"}}, {"test/math.test.js": body})
    assert _run(root) == _expected("test/math.test.js")


@pytest.mark.slow
def test_node_test_runner_project_runs_per_file(tmp_path: Path) -> None:
    body = BDD.format(imports="const { describe, it } = require('node:test');\n"
                              "const assert = require('node:assert');", check="assert.strictEqual")
    root = _project(tmp_path / "nodeproj", {
        "name": "nodeproj", "version": "1.0.0", "scripts": {"test": "node --test"}},
        {"test/math.test.js": body, "lib/index.js": "module.exports = 1;\n",
         "other.test.mjs": "import { test } from 'node:test';\ntest('other', () => {});\n"})
    assert _run(root) == {**_expected("test/math.test.js"), "other.test.mjs::other": TestStatus.PASSED}


@pytest.mark.slow
def test_tape_project_runs_per_file(tmp_path: Path) -> None:
    tests = ("const test = require('tape');\n"
             "test('adds', (t) => { t.equal(1 + 2, 3); t.end(); });\n"
             "test('is wrong on purpose', (t) => { t.equal(1 + 2, 4, 'four'); t.end(); });\n"
             "test('title with \"quotes\" # hash', (t) => { t.ok(true); t.end(); });\n")
    root = _project(tmp_path / "tapeproj", {
        "name": "tapeproj", "version": "1.0.0", "scripts": {"test": "tape 'test/*.js' | tap-dot"},
        "devDependencies": {"tape": "5.9.0"}},
        {"test/math.js": tests, "test/more.js": "require('tape')('more', (t) => t.end());\n"})
    assert _run(root) == {
        "test/math.js::adds": TestStatus.PASSED,
        "test/math.js::is wrong on purpose": TestStatus.FAILED,
        'test/math.js::title with "quotes" # hash': TestStatus.PASSED,
        "test/more.js::more": TestStatus.PASSED,
    }


@pytest.mark.slow
def test_typescript_project_is_compiled_before_its_tests(tmp_path: Path) -> None:
    source = ("import { test } from 'node:test';\nimport { strictEqual } from 'node:assert';\n"
              "const add = (a: number, b: number): number => a + b;\n"
              "test('adds', () => { strictEqual(add(1, 2), 3); });\n"
              "test('is wrong on purpose', () => { strictEqual(add(1, 2), 4); });\n")
    tsconfig = ('{\n  // comments are allowed here\n  "compilerOptions": {"outDir": "./dist", '
                '"module": "commonjs", "target": "es2020"},\n  "include": ["test"],\n}\n')
    root = _project(tmp_path / "tsproj", {
        "name": "tsproj", "version": "1.0.0", "scripts": {"test": "node --test dist/"},
        "devDependencies": {"typescript": "5.4.5", "@types/node": "20.14.2"}},
        {"test/math.test.ts": source, "tsconfig.json": tsconfig, ".gitignore": "dist/\n"})
    assert not (root / "dist").exists()
    assert _run(root) == {"dist/math.test.js::adds": TestStatus.PASSED,
                          "dist/math.test.js::is wrong on purpose": TestStatus.FAILED}


@pytest.mark.slow
def test_script_running_mocha_programmatically_reports_per_test(tmp_path: Path) -> None:
    body = BDD.format(imports="const assert = require('assert');", check="assert.strictEqual")
    runner = ("const Mocha = require('mocha');\nconst mocha = new Mocha();\n"
              "mocha.addFile(require('path').join(__dirname, '..', 'spec', 'math.js'));\n"
              "mocha.run((failures) => { process.exitCode = failures ? 1 : 0; });\n")
    root = _project(tmp_path / "taskproj", {
        "name": "taskproj", "version": "1.0.0",
        "scripts": {"test": "eslint . && npm run --silent test:all", "test:all": "node tasks/run.js"},
        "devDependencies": {"mocha": "10.7.3"}}, {"spec/math.js": body, "tasks/run.js": runner})
    assert _run(root) == _expected("spec/math.js")


@pytest.mark.slow
def test_uvu_project_runs_per_test(tmp_path: Path) -> None:
    esm = ("import { test, suite } from 'uvu';\nimport * as assert from 'uvu/assert';\n"
           "test('adds', () => { assert.is(1 + 2, 3); });\n"
           "test('is wrong on purpose', () => { assert.is(1 + 2, 4); });\n"
           "test.skip('is skipped', () => {});\ntest.run();\n"
           "const math = suite('math');\nmath('awaits', async () => { await 1; });\nmath.run();\n")
    cjs = ("const { test } = require('uvu');\n"
           "test('required', () => {});\ntest.run();\n")
    root = _project(tmp_path / "uvuproj", {
        "name": "uvuproj", "version": "1.0.0", "type": "module",
        "scripts": {"test": "c8 pnpm unit && eslint .", "unit": "uvu . .test.[cm]?js$"},
        "devDependencies": {"uvu": "0.5.6"}}, {"test/math.test.js": esm, "test/old.test.cjs": cjs,
                                                "test/helper.js": "export default 1;\n"})
    assert _run(root) == {
        "test/math.test.js::adds": TestStatus.PASSED,
        "test/math.test.js::is wrong on purpose": TestStatus.FAILED,
        "test/math.test.js::is skipped": TestStatus.SKIPPED,
        "test/math.test.js::math > awaits": TestStatus.PASSED,
        "test/old.test.cjs::required": TestStatus.PASSED,
    }
