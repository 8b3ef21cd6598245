"""Build-step rules on real npm installs: a step running a program of a dependency a rule left
out is left out too (registry stand-in on 127.0.0.1), and a TypeScript build that fails on the
project's own sources under the newest compiler an undated range allows is built again with the
compiler line of the range's lower bound (the real registry's typescript)."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchsmith.core import ExecResult, NodePlan, NodeTestRun, Plan
from benchsmith.setup.node.build_repairs import repair_typescript_line
from benchsmith.setup.node.context import read_node_context
from benchsmith.setup.node.declared import render_edits
from benchsmith.setup.node.repair import NodeRepairer
from benchsmith.testing.fake_npm_registry import FakeNpmRegistry, FakePackage

DAY = dt.datetime(2020, 3, 1, tzinfo=dt.timezone.utc)
# a README checker whose program is not named like the package, depending on a fork on GitHub
CHECKER = FakePackage("readme-samples", {"1.0.0": DAY},
                      dependencies={"1.0.0": {"fs-helpers": "someone/fs-helpers#enhanced"}},
                      bins={"check-samples": "cli.js"})
LINTER = FakePackage("pretty-lint", {"1.0.0": DAY}, bins={"pretty-lint": "bin.js"})
# catches a thrown value as Error: TypeScript 4.4 and later type it `unknown` under strict
SOURCE = """export function message(run: () => void): string {
  try {
    run();
    return "ok";
  } catch (error) {
    const failure: Error = error;
    return failure.message;
  }
}
"""


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeNpmRegistry]:
    assert shutil.which("npm"), "npm is needed (Debian's `npm` package)"
    with FakeNpmRegistry([CHECKER, LINTER]) as served:
        monkeypatch.setenv("npm_config_registry", served.url)
        monkeypatch.setenv("npm_config_fetch_retries", "0")
        monkeypatch.setenv("GIT_TERMINAL_PROMPT", "0")
        monkeypatch.setenv("GIT_SSH_COMMAND", "ssh -o BatchMode=yes -o ConnectTimeout=3")
        yield served


@pytest.fixture(autouse=True)
def npm_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    for name in ("audit", "fund", "update_notifier"):
        monkeypatch.setenv(f"npm_config_{name}", "false")


def _plan(**node: object) -> Plan:
    fields: dict[str, object] = {
        "version": "20.20.0", "line": "20", "manager": "npm",
        "tests": NodeTestRun(runner="mocha", command=["mocha"], report_format="mocha-json")}
    fields.update(node)
    return Plan(ecosystem="node", runner="node", python="3.11",
                exclude_newer="2021-06-01T00:00:00Z", node=NodePlan.model_validate(fields))


def _project(root: Path, package: dict[str, object]) -> Path:
    root.mkdir(parents=True)
    (root / "package.json").write_text(json.dumps({"name": "demo", "version": "1.0.0", **package}))
    return root


def _run(command: str, cwd: Path) -> ExecResult:
    done = subprocess.run(command, shell=True, cwd=cwd, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=600, env=os.environ)
    return ExecResult(command=command, returncode=done.returncode, output=done.stdout)


def _repaired(plan: Plan, failed: ExecResult, root: Path, kind: str) -> tuple[NodePlan, str]:
    assert not failed.ok, failed.output[-2000:]
    repairer, context = NodeRepairer(), read_node_context(root)
    diagnosis = repairer.diagnose(plan, failed, "install", context)
    assert diagnosis.kind == kind, diagnosis
    repaired = repairer.repair(plan, diagnosis, context)
    assert repaired is not None and repaired[0].node is not None, diagnosis
    return repaired[0].node, repaired[1]


def _build(node: NodePlan, root: Path) -> ExecResult:
    """The repaired install and the plan's build steps, as the setup runs them."""
    steps = [*render_edits(node.edits), "npm install",
             *(f"PATH=$PWD/node_modules/.bin:$PATH {step}" for step in node.build)]
    return _run(" && ".join(steps), root)


