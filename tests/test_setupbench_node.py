"""The `benchsmith` agent on a JavaScript repository task: a self-built repository with a
package.json, a lockfile and a build step its README documents, in a real container."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchsmith.setup.node.context import read_node_context
from benchsmith.setupbench.node_steps import documented_steps

from .conftest import RepoBuilder

OK = ' && echo "Setup successful" || echo "Setup failed"'
MS_INTEGRITY = ("sha512-6FlzubTLZG3J2a/NVCAleEhjzq5oxgHyaCU9yYXvcLsvoVaHJq/s5xXI6/XXP6tz7R9xAOtHnSO"
                "/tXtF3WRTlA==")
PACKAGE_JSON = {"name": "durations", "version": "1.0.0", "private": True,
                "engines": {"node": ">=18"},
                "scripts": {"build": "node scripts/build.js", "start": "node dist/cli.js"},
                "dependencies": {"ms": "2.1.3"}}
LOCKFILE = {"name": "durations", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
            "packages": {
                "": {"name": "durations", "version": "1.0.0", "dependencies": {"ms": "2.1.3"},
                     "engines": {"node": ">=18"}},
                "node_modules/ms": {"version": "2.1.3",
                                    "resolved": "https://registry.npmjs.org/ms/-/ms-2.1.3.tgz",
                                    "integrity": MS_INTEGRITY}}}
BUILD = """\
const fs = require("fs");
fs.mkdirSync("dist", { recursive: true });
const source = fs.readFileSync("src/cli.js", "utf8");
fs.writeFileSync("dist/cli.js", "// built\\n" + source);
"""
CLI = """\
const ms = require("ms");
console.log(ms(Number(process.argv[2] || 86400000), { long: true }));
"""
README = """\
# durations

Prints a duration in words.

## Development

```sh
npm install
npm run build
node dist/cli.js 60000
```
"""


def _fixture(root: Path) -> tuple[RepoBuilder, str]:
    repo = RepoBuilder(root)
    base = repo.commit({"package.json": json.dumps(PACKAGE_JSON, indent=2) + "\n",
                        "package-lock.json": json.dumps(LOCKFILE, indent=2) + "\n",
                        "scripts/build.js": BUILD, "src/cli.js": CLI, "README.md": README,
                        ".gitignore": "node_modules/\ndist/\n"},
                       "durations", date="2024-05-02T12:00:00+00:00")
    return repo, base


def test_the_documented_build_steps_of_a_node_repository(tmp_path: Path) -> None:
    repo, _ = _fixture(tmp_path / "durations")
    (repo.path / "bin").mkdir()
    (repo.path / "bin" / "setup").write_text("#!/bin/sh\nnpm install\n")
    (repo.path / "CONTRIBUTING.md").write_text("Run `bin/setup` once:\n\n    $ bin/setup\n"
                                               "    $ npm install ms\n    $ npm run start\n")
    steps = documented_steps(repo.path, read_node_context(repo.path))
    assert [(s.command, s.reason) for s in steps] == [
        ("npm run build", "README.md shows `npm run build`"),
        ("bash bin/setup", "CONTRIBUTING.md runs bin/setup")]


def _cli(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchsmith.cli", "setupbench", *args],
                          capture_output=True, text=True, timeout=timeout)


def _result(path: Path) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(path.read_text().splitlines()[0])
    return record


@pytest.mark.docker
@pytest.mark.slow
def test_the_benchsmith_agent_sets_up_a_javascript_repository(tmp_path: Path) -> None:
    _, base = _fixture(tmp_path / "mirrors" / "fixture+durations" / "repo")
    # a fresh login shell must find node; the compiled output must run with the dependency
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({
        "instance_id": "durations", "task_type": "reposetup", "base_image": "ubuntu:22.04",
        "repo_url": "https://github.com/fixture/durations", "base_commit": base,
        "problem_statement": "Set up the repository and build it.",
        "success_command": '[ "$(node dist/cli.js 60000)" = "1 minute" ]' + OK}) + "\n")
    results = {}
    for agent in ("benchsmith", "noop"):
        out = tmp_path / f"{agent}.jsonl"
        done = _cli("run", str(tasks), "--agent", agent, "--mirrors", str(tmp_path / "mirrors"),
                    "--timeout", "900", "--out", str(out), timeout=1500)
        assert done.returncode == 0, done.stderr
        results[agent] = _result(out)
    assert results["noop"]["verdict"] == "failed", results["noop"]
    result = results["benchsmith"]
    assert result["verdict"] == "success", (result, Path(result["logs"]["agent"]).read_text()[-3000:])
    node = result["metrics"]["node"]
    assert node["node"]["line"] == "20" and node["node"]["source"] == "engines.node", node
    assert node["manager"]["name"] == "npm" and node["install"]["command"] == "npm ci", node
    assert node["build"][0]["command"] == "npm run build" and node["build"][0]["ok"], node
    commands = [c["command"] for c in result["metrics"]["commands"]]
    assert "npm ci" in commands and "npm run build" in commands, commands


@pytest.mark.docker
@pytest.mark.slow
def test_the_benchsmith_agent_moves_a_locked_version_the_registry_lacks(tmp_path: Path) -> None:
    """The lockfile pins ms 2.1.99, which the registry never had: `npm ci` and `npm install`
    both fetch it (404); the engine's rule moves package.json to the nearest published version
    ^2.1.0 allows, the unfrozen install then succeeds, and the change is recorded."""
    repo, _ = _fixture(tmp_path / "mirrors" / "fixture+durations" / "repo")
    package = {**PACKAGE_JSON, "dependencies": {"ms": "^2.1.0"}}
    lock: dict[str, Any] = json.loads(json.dumps(LOCKFILE))
    lock["packages"][""]["dependencies"] = {"ms": "^2.1.0"}
    lock["packages"]["node_modules/ms"] = {
        "version": "2.1.99", "resolved": "https://registry.npmjs.org/ms/-/ms-2.1.99.tgz"}
    base = repo.commit({"package.json": json.dumps(package, indent=2) + "\n",
                        "package-lock.json": json.dumps(lock, indent=2) + "\n"},
                       "ms 2.1.99", date="2024-05-03T12:00:00+00:00")
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({
        "instance_id": "durations-unpublished", "task_type": "reposetup",
        "base_image": "ubuntu:22.04", "repo_url": "https://github.com/fixture/durations",
        "base_commit": base, "problem_statement": "Set up the repository and build it.",
        "success_command": '[ "$(node dist/cli.js 60000)" = "1 minute" ]' + OK}) + "\n")
    out = tmp_path / "benchsmith.jsonl"
    done = _cli("run", str(tasks), "--agent", "benchsmith", "--mirrors", str(tmp_path / "mirrors"),
                "--timeout", "900", "--out", str(out), timeout=1500)
    assert done.returncode == 0, done.stderr
    result = _result(out)
    log = Path(result["logs"]["agent"]).read_text()
    assert result["verdict"] == "success", (result, log[-3000:])
    install = result["metrics"]["node"]["install"]
    assert install["ok"] and install["command"] == "npm install", install
    assert list(install["replaced"]) == ["ms"] and "2.1.3" in install["replaced"]["ms"], install
    [repair] = install["repairs"]
    assert repair["kind"] == "not_in_registry" and repair["ok"], repair
    assert [(e["name"], e["was"], e["spec"]) for e in repair["edits"]] == [("ms", "^2.1.0", "2.1.3")]
    assert any(n.startswith("replaced ms in package.json: ^2.1.0 -> 2.1.3")
               for n in result["metrics"]["notes"]), result["metrics"]["notes"]
