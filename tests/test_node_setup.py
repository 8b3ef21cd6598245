"""`benchsmith setup` on self-written JavaScript projects, built as git repositories by the
tests and installed for real from the npm registry with small packages: the record says Node
and carries per-test results; a Python repository still chooses Python."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchsmith.core import Plan
from benchsmith.harness.npm_registry import fetch_package
from benchsmith.harness.render import plan_spec, render_spec
from benchsmith.setup.ecosystems import choose_ecosystem
from benchsmith.setup.node.ecosystem import NodeEcosystem

from .conftest import RepoBuilder

DATE = "2023-05-01T12:00:00+00:00"
NODE_TEST = """const {{ describe, it }} = require('node:test');
const assert = require('node:assert');
{imports}
describe('{name}', () => {{
  it('adds', () => {{ assert.strictEqual({value}, {value}); }});
  it('compares', () => {{ assert.ok(1 < 2); }});
}});
"""
BDD = """describe('math', () => {{
  it('adds', () => {{ {check}(1 + 2, 3); }});
  it('multiplies', () => {{ {check}(2 * 3, 6); }});
  it.skip('is skipped', () => {{}});
}});
"""


def _repo(root: Path, package: dict[str, Any], files: dict[str, str]) -> RepoBuilder:
    repo = RepoBuilder(root)
    for name, text in {"package.json": json.dumps(package, indent=2), ".nvmrc": "18\n",
                       **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return repo


def _lock_with(root: Path, command: list[str]) -> None:
    """Write the project's lockfile with a real package manager (the host's node runs it)."""
    run = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "npm_config_fund": "false", "npm_config_audit": "false"})
    assert run.returncode == 0, run.stdout + run.stderr
    shutil.rmtree(root / "node_modules", ignore_errors=True)


def _setup(source: Path, out: Path, *extra: str) -> dict[str, Any]:
    run = subprocess.run([sys.executable, "-m", "benchsmith.cli", "setup", str(source), "--out",
                          str(out), "--no-refdb", *extra], capture_output=True, text=True,
                         timeout=1500)
    assert run.returncode == 0, run.stdout + run.stderr
    record: dict[str, Any] = json.loads(out.read_text())
    assert record["status"] == "validated" and record["ecosystem"] == "node", record.get("failure_reason")
    assert record["runner"] == "node" and record["node"]["version"].startswith("18.")
    assert record["node"]["version_source"] == ".nvmrc"
    return record


def _tests(record: dict[str, Any]) -> dict[str, str]:
    return {t["name"]: t["status"] for t in record["tests"]["tests"]}


def test_a_node_project_is_set_up_as_one_and_renders_given_test_files(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "shelf", {"name": "shelf", "scripts": {"test": "node --test"}},
                 {"test/a.test.js": "", "test/b.test.js": ""})
    ecosystem, evidence = choose_ecosystem(repo.path)
    assert isinstance(ecosystem, NodeEcosystem) and evidence.files == ["package.json"]
    plan = Plan(ecosystem="node", runner="node", python="3.11", exclude_newer=DATE,
                node={"version": "18.16.0", "dating": "lockfile", "lockfile": "package-lock.json",
                      "tests": {"runner": "jest", "command": ["jest"], "report_format": "jest-json"}})
    install, test = ecosystem.render(plan)
    assert install == ["npm ci"] and "--outputFile=\"$BENCHSMITH_REPORT\"" in test[0]
    spec = plan_spec(plan, ["test/a.test.js"])
    assert spec.runner == "node" and spec.node is not None and spec.node.runner == "jest"
    assert render_spec(spec).endswith("--runTestsByPath test/a.test.js")


@pytest.mark.slow
def test_npm_project_with_a_lockfile_and_jest(tmp_path: Path, shared_node: None) -> None:
    repo = _repo(tmp_path / "jestproj", {"name": "jestproj", "version": "1.0.0",
                                         "scripts": {"test": "jest"},
                                         "devDependencies": {"jest": "29.5.0"}},
                 {"test/math.test.js": BDD.format(check="((a, b) => expect(a).toBe(b))")})
    _lock_with(repo.path, ["npm", "install", "--package-lock-only"])
    repo.commit({}, "initial", date=DATE)
    record = _setup(repo.path, tmp_path / "setup.json")
    node = record["node"]
    assert (node["manager"], node["dating"], node["lockfile"]) == ("npm", "lockfile", "package-lock.json")
    assert record["install"][0] == "npm ci" and node["tests"]["report_format"] == "jest-json"
    assert _tests(record) == {"test/math.test.js::math > adds": "PASSED",
                              "test/math.test.js::math > multiplies": "PASSED",
                              "test/math.test.js::math > is skipped": "SKIPPED"}


@pytest.mark.slow
def test_npm_project_without_a_lockfile_and_mocha(tmp_path: Path, shared_node: None) -> None:
    repo = _repo(tmp_path / "mochaproj", {"name": "mochaproj", "version": "1.0.0",
                                          "scripts": {"test": "mocha --reporter dot"},
                                          "devDependencies": {"mocha": "^10.2.0"}},
                 {"test/math.js": "const assert = require('assert');\n"
                                  + BDD.format(check="assert.strictEqual")})
    repo.commit({}, "initial", date=DATE)
    record = _setup(repo.path, tmp_path / "setup.json")
    node = record["node"]
    # how the dependencies were dated depends on the registry's publish times: the record says
    assert node["dating"] in {"before", "not-dated"} and node["lockfile"] is None
    expected = "npm install --before=2023-05-01" if node["dating"] == "before" else "npm install"
    assert record["install"] == [expected] and node["tests"]["runner"] == "mocha"
    assert _tests(record) == {"test/math.js::math > adds": "PASSED",
                              "test/math.js::math > multiplies": "PASSED",
                              "test/math.js::math > is skipped": "SKIPPED"}


@pytest.mark.slow
def test_node_test_project_without_dependencies(tmp_path: Path, shared_node: None) -> None:
    # a submodule whose host is out of reach is named in the record, as for a Python project
    repo = _repo(tmp_path / "plain", {"name": "plain", "scripts": {"test": "node --test"}},
                 {"test/math.test.js": NODE_TEST.format(imports="", name="math", value="3"),
                  ".gitmodules": '[submodule "spec/shared"]\n\tpath = spec/shared\n'
                                 "\turl = https://git.example.invalid/plain/shared-spec.git\n"})
    repo.commit({}, "initial", date=DATE)
    record = _setup(repo.path, tmp_path / "setup.json")
    assert record["missing_submodules"] == ["spec/shared"]
    assert record["node"]["tests"]["report_format"] == "tap-files"
    assert _tests(record) == {"test/math.test.js::math > adds": "PASSED",
                              "test/math.test.js::math > compares": "PASSED"}


TAPSHOT = """#!/usr/bin/env node
const fs = require('fs');
const path = require('path');
const dir = process.argv[2];
const lines = [];
for (const file of fs.readdirSync(dir).sort()) {
  for (const [name, check] of Object.entries(require(path.resolve(dir, file)))) {
    let ok = true;
    try { check(); } catch (err) { ok = false; }
    lines.push(`${ok ? 'ok' : 'not ok'} ${lines.length + 1} - ${file} ${name}`);
  }
}
console.log(`TAP version 13\\n1..${lines.length}\\n${lines.join('\\n')}`);
"""


@pytest.mark.slow
def test_a_runner_testing_itself_runs_its_own_program(tmp_path: Path, shared_node: None) -> None:
    # npm links the programs of dependencies into node_modules/.bin, never the project's own
    repo = _repo(tmp_path / "tapshot", {"name": "tapshot", "version": "1.0.0",
                                        "bin": {"tapshot": "./bin/tapshot.js"},
                                        "scripts": {"test": "tapshot test"}},
                 {"bin/tapshot.js": TAPSHOT,
                  "test/math.js": "const assert = require('assert');\n"
                                  "exports.adds = () => assert.strictEqual(1 + 2, 3);\n"
                                  "exports.doubles = () => assert.strictEqual(2 * 2, 4);\n"})
    repo.commit({}, "initial", date=DATE)
    record = _setup(repo.path, tmp_path / "setup.json")
    assert record["tests"]["PASSED"] == 2 and len(record["iterations"]) == 1
    assert any("node_modules/.bin/tapshot" in step for step in record["node"]["build"])


def _number_project(root: Path) -> RepoBuilder:
    """A project whose node:test suite uses one small registry package (is-number)."""
    return _repo(root, {"name": root.name, "version": "1.0.0", "scripts": {"test": "node --test"},
                        "dependencies": {"is-number": "7.0.0"}},
                 {"test/number.test.js": NODE_TEST.format(
                     imports="const isNumber = require('is-number');", name="number",
                     value="isNumber(5)")})


NUMBER_TESTS = {"test/number.test.js::number > adds": "PASSED",
                "test/number.test.js::number > compares": "PASSED"}


def _manager(tmp_path: Path, package: str, version: str, bin_path: str) -> list[str]:
    directory = fetch_package(package, version, tmp_path / "managers")
    return ["node", str(directory / bin_path)]


@pytest.mark.slow
@pytest.mark.parametrize(("manager", "lockfile", "frozen"), [
    ("yarn", "yarn.lock", "yarn install --frozen-lockfile"),
    ("pnpm", "pnpm-lock.yaml", "pnpm install --frozen-lockfile")])
def test_yarn_and_pnpm_projects_with_their_lockfiles(tmp_path: Path, shared_node: None,
                                                     manager: str, lockfile: str, frozen: str) -> None:
    repo = _number_project(tmp_path / f"{manager}proj")
    tool = (_manager(tmp_path, "yarn", "1.22.19", "bin/yarn.js") + ["install", "--ignore-scripts"]
            if manager == "yarn" else
            _manager(tmp_path, "pnpm", "8.6.0", "bin/pnpm.cjs") + ["install", "--lockfile-only"])
    _lock_with(repo.path, tool)
    repo.commit({}, "initial", date=DATE)
    record = _setup(repo.path, tmp_path / "setup.json")
    node = record["node"]
    assert (node["manager"], node["dating"], node["lockfile"]) == (manager, "lockfile", lockfile)
    assert record["install"] == [frozen]
    assert _tests(record) == NUMBER_TESTS


@pytest.mark.slow
def test_npm_workspace(tmp_path: Path, shared_node: None) -> None:
    repo = _repo(tmp_path / "mono", {"name": "mono", "private": True, "workspaces": ["packages/*"],
                                     "scripts": {"test": "node --test"}}, {
        "packages/core/package.json": json.dumps({"name": "core", "version": "1.0.0"}),
        "packages/core/index.js": "module.exports = (a, b) => a + b;\n",
        "packages/app/package.json": json.dumps({"name": "app", "version": "1.0.0",
                                                 "dependencies": {"core": "1.0.0"}}),
        "packages/app/test/app.test.js": NODE_TEST.format(imports="const add = require('core');",
                                                          name="app", value="add(1, 2)")})
    _lock_with(repo.path, ["npm", "install", "--package-lock-only"])
    repo.commit({}, "initial", date=DATE)
    record = _setup(repo.path, tmp_path / "setup.json")
    assert record["install"] == ["npm ci"]
    assert _tests(record) == {"packages/app/test/app.test.js::app > adds": "PASSED",
                              "packages/app/test/app.test.js::app > compares": "PASSED"}


@pytest.mark.slow
def test_a_monorepo_without_a_root_test_script_runs_its_workspaces_tests(
        tmp_path: Path, shared_node: None) -> None:
    """The root declares mocha (hoisted for its workspaces) but no test script: the workspaces'
    own test scripts run, each mocha run reported per test; a workspace without one is left be."""
    mocha = "const assert = require('assert');\n" + BDD.format(check="assert.strictEqual")
    repo = _repo(tmp_path / "mono", {"name": "mono", "private": True,
                                     "workspaces": ["packages/*", "tools/cli"],
                                     "devDependencies": {"mocha": "10.7.3"}}, {
        "packages/core/package.json": json.dumps({"name": "core", "version": "1.0.0",
                                                  "scripts": {"test": "mocha --bail test"}}),
        "packages/core/test/core.js": mocha,
        "packages/docs/package.json": json.dumps({"name": "docs", "version": "1.0.0"}),
        "tools/cli/package.json": json.dumps({"name": "cli", "version": "1.0.0",
                                              "scripts": {"test": "node --test"}}),
        "tools/cli/test/cli.test.js": NODE_TEST.format(imports="", name="cli", value="3")})
    _lock_with(repo.path, ["npm", "install", "--package-lock-only"])
    repo.commit({}, "initial", date=DATE)
    record = _setup(repo.path, tmp_path / "setup.json")
    assert record["node"]["tests"]["runner"] == "script"
    assert "packages/core tools/cli" in record["node"]["tests"]["command"][-1]
    tests = _tests(record)
    assert {name: tests.get(name) for name in ("packages/core/test/core.js::math > adds",
                                               "packages/core/test/core.js::math > multiplies")} \
        == {"packages/core/test/core.js::math > adds": "PASSED",
            "packages/core/test/core.js::math > multiplies": "PASSED"}


@pytest.mark.slow
def test_tests_whose_browser_is_not_installed_are_not_counted(tmp_path: Path,
                                                             shared_node: None) -> None:
    """Four of seven tests fail as Playwright fails without its browser download (which
    installs skip): validated on the other three, the four named in `needs_browser`."""
    browser = ("const assert = require('assert');\ndescribe('page', () => {\n"
               + "".join(f"  it('opens in {name}', () => {{ throw new Error("
                         f"\"browserType.launch: Executable doesn't exist at /root/.cache/"
                         f"ms-playwright/{name}-1255/{name}\"); }});\n"
                         for name in ("chromium", "firefox", "webkit", "edge"))
               + "});\n")
    repo = _repo(tmp_path / "pageproj", {"name": "pageproj", "version": "1.0.0",
                                         "scripts": {"test": "mocha"},
                                         "devDependencies": {"mocha": "10.7.3"}},
                 {"test/math.js": "const assert = require('assert');\n"
                                  + BDD.format(check="assert.strictEqual"),
                  "test/page.js": browser})
    repo.commit({}, "initial", date=DATE)
    record = _setup(repo.path, tmp_path / "setup.json")
    assert sorted(record["needs_browser"]) == [
        f"test/page.js::page > opens in {name}" for name in ("chromium", "edge", "firefox", "webkit")]
    assert record["pass_rate"] == 1.0 and record["tests"]["PASSED"] == 2


@pytest.mark.slow
@pytest.mark.docker
def test_node_test_project_on_docker(tmp_path: Path, shared_node: None) -> None:
    repo = _repo(tmp_path / "plain", {"name": "plain", "scripts": {"test": "node --test"}},
                 {"test/math.test.js": NODE_TEST.format(imports="", name="math", value="3")})
    repo.commit({}, "initial", date=DATE)
    record = _setup(repo.path, tmp_path / "setup.json", "--backend", "docker")
    assert record["backend"] == "docker" and record["tests_offline"]
    assert _tests(record) == {"test/math.test.js::math > adds": "PASSED",
                              "test/math.test.js::math > compares": "PASSED"}


@pytest.mark.slow
def test_a_lockfile_written_by_an_old_npm_is_installed_by_that_npm(tmp_path: Path,
                                                                  shared_node: None) -> None:
    """A version-1 package-lock (npm 5 and 6) is installed frozen by npm 6, not by the npm the
    Node line ships with."""
    repo = _number_project(tmp_path / "oldlock")
    _lock_with(repo.path, _manager(tmp_path, "npm", "6.14.18", "bin/npm-cli.js")
               + ["install", "--package-lock-only"])
    assert json.loads((repo.path / "package-lock.json").read_text())["lockfileVersion"] == 1
    repo.commit({}, "initial", date=DATE)
    record = _setup(repo.path, tmp_path / "setup.json")
    node = record["node"]
    assert (node["manager"], node["dating"], node["lockfile"]) == ("npm", "lockfile", "package-lock.json")
    assert node["manager_version"].startswith("6.") and record["install"] == ["npm ci"]
    assert _tests(record) == NUMBER_TESTS


@pytest.mark.slow
@pytest.mark.docker
def test_a_yarn_project_with_its_lockfile_on_docker(tmp_path: Path, shared_node: None) -> None:
    repo = _number_project(tmp_path / "yarnproj")
    _lock_with(repo.path, _manager(tmp_path, "yarn", "1.22.19", "bin/yarn.js")
               + ["install", "--ignore-scripts"])
    repo.commit({}, "initial", date=DATE)
    record = _setup(repo.path, tmp_path / "setup.json", "--backend", "docker")
    assert record["backend"] == "docker" and record["install"] == ["yarn install --frozen-lockfile"]
    assert record["node"]["manager"] == "yarn" and record["tests_offline"]
    assert _tests(record) == NUMBER_TESTS


def test_a_node_build_the_registry_lacks_gives_way_to_the_newest_earlier_one_of_its_line() -> None:
    """The registry does not carry every Node release: the newest build of the same line before
    the chosen one (released earlier, so it existed at the date too) is taken instead."""
    from benchsmith.harness.node_fetch import on_registry

    known = ["12.22.1", "14.16.1", "14.17.1", "16.1.0", "0.12.4", "0.10.48", "4.0.0"]
    assert on_registry("14.17.0", known) == "14.16.1"  # never the later 14.17.1
    assert on_registry("16.1.0", known) == "16.1.0"
    assert on_registry("12.22.0", known) == "12.22.0"  # nothing earlier of its line: the fetch says so
    assert on_registry("0.12.5", known) == "0.12.4"  # 0.x lines by minor


def test_yarn_2_launchers_do_not_carry_yarn_classics_registry_variable() -> None:
    """Yarn 2 and later reject YARN_REGISTRY as a legacy setting; yarn classic needs it."""
    from benchsmith.harness.node_stage import launcher as _shim

    berry, classic = _shim("/n/bin/node", "/y/yarn.js", "/n", berry=True), _shim("/n/bin/node", "/y/yarn.js", "/n")
    assert "YARN_NPM_REGISTRY_SERVER" in berry and "unset YARN_REGISTRY" in berry
    assert "export npm_config_registry YARN_REGISTRY " in classic