def test_build_steps_running_a_left_out_tool_are_left_out(registry: FakeNpmRegistry,
                                                          tmp_path: Path) -> None:
    root = _project(tmp_path / "p", {
        "scripts": {"docs": "check-samples README.md && pretty-lint src", "test": "mocha"},
        "devDependencies": {"readme-samples": "^1.0.0", "pretty-lint": "^1.0.0"}})
    # an npm without overrides: the checker, whose dependency comes from git, is left out
    plan = _plan(manager_version="6.14.18", build=["npm run docs"])
    node, description = _repaired(plan, _run("npm install", root), root, "direct_url_unreachable")
    assert "fs-helpers comes from someone/fs-helpers#enhanced" in node.dropped["readme-samples"]
    assert node.build == ["pretty-lint src"]  # the script's other command stays
    assert node.left_out_steps["npm run docs"].startswith(
        "runs `check-samples` of readme-samples, which was left out: devDependencies left out")
    assert "build steps left out: `npm run docs`" in description
    assert plan.node is not None and node.tests == plan.node.tests  # the test command stays
    built = _build(node, root)
    assert built.ok and "pretty-lint 1.0.0" in built.output, built.output[-2000:]

    # the same left-out tool met when its step fails: `check-samples: not found`
    direct = _plan(manager_version="6.14.18", build=["check-samples README.md", "pretty-lint src"],
                   dropped=node.dropped, edits=node.edits)
    assert direct.node is not None
    failed = _build(direct.node, root)
    assert "check-samples: not found" in failed.output, failed.output[-2000:]
    node, description = _repaired(direct, failed, root, "missing_programs")
    assert node.build == ["pretty-lint src"]
    assert "readme-samples, which was left out" in node.left_out_steps["check-samples README.md"]
    assert _build(node, root).ok


@pytest.mark.slow
def test_an_undated_typescript_failing_on_own_sources_gets_its_lower_bound_line(
        tmp_path: Path) -> None:
    assert shutil.which("npm"), "npm is needed (Debian's `npm` package)"
    root = _project(tmp_path / "p", {"scripts": {"build": "tsc", "test": "mocha"},
                                     "devDependencies": {"typescript": "^4.3.5"}})
    (root / "src").mkdir()
    (root / "src" / "index.ts").write_text(SOURCE)
    (root / "tsconfig.json").write_text(json.dumps({"compilerOptions": {
        "outDir": "dist", "module": "commonjs", "strict": True}, "include": ["src"]}))
    plan = _plan(dating="not-dated", build=["npm run build"])
    assert plan.node is not None
    failed = _build(plan.node, root)  # the newest 4.x
    assert "error TS2322" in failed.output, failed.output[-2000:]
    pretty = _run("node_modules/.bin/tsc --pretty", root)
    repairer, context = NodeRepairer(), read_node_context(root)
    assert repairer.diagnose(plan, pretty, "install", context).facts["files"] == ["src/index.ts"]

    node, description = _repaired(plan, failed, root, "project_build_failed")
    assert node.pinned["typescript"].startswith("^4.3.5 -> 4.3.5 (typescript 4.9.")
    assert "the line of the range's lower bound" in node.pinned["typescript"]
    assert [(e.name, e.spec, e.was) for e in node.edits] == [("typescript", "4.3.5", "^4.3.5")]
    assert "pin typescript" in description
    built = _build(node, root)
    assert built.ok, built.output[-2000:]
    assert json.loads((root / "node_modules/typescript/package.json").read_text())["version"] \
        == "4.3.5"
    assert (root / "dist" / "index.js").is_file()

    diagnosis = repairer.diagnose(plan, failed, "install", context)
    again = plan.model_copy(update={"node": node})
    assert repairer.repair(again, diagnosis, context) is None  # once
    dated = _plan(dating="history-lockfile", build=["npm run build"])
    assert repairer.repair(dated, diagnosis, context) is None  # a dated install keeps its own
    in_dependencies = ExecResult(command="tsc", returncode=2, output=(
        "node_modules/@types/node/globals.d.ts(72,13): error TS1005: ';' expected.\n"))
    theirs = repairer.diagnose(plan, in_dependencies, "install", context)
    assert (theirs.kind, theirs.facts["files"]) == ("project_build_failed", [])
    fresh = plan.model_copy(deep=True)
    assert fresh.node is not None and not fresh.node.pinned
    assert repair_typescript_line(fresh, fresh.node, theirs, context) is None  # not its own
    both = ExecResult(command="tsc", returncode=2, output=in_dependencies.output + failed.output)
    facts = repairer.diagnose(plan, both, "install", context).facts
    assert facts["files"] == ["src/index.ts"]
    assert facts["dependency_files"] == ["node_modules/@types/node/globals.d.ts"]
