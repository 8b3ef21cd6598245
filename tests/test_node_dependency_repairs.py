"""Dependency rules on real npm output against a registry stand-in on 127.0.0.1: git sources
replaced by registry releases (or left out), unpublished versions moved to the nearest published
one, and direct dependencies capped by engines.node. Each repaired install is run again."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchsmith.core import Diagnosis, ExecResult, NodePlan, NodeTestRun, Plan
from benchsmith.setup.node.context import read_node_context
from benchsmith.setup.node.declared import Declared, declarations, locked_versions, render_edits
from benchsmith.setup.node.dependency_repairs import engine_caps
from benchsmith.setup.node.repair import NodeRepairer
from benchsmith.testing.fake_npm_registry import FakeNpmRegistry, FakePackage


def _day(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc)


LEFTPAD = FakePackage("leftpad-x", {
    "1.0.0": _day("2020-01-10"), "1.0.1": _day("2020-02-10"), "1.1.0": _day("2020-06-01"),
    "1.1.1": _day("2020-08-01"), "1.2.0": _day("2021-02-03"), "2.0.0": _day("2022-09-09")})
# depends on a fork on GitHub, as registry packages sometimes do
PARENT = FakePackage("doc-checker", {"1.0.0": _day("2020-03-01")},
                     dependencies={"1.0.0": {"leftpad-x": "someone/leftpad-fork#enhanced"}})
# 1.0.1 is listed but its tarball is gone, as after an unpublish
SHIM = FakePackage("shim-lib", {"1.0.0": _day("2020-01-01"), "1.0.1": _day("2020-02-01"),
                                "1.0.2": _day("2020-03-01"), "2.0.0": _day("2020-04-01")},
                   tarball_gone={"1.0.1"})
# the newest version wants a Node from the future; 1.3.0 came after the day the tests pin to
MODERN = FakePackage("modern-lib", {
    "1.0.0": _day("2020-01-01"), "1.0.1": _day("2020-02-01"), "1.1.0": _day("2020-05-01"),
    "1.2.0": _day("2020-09-01"), "1.2.1": _day("2021-02-01"), "1.3.0": _day("2021-09-01")},
    engines={"1.0.0": ">=8", "1.0.1": ">=8", "1.1.0": ">=14", "1.2.0": ">=14", "1.2.1": ">=99",
             "1.3.0": ">=14"})
# Node's type declarations: each major describes that Node
TYPES = FakePackage("@types/node", {"12.20.0": _day("2020-01-05"), "14.17.0": _day("2020-03-05"),
                                    "16.4.0": _day("2020-07-05"), "20.1.0": _day("2020-11-05"),
                                    "22.0.0": _day("2021-01-05")})
PACKAGES = [LEFTPAD, PARENT, SHIM, MODERN, TYPES]


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeNpmRegistry]:
    assert shutil.which("npm"), "npm is needed (Debian's `npm` package)"
    with FakeNpmRegistry(PACKAGES) as served:
        monkeypatch.setenv("npm_config_registry", served.url)
        monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
        for name in ("audit", "fund", "update_notifier"):
            monkeypatch.setenv(f"npm_config_{name}", "false")
        monkeypatch.setenv("npm_config_fetch_retries", "0")  # an unreachable host fails at once
        # git must fail fast (no prompts, no host) as it does where GitHub is unreachable
        monkeypatch.setenv("GIT_TERMINAL_PROMPT", "0")
        monkeypatch.setenv("GIT_SSH_COMMAND", "ssh -o BatchMode=yes -o ConnectTimeout=3")
        yield served


def _npm_version() -> str:
    return subprocess.run(["npm", "--version"], capture_output=True, text=True).stdout.strip()


def _plan(**node: object) -> Plan:
    fields: dict[str, object] = {
        "version": "20.20.0", "line": "20", "manager": "npm", "manager_version": _npm_version(),
        "tests": NodeTestRun(runner="mocha", command=["mocha"], report_format="mocha-json")}
    fields.update(node)
    return Plan(ecosystem="node", runner="node", python="3.11",
                exclude_newer="2021-06-01T00:00:00Z", node=NodePlan.model_validate(fields))


def _project(root: Path, package: dict[str, object], lock: dict[str, object] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "package.json").write_text(json.dumps({"name": "demo", "version": "1.0.0", **package}))
    if lock is not None:
        (root / "package-lock.json").write_text(json.dumps(lock, indent=2))
    return root


def _run(command: str, cwd: Path) -> ExecResult:
    done = subprocess.run(command, shell=True, cwd=cwd, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=300, env=os.environ)
    return ExecResult(command=command, returncode=done.returncode, output=done.stdout)


def _repair(plan: Plan, failed: ExecResult, root: Path) -> tuple[Plan, Diagnosis, str]:
    assert not failed.ok, failed.output[-2000:]
    repairer, context = NodeRepairer(), read_node_context(root)
    diagnosis = repairer.diagnose(plan, failed, "install", context)
    repaired = repairer.repair(plan, diagnosis, context)
    assert repaired is not None, diagnosis
    return repaired[0], diagnosis, repaired[1]


def _install(plan: Plan, root: Path) -> ExecResult:
    """The repaired install: the recorded package.json edits, then the plan's npm install."""
    assert plan.node is not None
    install = "npm ci" if plan.node.dating == "lockfile" else "npm install"
    result = _run(" && ".join([*render_edits(plan.node.edits), install]), root)
    assert result.ok, result.output[-2000:]
    return result


