"""Type declarations newer than the compiler, on real npm installs from the registry: an old
typescript line meets the newest @types/node (which a types package pulls in with ``"*"``); the
rule pins it to the newest version for that line, through npm's overrides or, for an npm
without them, a devDependency npm dedupes to."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import nodesemver
import pytest

from benchsmith.core import Diagnosis, ExecResult, NodePlan, NodeTestRun, Plan
from benchsmith.harness.npm_registry import packument
from benchsmith.setup.node.context import read_node_context
from benchsmith.setup.node.declared import render_edits
from benchsmith.setup.node.repair import NodeRepairer
from benchsmith.setup.node.type_packages import types_packages

SOURCE = """import { readFileSync } from "fs";
export const size = (path: string): number => readFileSync(path).length;
"""


@pytest.fixture(autouse=True)
def npm_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert shutil.which("npm"), "npm is needed (Debian's `npm` package)"
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    for name in ("audit", "fund", "update_notifier"):
        monkeypatch.setenv(f"npm_config_{name}", "false")


def _plan(manager: str, manager_version: str) -> Plan:
    node = NodePlan(version="20.20.0", line="20", manager=manager,  # type: ignore[arg-type]
                    manager_version=manager_version, dating="not-dated", build=["npm run build"],
                    tests=NodeTestRun(runner="mocha", command=["mocha"], report_format="mocha-json"))
    return Plan(ecosystem="node", runner="node", python="3.11",
                exclude_newer="2021-06-01T00:00:00Z", node=node)


def _project(root: Path, dev: dict[str, str]) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "package.json").write_text(json.dumps({
        "name": "demo", "version": "1.0.0", "scripts": {"build": "tsc", "test": "mocha"},
        "devDependencies": dev}))
    (root / "src" / "index.ts").write_text(SOURCE)
    (root / "tsconfig.json").write_text(json.dumps({"compilerOptions": {
        "outDir": "dist", "module": "commonjs", "strict": True}, "include": ["src"]}))
    return root


def _build(node: NodePlan, root: Path) -> ExecResult:
    """The plan's package.json edits, the install and the build step, as the setup runs them."""
    command = " && ".join([*render_edits(node.edits), "npm install",
                           "PATH=$PWD/node_modules/.bin:$PATH npm run build"])
    done = subprocess.run(command, shell=True, cwd=root, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=600, env=os.environ)
    return ExecResult(command=command, returncode=done.returncode, output=done.stdout)


def _repaired(plan: Plan, diagnosis: Diagnosis, root: Path) -> tuple[NodePlan, str]:
    repaired = NodeRepairer().repair(plan, diagnosis, read_node_context(root))
    assert repaired is not None and repaired[0].node is not None, diagnosis
    return repaired[0].node, repaired[1]


def _installed(root: Path, name: str) -> set[str]:
    """The versions of `name` anywhere in the tree (hoisted or nested)."""
    return {str(json.loads(p.read_text())["version"])
            for p in (root / "node_modules").glob(f"**/node_modules/{name}/package.json")} | \
        ({str(json.loads(top.read_text())["version"])}
         if (top := root / "node_modules" / name / "package.json").is_file() else set())


def test_types_packages_are_read_from_the_innermost_node_modules() -> None:
    assert types_packages(["node_modules/@types/node/globals.d.ts",
                           "../node_modules/@types/express/node_modules/@types/qs/index.d.ts",
                           "node_modules/@types/node/fs.d.ts", "src/index.ts",
                           "node_modules/typed-lib/index.d.ts"]) == ["@types/node", "@types/qs"]


