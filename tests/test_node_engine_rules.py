"""The Node setup engine's rules on self-written projects: the failure reason names the error,
other Node lines only when the Node release is at fault (with the npm each release shipped),
history lockfiles bounded in age and installed by the manager that wrote them, and old Node
trusting the CA bundle through npm's own setting."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchsmith.core import Diagnosis, ExecResult, NodePlan, NodeTestRun, Plan
from benchsmith.harness.node_fetch import NodeInstall, provide_node
from benchsmith.harness.npm_registry import fetch_package
from benchsmith.setup.node.context import NodeContext, read_node_context
from benchsmith.setup.node.dating import choose_dating, dated_install_command, manager_context
from benchsmith.setup.node.managers import ManagerChoice, bundled_npm, choose_manager, exact_manager
from benchsmith.setup.node.repair import NodeRepairer
from benchsmith.testing.fake_npm_registry import FakeNpmRegistry, FakePackage

from .conftest import RepoBuilder

NODE = shutil.which("node") or "node"
NPM = shutil.which("npm") or "npm"
FAILING_TEST = """const { test } = require('node:test');
const assert = require('node:assert');
test('adds', () => { assert.strictEqual(1 + 1, 2); });
test('subtracts', () => { assert.strictEqual(3 - 1, 1); });
"""


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> ExecResult:
    done = subprocess.run(command, cwd=cwd, env={**os.environ, **(env or {})}, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    return ExecResult(command=" ".join(command), returncode=done.returncode, output=done.stdout)


def _write(root: Path, files: dict[str, Any]) -> Path:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content if isinstance(content, str) else json.dumps(content))
    return root


def _setup(source: Path, out: Path, *extra: str) -> dict[str, Any]:
    run = subprocess.run([sys.executable, "-m", "benchsmith.cli", "setup", str(source), "--out",
                          str(out), "--no-refdb", *extra], capture_output=True, text=True,
                         timeout=1800)
    assert out.is_file(), run.stdout + run.stderr
    record: dict[str, Any] = json.loads(out.read_text())
    return record


# -- the failure reason ---------------------------------------------------------------------

def test_the_failure_reason_names_the_error_not_where_the_log_went(tmp_path: Path) -> None:
    root = _write(tmp_path / "p", {
        "package.json": {"name": "p", "version": "1.0.0", "dependencies": {"dep": "file:./dep"}},
        "dep/package.json": {"name": "dep", "version": "1.0.0",
                             "scripts": {"install": "node -e \"process.exit(7)\""}}})
    npm = NodeRepairer().diagnose(_plan(), _run([NPM, "install", "--no-audit", "--no-fund"], root),
                                  "install", None)
    assert npm.kind == "install_failed"
    assert "complete log" not in npm.reason and "/_logs/" not in npm.reason
    assert npm.reason.startswith("install failed: npm error 7:") and "process.exit(7)" in npm.reason
    yarn = fetch_package("yarn", "1.22.22", tmp_path / "pkgs")
    missing = _write(tmp_path / "y", {"package.json": {
        "name": "y", "version": "1.0.0", "dependencies": {"no-such-package-benchsmith-x1": "1.0.0"}}})
    result = _run([NODE, str(yarn / "bin" / "yarn.js"), "install", "--non-interactive"], missing)
    diagnosis = NodeRepairer().diagnose(_plan(), result, "install", None)
    assert "yarnpkg.com/en/docs/cli" not in diagnosis.reason
    assert diagnosis.reason.startswith("install failed: yarn error ")
    assert "no-such-package-benchsmith-x1" in diagnosis.reason
    tests = _write(tmp_path / "t", {"test.js": FAILING_TEST})
    failing = NodeRepairer().diagnose(_plan(), _run([NODE, "--test", "--test-reporter=tap",
                                                     "test.js"], tests), "test", None)
    assert failing.kind == "tests_failing" and failing.reason.endswith("# fail 1")


# -- which npm a Node release shipped with ---------------------------------------------------

def test_the_npm_of_a_node_release_not_of_its_line() -> None:
    assert bundled_npm("14.17.0") == "6.14.13"
    assert bundled_npm("16.13.0") == "8.1.0" and bundled_npm("16.20.2") == "8.19.4"
    assert bundled_npm("18.12.1") == "8.19.2"  # npm 9 came with 18.14, npm 10 with 18.19
    assert bundled_npm("6.17.1") == "3.10.10" and bundled_npm("8.11.4") == "5.6.0"
    assert bundled_npm("18") == "10.5.0"  # a line alone: its last release's
    assert choose_manager(NodeContext(), "18.16.0").version == "9.5.1"
    # npm 1 (Node 0.10's) has no cafile setting, so it cannot trust a CA bundle: npm 2's last
    old = choose_manager(NodeContext(), "0.10.0")
    assert bundled_npm("0.10.0") == "1.2" and old.version == "2.15.12", old
    assert "no cafile" in old.reasons[0]
    assert choose_manager(NodeContext(), "0.12.0").version == "2.5.1"


# -- other Node lines only when the Node release is at fault ---------------------------------

def _plan(**node: Any) -> Plan:
    fields: dict[str, Any] = {"version": "20.20.0", "line": "20",
                              "tests": NodeTestRun(runner="node", command=["node", "--test"],
                                                   report_format="tap-files")}
    fields.update(node)
    return Plan(ecosystem="node", runner="node", python="3.11",
                exclude_newer="2023-06-01T00:00:00Z", node=NodePlan.model_validate(fields))


@pytest.mark.slow
def test_syntax_newer_than_the_node_moves_to_the_newest_fallback_with_its_npm(
        tmp_path: Path, shared_node: None) -> None:
    root = _write(tmp_path / "p", {
        "package.json": {"name": "p", "version": "1.0.0", "scripts": {"test": "node test.js"}},
        "test.js": "let options = {};\noptions.retries ??= 3;\nif (options.retries !== 3) "
                   "process.exit(1);\n"})
    old: NodeInstall = provide_node("12.22.12")
    diagnosis = NodeRepairer().diagnose(_plan(), _run([old.node, "test.js"], root), "test",
                                        read_node_context(root))
    assert diagnosis.kind == "node_version" and diagnosis.facts == {"direction": ["newer"]}
    plan = _plan(version="12.22.12", line="12", fallbacks=["16.20.0", "14.21.3", "10.24.1"],
                 manager_version="6.14.16", manager_source="Node 12.22.12's npm")
    repaired = NodeRepairer().repair(plan, diagnosis, read_node_context(root))
    assert repaired is not None and repaired[0].node is not None
    node = repaired[0].node
    assert (node.version, node.manager, node.manager_version) == ("16.20.0", "npm", "8.19.4")
    assert node.manager_source == "Node 16.20.0's npm"
    assert _run([provide_node("16.20.0").node, "test.js"], root).ok
    # a lockfile's npm stays: only an npm chosen for its Node follows the Node
    pinned = NodeRepairer().repair(_plan(version="12.22.12", line="12", fallbacks=["16.20.0"],
                                         manager_version="6.14.18",
                                         manager_source="package-lock.json v1"),
                                   diagnosis, read_node_context(root))
    assert pinned is not None and pinned[0].node is not None
    assert pinned[0].node.manager_version == "6.14.18"


@pytest.mark.slow
def test_yarn_on_node_4_is_a_release_that_starts_there(tmp_path: Path, shared_node: None) -> None:
    """yarn 1.13 and later declare Node >=4 but stop at startup on it; a switch to Node 4 takes
    the yarn classic release that runs there."""
    exact, how = exact_manager(ManagerChoice(name="yarn", version="1.22", source="yarn.lock v1"),
                               "4.9.1")
    assert exact == "1.12.3" and "no '1.22' runs on Node 4.9.1" in how
    node4 = provide_node("4.9.1").node
    for version, starts in ((exact, True), ("1.13.0", False)):
        script = fetch_package("yarn", version) / "bin" / "yarn.js"
        assert _run([node4, str(script), "--version"], tmp_path).ok is starts, version
    diagnosis = Diagnosis(category="installation", kind="engine_mismatch", reason="engines",
                          facts={"ranges": ["<5"], "packages": ["old-dependency"]})
    plan = _plan(version="6.9.0", line="6", fallbacks=["4.9.1"], manager="yarn",
                 manager_version="1.22.22", manager_source="yarn.lock v1")
    repaired = NodeRepairer().repair(plan, diagnosis, NodeContext())
    assert repaired is not None and repaired[0].node is not None
    assert (repaired[0].node.version, repaired[0].node.manager_version) == ("4.9.1", "1.12.3")


@pytest.mark.slow
def test_a_failure_not_of_the_node_release_ends_with_its_own_diagnosis(
        tmp_path: Path, shared_node: None) -> None:
    repo = RepoBuilder(tmp_path / "failing")
    repo.commit({"package.json": json.dumps({"name": "failing", "version": "1.0.0",
                                             "scripts": {"test": "node --test"}}),
                 "test/math.test.js": FAILING_TEST}, date="2023-05-01T12:00:00+00:00")
    record = _setup(repo.path, tmp_path / "setup.json", "--date", "2023-06-01")
    assert record["status"] == "failed" and record["node"]["fallbacks"]
    assert len(record["iterations"]) == 1, [i.get("repair") for i in record["iterations"]]
    assert record["failure_reason"].startswith("tests failed")
    assert "1 failed" in record["failure_reason"] or "fail 1" in record["failure_reason"]


# -- history lockfiles: bounded in age, installed by the manager that wrote them -------------

MIRRORED = FakePackage("mirrored-dep", {
    "1.0.0": dt.datetime(2024, 12, 5, 10, 0, 3, tzinfo=dt.timezone.utc),
    "1.1.0": dt.datetime(2024, 12, 5, 9, 58, 40, tzinfo=dt.timezone.utc),
    "1.2.0": dt.datetime(2024, 12, 6, 1, 0, 0, tzinfo=dt.timezone.utc),
    "1.3.0": dt.datetime(2024, 12, 5, 9, 59, 10, tzinfo=dt.timezone.utc)})
YARN_LOCK = ("# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.\n"
             "# yarn lockfile v1\n\n\nmirrored-dep@^1.0.0:\n  version \"1.1.0\"\n")


@pytest.mark.parametrize(("lock_date", "method"), [("2022-09-01", "history-lockfile"),
                                                   ("2021-03-01", "not-dated")])
def test_an_earlier_lockfile_counts_within_a_year_and_brings_its_manager(
        tmp_path: Path, lock_date: str, method: str) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    package = {"name": "app", "version": "1.0.0", "dependencies": {"mirrored-dep": "^1.0.0"}}
    repo.commit({"package.json": json.dumps(package), "yarn.lock": YARN_LOCK}, "lock",
                date=f"{lock_date}T12:00:00+00:00")
    repo.commit({"yarn.lock": None}, "drop the lockfile", date=f"{lock_date}T13:00:00+00:00")
    package["description"] = "later"
    repo.commit({"package.json": json.dumps(package)}, "describe", date="2023-05-01T12:00:00+00:00")
    ctx = read_node_context(repo.path)
    with FakeNpmRegistry([MIRRORED]) as registry:
        plan = choose_dating(repo.path, ctx, "2023-06-01", registry=registry.url)
    assert plan.method == method
    manager = choose_manager(manager_context(ctx, plan), "16.20.0")
    if method == "history-lockfile":
        assert plan.lockfile == "yarn.lock" and plan.history_lock is not None
        assert (manager.name, manager.source) == ("yarn", "yarn.lock v1")
        assert dated_install_command(plan, manager) == ["yarn", "install"]
    else:
        assert "365 days" in plan.reasons[-1]
        assert (manager.name, manager.version) == ("npm", "8.19.4")


# -- Node before 7.3 ignores NODE_EXTRA_CA_CERTS ---------------------------------------------

@pytest.mark.slow
def test_node_before_7_3_reaches_the_registry_through_the_ca_bundle(
        tmp_path: Path, shared_node: None) -> None:
    repo = RepoBuilder(tmp_path / "old")
    repo.commit({"package.json": json.dumps({
        "name": "old", "version": "1.0.0", "engines": {"node": "6"},
        "scripts": {"test": "tape test.js"}, "devDependencies": {"tape": "4.6.3"}}),
        ".nvmrc": "6.9.0\n",
        "test.js": "var test = require('tape');\ntest('adds', function (t) {\n"
                   "  t.equal(1 + 1, 2);\n  t.end();\n});\n"}, date="2017-03-01T12:00:00+00:00")
    record = _setup(repo.path, tmp_path / "setup.json", "--date", "2017-04-01")
    assert record["node"]["version"] == "6.9.0" and record["node"]["manager_version"] == "3.10.8"
    assert record["status"] == "validated", record.get("failure_reason")


@pytest.mark.slow
def test_mocha_under_node_before_10_writes_its_per_test_report(
        tmp_path: Path, shared_node: None) -> None:
    """The reporter benchsmith gives mocha runs on the Node of an old commit: no `recursive`
    mkdir (Node 10.12), no ES2015 that Node 4 lacks. The project's postinstall script runs
    although npm 3 run by root would hand it to `nobody`, who cannot enter the checkout."""
    repo = RepoBuilder(tmp_path / "oldmocha")
    repo.commit({"package.json": json.dumps({
        "name": "oldmocha", "version": "1.0.0", "engines": {"node": "6"},
        "scripts": {"postinstall": "node -e \"require('fs').writeFileSync('two.js', "
                                   "'module.exports = 2;')\""},
        "devDependencies": {"mocha": "3.2.0"}}),
        ".gitignore": "two.js\n",
        ".nvmrc": "6.9.0\n",
        "Makefile": "test:\n\tmocha\n",
        "test/adds.js": "var assert = require('assert');\ndescribe('math', function () {\n"
                        "  it('adds', function () { assert.equal(1 + 1, require('../two')); });\n"
                        "  it('is wrong on purpose', function () { assert.equal(1 + 1, 3); });\n"
                        "});\n"}, date="2017-03-01T12:00:00+00:00")
    record = _setup(repo.path, tmp_path / "setup.json", "--date", "2017-04-01", "--threshold", "0.5")
    assert record["node"]["version"] == "6.9.0"
    assert record["status"] == "validated", record.get("failure_reason")
    assert {t["name"]: t["status"] for t in record["tests"]["tests"]} == {
        "test/adds.js::math > adds": "PASSED", "test/adds.js::math > is wrong on purpose": "FAILED"}