def _installed(root: Path, name: str) -> str | None:
    path = root / "node_modules" / name / "package.json"
    return str(json.loads(path.read_text())["version"]) if path.is_file() else None


def test_a_git_dependency_becomes_the_registry_release_its_tag_names(
        registry: FakeNpmRegistry, tmp_path: Path) -> None:
    root = _project(tmp_path / "p", {"devDependencies": {
        "leftpad-x": "github:someone/leftpad-x#v1.1.0",
        "gone-tool": "git+https://github.com/someone/gone-tool.git"}})
    plan, diagnosis, description = _repair(_plan(), _run("npm install", root), root)
    assert diagnosis.kind == "direct_url_unreachable"
    assert plan.node is not None
    assert plan.node.replaced["leftpad-x"].startswith("github:someone/leftpad-x#v1.1.0 -> 1.1.0")
    assert "not on the registry" in plan.node.dropped["gone-tool"]
    assert "leftpad-x" in description
    _install(plan, root)
    assert _installed(root, "leftpad-x") == "1.1.0"
    assert "gone-tool" not in json.loads((root / "package.json").read_text())["devDependencies"]


def test_a_lockfile_pinning_a_git_source_is_adapted_with_the_version_it_names(
        registry: FakeNpmRegistry, tmp_path: Path) -> None:
    sha = "4558ee00f9f1f686fffe1accbfc2e85b1af9c50f"
    spec = f"github:someone/leftpad-x#{sha}"
    lock = {"name": "demo", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
            "packages": {"": {"name": "demo", "version": "1.0.0",
                              "devDependencies": {"leftpad-x": spec}},
                         # the same name from the registry elsewhere in the tree
                         "node_modules/doc-checker/node_modules/leftpad-x": {
                             "version": "1.2.0", "dev": True,
                             "resolved": f"{registry.url}/leftpad-x/-/leftpad-x-1.2.0.tgz"},
                         "node_modules/leftpad-x": {
                             "version": "1.0.0", "dev": True,
                             "resolved": f"git+ssh://git@github.com/someone/leftpad-x.git#{sha}"}}}
    root = _project(tmp_path / "p", {"devDependencies": {"leftpad-x": spec}}, lock)
    assert locked_versions(root, "package-lock.json")["leftpad-x"] == ["1.2.0", "git:1.0.0"]
    plan = _plan(dating="lockfile", lockfile="package-lock.json")
    plan, diagnosis, _ = _repair(plan, _run("npm ci", root), root)
    assert diagnosis.kind == "direct_url_unreachable"
    assert plan.node is not None and plan.node.dating == "history-lockfile"
    assert "1.0.0 (the version the lockfile names" in plan.node.replaced["leftpad-x"]
    _install(plan, root)
    assert _installed(root, "leftpad-x") == "1.0.0"


def test_a_git_source_of_a_dependency_is_replaced_through_npm_overrides(
        registry: FakeNpmRegistry, tmp_path: Path) -> None:
    root = _project(tmp_path / "p", {"devDependencies": {"doc-checker": "^1.0.0"}})
    plan, diagnosis, _ = _repair(_plan(), _run("npm install", root), root)
    assert diagnosis.facts["sources"] == ["someone/leftpad-fork"]
    assert plan.node is not None
    assert "(a dependency of doc-checker) -> 1.2.0" in plan.node.replaced["leftpad-x"]
    assert plan.node.edits[0].path == ["overrides", "doc-checker"]
    _install(plan, root)
    assert _installed(root, "leftpad-x") == "1.2.0"  # the newest published by the date


def test_an_npm_without_overrides_leaves_the_dev_dependency_out(
        registry: FakeNpmRegistry, tmp_path: Path) -> None:
    root = _project(tmp_path / "p", {"devDependencies": {"doc-checker": "^1.0.0"},
                                     "dependencies": {"shim-lib": "^1.0.0"}})
    plan, _, _ = _repair(_plan(manager_version="6.14.18"), _run("npm install", root), root)
    assert plan.node is not None
    assert "leftpad-x comes from someone/leftpad-fork#enhanced" in plan.node.dropped["doc-checker"]
    _install(plan, root)
    assert _installed(root, "doc-checker") is None and _installed(root, "shim-lib") == "1.0.2"