@pytest.mark.slow
def test_types_newer_than_an_old_typescript_line_are_pinned_for_it(tmp_path: Path) -> None:
    npm = subprocess.run(["npm", "--version"], text=True, capture_output=True).stdout.strip()
    assert nodesemver.satisfies(npm, ">=8.3.0"), f"npm {npm} has no overrides"
    root = _project(tmp_path / "p", {"typescript": "~4.3.5", "@types/graceful-fs": "*"})
    plan = _plan("npm", npm)
    assert plan.node is not None
    failed = _build(plan.node, root)
    assert not failed.ok and "node_modules/@types/node/" in failed.output, failed.output[-2000:]
    repairer, context = NodeRepairer(), read_node_context(root)
    diagnosis = repairer.diagnose(plan, failed, "install", context)
    assert diagnosis.kind == "project_build_failed", diagnosis
    assert diagnosis.facts["files"] == [] and types_packages(
        diagnosis.facts["dependency_files"]) == ["@types/node"]
    assert "type declarations of its dependencies" in diagnosis.reason

    node, description = _repaired(plan, diagnosis, root)
    [edit] = node.edits
    assert (edit.path, edit.name, edit.was) == (["overrides"], "@types/node", None)
    doc = packument("@types/node", full=True)
    assert float(doc["versions"][edit.spec]["typeScriptVersion"]) <= 4.3
    assert node.pinned["@types/node"].startswith(f"newest -> {edit.spec} (@types/node ")
    assert "needs a newer TypeScript than 4.3.5" in node.pinned["@types/node"]
    assert node.pinned["@types/node"].endswith("; through overrides)")
    assert description.startswith("type declarations for TypeScript 4.3.5: @types/node")
    built = _build(node, root)
    assert built.ok, built.output[-2000:]
    assert _installed(root, "@types/node") == {edit.spec}
    assert (root / "dist" / "index.js").is_file()
    again = plan.model_copy(update={"node": node})
    assert repairer.repair(again, diagnosis, context) is None  # once per package

    # yarn and pnpm read their own override fields; a declared @types package is pinned where
    # it is declared, within its range
    assert [(e.path, e.name) for e in _repaired(_plan("yarn", "1.22.19"), diagnosis, root)[0]
            .edits] == [(["resolutions"], "@types/node")]
    assert [(e.path, e.name) for e in _repaired(_plan("pnpm", "8.15.9"), diagnosis, root)[0]
            .edits] == [(["pnpm", "overrides"], "@types/node")]
    on_node14 = _plan("npm", npm)
    assert on_node14.node is not None
    on_node14.node.version = "14.16.1"  # Node's own declarations: none newer than its major
    node, _ = _repaired(on_node14, diagnosis, root)
    assert node.edits[0].spec.startswith("14.") and ", of <15)" in node.pinned["@types/node"]
    declared = _project(tmp_path / "d", {"typescript": "~4.3.5", "@types/node": ">=14"})
    node, _ = _repaired(plan, diagnosis, declared)
    assert [(e.path, e.name, e.spec, e.was) for e in node.edits] == [
        (["devDependencies"], "@types/node", edit.spec, ">=14")]

    # an npm without overrides: a devDependency of the same name, which npm dedupes to
    fresh = _project(tmp_path / "o", {"typescript": "~4.3.5", "@types/graceful-fs": "*"})
    node, _ = _repaired(_plan("npm", "6.14.18"), diagnosis, fresh)
    assert [(e.path, e.name, e.spec) for e in node.edits] == [
        (["devDependencies"], "@types/node", edit.spec)]
    built = _build(node, fresh)
    assert built.ok, built.output[-2000:]
    assert _installed(fresh, "@types/node") == {edit.spec}


def test_a_type_library_whose_newest_version_is_a_stub_is_pinned_for_the_compiler(
        tmp_path: Path) -> None:
    # npm 6 and yarn take the newest of "*" even when deprecated: @types/minimatch's newest is a
    # stub without declarations, and tsc 4.3 stops on the implicit type library it cannot read
    root = _project(tmp_path / "p", {"typescript": "~4.3.5", "@types/glob": "7.1.3"})
    failed = ExecResult(command="npm run build", returncode=2, output=(
        "> tsc\n\x1b[91merror\x1b[0m\x1b[90m TS2688: \x1b[0mCannot find type definition file for "
        "'minimatch'.\n  The file is in the program because:\n    Entry point for implicit type "
        "library 'minimatch'\nFound 1 error.\nnpm ERR! code ELIFECYCLE\n"))
    plan = _plan("npm", "6.14.18")
    diagnosis = NodeRepairer().diagnose(plan, failed, "install", read_node_context(root))
    assert (diagnosis.kind, diagnosis.facts["type_libraries"]) == (
        "project_build_failed", ["minimatch"])
    node, _ = _repaired(plan, diagnosis, root)
    [edit] = node.edits
    versions = packument("@types/minimatch", full=True)["versions"]
    assert (edit.path, edit.name) == (["devDependencies"], "@types/minimatch")
    assert not versions[edit.spec].get("deprecated") and versions[edit.spec]["types"]
    assert "is a deprecated stub without declarations" in node.pinned["@types/minimatch"]

    # a library whose newest version has declarations is not the types' fault: no pin
    missing = ExecResult(command="tsc", returncode=2, output=(
        "error TS2688: Cannot find type definition file for 'glob'.\n"))
    diagnosis = NodeRepairer().diagnose(plan, missing, "install", read_node_context(root))
    assert NodeRepairer().repair(plan, diagnosis, read_node_context(root)) is None