def test_an_unpublished_pinned_version_moves_to_the_nearest_published_one(
        registry: FakeNpmRegistry, tmp_path: Path) -> None:
    lock = {"name": "demo", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
            "packages": {"": {"name": "demo", "version": "1.0.0",
                              "dependencies": {"shim-lib": "^1.0.0"},
                              "devDependencies": {"gone-scripts": "0.0.6"}},
                         "node_modules/shim-lib": {
                             "version": "1.0.1",
                             "resolved": f"{registry.url}/shim-lib/-/shim-lib-1.0.1.tgz"},
                         "node_modules/gone-scripts": {
                             "version": "0.0.6", "dev": True,
                             "resolved": f"{registry.url}/gone-scripts/-/gone-scripts-0.0.6.tgz"}}}
    root = _project(tmp_path / "p", {"dependencies": {"shim-lib": "^1.0.0"},
                                     "devDependencies": {"gone-scripts": "0.0.6"}}, lock)
    plan = _plan(dating="lockfile", lockfile="package-lock.json")
    failed = _run("npm ci", root)
    plan, diagnosis, _ = _repair(plan, failed, root)
    assert diagnosis.kind == "not_in_registry"
    assert plan.node is not None
    if "shim-lib" not in plan.node.replaced:  # npm stops at the first 404: repair once more
        plan, _, _ = _repair(plan, _run(" && ".join([*render_edits(plan.node.edits),
                                                     "npm install"]), root), root)
        assert plan.node is not None
    assert plan.node.replaced["shim-lib"].startswith("^1.0.0 -> 1.0.0 (the nearest published")
    assert "no published version it allows" in plan.node.dropped["gone-scripts"]
    _install(plan, root)
    assert _installed(root, "shim-lib") == "1.0.0" and _installed(root, "gone-scripts") is None


def test_direct_dependencies_are_capped_by_engines_node_and_the_date(
        registry: FakeNpmRegistry, tmp_path: Path) -> None:
    root = _project(tmp_path / "p", {"dependencies": {"modern-lib": "^1.0.0"},
                                     "devDependencies": {"@types/node": ">=12"}})
    uncapped = _run("npm install --engine-strict", root)
    assert uncapped.ok and _installed(root, "modern-lib") == "1.3.0"  # newer than the day
    caps = engine_caps(root, [], ["20.0.0", "12.0.0"], "2021-06-01")
    # 1.3.0 came after the day, 1.2.1 needs a future Node, 1.1.0 on needs Node 14
    assert [(e.name, e.spec) for e in caps["20.0.0"]] == [("modern-lib", "1.2.0"),
                                                          ("@types/node", "20.1.0")]
    assert [(e.name, e.spec) for e in caps["12.0.0"]] == [("modern-lib", "1.0.1"),
                                                          ("@types/node", "12.20.0")]
    assert caps["20.0.0"][0].why == ("modern-lib@1.3.0 is newer than 2021-06-01; 1.2.0 is the "
                                     "newest of '^1.0.0' for Node 20.0.0 published by 2021-06-01")
    assert caps["12.0.0"][0].why.startswith("modern-lib@1.3.0 needs node >=14")
    plan = _plan()
    assert plan.node is not None
    plan.node.edits = caps["20.0.0"]
    _run("rm -rf node_modules package-lock.json", root)
    result = _run(" && ".join([*render_edits(plan.node.edits), "npm install --engine-strict"]), root)
    assert result.ok, result.output[-2000:]
    assert _installed(root, "modern-lib") == "1.2.0" and _installed(root, "@types/node") == "20.1.0"


def test_caps_repair_a_failed_undated_install_once_and_never_come_first(
        registry: FakeNpmRegistry, tmp_path: Path) -> None:
    """The newest versions often run despite an engine warning: caps are a repair after a
    failure of an install nothing dated, applied once, never part of the first plan."""
    root = _project(tmp_path / "p", {"dependencies": {"modern-lib": "^1.0.0"}})
    plan, context = _plan(version="12.0.0", line="12", dating="not-dated"), read_node_context(root)
    repairer = NodeRepairer()
    diagnosis = Diagnosis(category="undecidable", kind="install_failed",
                          reason="install failed for no reason a rule knows")
    repaired = repairer.repair(plan, diagnosis, context)
    assert repaired is not None and repaired[0].node is not None
    assert repaired[0].node.pinned["modern-lib"].startswith("^1.0.0 -> 1.0.1")
    assert "modern-lib" in repaired[1]
    _run("rm -rf node_modules package-lock.json", root)
    fixed = _run(" && ".join([*render_edits(repaired[0].node.edits), "npm install --engine-strict"]),
                 root)
    assert fixed.ok, fixed.output[-2000:]
    assert repairer.repair(repaired[0], diagnosis, context) is None  # once
    dated = _plan(version="12.0.0", line="12", dating="lockfile")
    assert repairer.repair(dated, diagnosis, context) is None  # a dated install is left alone


def test_a_typescript_build_goes_past_the_types_of_a_left_out_dependency(tmp_path: Path) -> None:
    assert shutil.which("npm"), "npm is needed (Debian's `npm` package)"
    root = _project(tmp_path / "p", {"devDependencies": {"typescript": "4.9.5"}})
    (root / "src").mkdir()
    (root / "src" / "server.ts").write_text("import { App } from 'native-sockets';\n"
                                            "export const make = (): unknown => App;\n")
    (root / "tsconfig.json").write_text(json.dumps({"compilerOptions": {
        "outDir": "dist", "module": "commonjs", "strict": True}, "include": ["src"]}))
    cache = {"npm_config_cache": str(tmp_path / "npm-cache"), "npm_config_audit": "false"}
    installed = subprocess.run(["npm", "install"], cwd=root, env={**os.environ, **cache},
                               capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr[-2000:]
    plan = _plan(build=["tsc"], dropped={"native-sockets": "devDependencies left out"})
    build = _run("node_modules/.bin/tsc", root)
    assert "TS2307" in build.output
    repairer, context = NodeRepairer(), read_node_context(root)
    diagnosis = repairer.diagnose(plan, build, "install", context)
    assert diagnosis.kind == "missing_modules" and diagnosis.facts["modules"] == ["native-sockets"]
    repaired = repairer.repair(plan, diagnosis, context)
    assert repaired is not None and repaired[0].node is not None
    assert repaired[0].node.build == ["tsc || true"]
    assert _run("PATH=node_modules/.bin:$PATH " + repaired[0].node.build[0], root).ok
    assert (root / "dist" / "server.js").is_file()
    other = _plan(build=["tsc"])  # a module no rule left out: a real error, not repaired
    assert repairer.repair(other, diagnosis, context) is None


def test_workspace_manifests_are_read_and_their_own_packages_left_alone(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", {"private": True, "workspaces": ["packages/*"],
                                     "devDependencies": {"modern-lib": "^1.0.0"}})
    for name, deps in (("a", {"b": "^1.0.0", "leftpad-x": "github:someone/leftpad-x#v1.1.0"}),
                       ("b", {})):
        _project(root / "packages" / name, {"name": name, "dependencies": deps})
    context = read_node_context(root)
    assert declarations(root, context.workspaces) == [
        Declared("package.json", "devDependencies", "modern-lib", "^1.0.0"),
        Declared("packages/a/package.json", "dependencies", "leftpad-x",
                 "github:someone/leftpad-x#v1.1.0")]


def test_an_install_script_downloading_from_github_is_no_git_dependency() -> None:
    # recorded from a real yarn install: a package's install script fetching a release asset
    log = ("error /repo/node_modules/some-binary: Command failed.\nExit code: 1\n"
           "Command: node install.js\nOutput:\nDownloading https://github.com/Owner/some-binary/"
           "releases/download/v2.1.1/some-binary-2.1.1-linux-x86_64.tar.bz2\nError making request.\n"
           "Error: getaddrinfo ENOTFOUND github.com\n    at GetAddrInfoReqWrap.onlookup "
           "[as oncomplete] (dns.js:67:26)\n")
    failed = ExecResult(command="yarn install", returncode=1, output=log)
    assert NodeRepairer().diagnose(_plan(), failed, "install", None).kind == \
        "script_download_failed"
    yarn_git = "info There appears to be trouble with your network connection. Retrying...\n" \
               "error Error: getaddrinfo ENOTFOUND codeload.github.com\n"
    failed = ExecResult(command="yarn install", returncode=1, output=yarn_git)
    assert NodeRepairer().diagnose(_plan(), failed, "install", None).kind == \
        "direct_url_unreachable"
    # after its retries, yarn classic names the tarball it never wrote
    yarn_gone = ("error Error: https://codeload.github.com/someone/leftpad-fork/tar.gz/1c15d0db: "
                 "ENOENT: no such file or directory, open '/cache/.tmp/.yarn-tarball.tgz'\n")
    failed = ExecResult(command="yarn install", returncode=1, output=yarn_gone)
    assert NodeRepairer().diagnose(_plan(), failed, "install", None).kind == \
        "direct_url_unreachable"
