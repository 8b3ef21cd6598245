"""A dependency's install script that cannot download from its host: diagnosed from npm's,
yarn's and pnpm's logs (not a native build, not a registry or git fetch), repaired by an
install with lifecycle scripts off, the native addons rebuilt and the project's own prepare run."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from benchsmith.core import ExecResult, NodePlan, NodeTestRun, Plan
from benchsmith.harness.npm_registry import fetch_package
from benchsmith.setup.node.context import NodeContext, read_node_context
from benchsmith.setup.node.ecosystem import NodeEcosystem
from benchsmith.setup.node.repair import NodeRepairer

from .conftest import RepoBuilder

HOST = "downloads.example.invalid"
TRACE = "    at GetAddrInfoReqWrap.onlookup [as oncomplete] (dns.js:67:26)\n"
NPM6 = (f"> tool-binary@2.1.16 install /repo/node_modules/tool-binary\n> node install.js\n\n"
        f"Downloading https://{HOST}/v2.1.1/tool-2.1.1-linux-x86_64.tar.bz2\n"
        f"Error making request.\nError: getaddrinfo ENOTFOUND {HOST} {HOST}:443\n{TRACE}\n"
        "npm ERR! code ELIFECYCLE\nnpm ERR! errno 1\n"
        "npm ERR! tool-binary@2.1.16 install: `node install.js`\nnpm ERR! Exit status 1\n"
        "npm ERR! \nnpm ERR! Failed at the tool-binary@2.1.16 install script.\n")
NPM8 = ("npm ERR! code 1\nnpm ERR! path /repo/node_modules/@tools/driver\n"
        "npm ERR! command failed\nnpm ERR! command sh -c node install.js\n"
        f"npm ERR! Downloading http://{HOST}/driver.zip\n"
        f"npm ERR! Error: getaddrinfo EAI_AGAIN {HOST}\n")
NPM10 = ("npm error code 1\nnpm error path /repo/node_modules/a/node_modules/tool-binary\n"
         "npm error command failed\nnpm error command sh -c node install.js\n"
         "npm error Error: connect ECONNREFUSED 10.1.2.3:443\n")
YARN = ("[4/4] Building fresh packages...\n"
        "error /repo/node_modules/tool-binary: Command failed.\nExit code: 1\n"
        "Command: node install.js\nArguments: \nDirectory: /repo/node_modules/tool-binary\n"
        f"Output:\nDownloading https://{HOST}/tool.tar.bz2\nError making request.\n"
        f"Error: getaddrinfo ENOTFOUND {HOST}\n{TRACE}"
        "info Visit https://yarnpkg.com/en/docs/cli/install for documentation about this command.\n")
PNPM = ("node_modules/.pnpm/tool-binary@2.1.16/node_modules/tool-binary: Running install script, "
        "failed in 212ms\n.../node_modules/tool-binary install$ node install.js\n"
        f".../node_modules/tool-binary install: Error: getaddrinfo ENOTFOUND {HOST}\n"
        ".../node_modules/tool-binary install: Failed\n"
        " ELIFECYCLE  Command failed with exit code 1.\n")


def _plan(**node: Any) -> Plan:
    fields: dict[str, Any] = {"version": "18.16.0", "line": "18", "manager": "yarn",
                              "manager_version": "1.22.19", "dating": "lockfile",
                              "lockfile": "yarn.lock",
                              "tests": NodeTestRun(runner="node", command=["node", "--test"],
                                                   report_format="tap-files")}
    fields.update(node)
    return Plan(ecosystem="node", runner="node", python="3.11",
                exclude_newer="2023-06-01T00:00:00Z", node=NodePlan.model_validate(fields))


def _diagnose(log: str) -> Any:
    failed = ExecResult(command="install", returncode=1, output=log)
    return NodeRepairer().diagnose(_plan(), failed, "install", None)


@pytest.mark.parametrize(("log", "package", "hosts"), [
    (NPM6, "tool-binary", [HOST]), (NPM8, "@tools/driver", [HOST]),
    (NPM10, "tool-binary", ["10.1.2.3"]), (YARN, "tool-binary", [HOST]),
    (PNPM, "tool-binary", [HOST])], ids=["npm6", "npm8", "npm10", "yarn-classic", "pnpm"])
def test_an_install_script_that_cannot_download_is_named_in_every_manager_log(
        log: str, package: str, hosts: list[str]) -> None:
    diagnosis = _diagnose(log)
    assert diagnosis.kind == "script_download_failed", diagnosis
    assert diagnosis.facts == {"packages": [package], "hosts": hosts}
    assert package in diagnosis.reason and hosts[0] in diagnosis.reason


def test_native_builds_and_registry_fetches_keep_their_own_diagnoses() -> None:
    native = ("gyp info it worked if it ends with ok\ngyp ERR! stack Error: `make` failed\n"
              "error /repo/node_modules/addon: Command failed.\nExit code: 1\n"
              f"Output:\nError: getaddrinfo ENOTFOUND {HOST}\n")
    assert _diagnose(native).kind != "script_download_failed"
    registry = ("npm ERR! code EAI_AGAIN\nnpm ERR! syscall getaddrinfo\nnpm ERR! errno EAI_AGAIN\n"
                "npm ERR! request to https://registry.npmjs.org/left-pad failed, reason: "
                "getaddrinfo EAI_AGAIN registry.npmjs.org\n")
    assert _diagnose(registry).kind == "install_failed"
    git = "error Error: getaddrinfo ENOTFOUND codeload.github.com\n"
    assert _diagnose(git).kind == "direct_url_unreachable"
    failing = ("npm ERR! code 1\nnpm ERR! path /repo/node_modules/tool-binary\n"
               "npm ERR! command failed\nnpm ERR! command sh -c node check.js\n"
               "npm ERR! Error: unsupported platform\n")
    assert _diagnose(failing).kind == "install_failed"


def test_the_repair_turns_scripts_off_once_and_keeps_the_projects_prepare() -> None:
    context = NodeContext(repo_root=".", scripts={"prepare": "node scripts/gen.js",
                                                  "test": "node --test"})
    repairer = NodeRepairer()
    for manager, berry, flag in [("yarn", False, "--ignore-scripts"), ("npm", False,
                                                                         "--ignore-scripts"),
                                 ("yarn", True, "YARN_ENABLE_SCRIPTS=0 ")]:
        plan = _plan(manager=manager, berry=berry, manager_version="4.0.2" if berry else "9.5.1")
        repaired = repairer.repair(plan, _diagnose(YARN), context)
        assert repaired is not None
        fixed, _ = repaired
        assert fixed.node is not None
        assert fixed.node.scripts_off == {"tool-binary": f"its install script could not download "
                                                         f"from {HOST}"}
        assert any("install scripts off: tool-binary" in note for note in fixed.notes)
        install, _ = NodeEcosystem().render(fixed)
        command = next(line for line in install if line.startswith(("yarn", "npm", "YARN")))
        assert flag in command
        rebuild = install[install.index(command) + 1]
        assert "binding.gyp" in rebuild and '["tool-binary"]' in rebuild
        assert ("npm@9.5.1" in rebuild) == (manager == "yarn" and not berry)
        # yarn 2+ runs no prepare of the project on install: nothing to make up for
        after = install[install.index(command) + 2:]
        assert after == ([] if berry else ["PATH=\"$PWD/node_modules/.bin:$PATH\" sh -c "
                                           "'node scripts/gen.js'"])
        assert repairer.repair(fixed, _diagnose(YARN), context) is None


# -- a real install: a dependency's download fails, a native addon and prepare are still built --

def _tarball(path: Path, files: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"package/{name}")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))


FETCHER = {
    "package.json": json.dumps({"name": "fetcher", "version": "1.0.0", "main": "index.js",
                                "scripts": {"install": "node install.js"}}),
    "index.js": "module.exports = 'fetcher';\n",
    "install.js": f"""var http = require('http');
console.log('Downloading http://{HOST}/fetcher-1.0.0-linux-x64.tar.gz');
http.get('http://{HOST}/fetcher-1.0.0-linux-x64.tar.gz', function () {{ process.exit(0); }})
  .on('error', function (err) {{
    console.error('Error making request.');
    console.error(err.stack);
    process.exit(1);
  }});
"""}
ADDER = {
    "package.json": json.dumps({"name": "adder", "version": "1.0.0", "main": "index.js"}),
    "binding.gyp": json.dumps({"targets": [{"target_name": "adder", "sources": ["adder.c"]}]}),
    "index.js": "module.exports = require('./build/Release/adder.node');\n",
    "adder.c": """#include <node_api.h>
static napi_value Add(napi_env env, napi_callback_info info) {
  size_t argc = 2; napi_value args[2]; double a, b; napi_value sum;
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  napi_get_value_double(env, args[0], &a);
  napi_get_value_double(env, args[1], &b);
  napi_create_double(env, a + b, &sum);
  return sum;
}
static napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "add", NAPI_AUTO_LENGTH, Add, NULL, &fn);
  napi_set_named_property(env, exports, "add", fn);
  return exports;
}
NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
"""}
PROJECT_TEST = """const { test } = require('node:test');
const assert = require('node:assert');
test('the native addon adds', () => { assert.strictEqual(require('adder').add(2, 3), 5); });
test('prepare generated the table', () => {
  assert.deepStrictEqual(require('../lib/generated.js'), [1, 2, 3]);
});
test('the dependency itself loads', () => { assert.strictEqual(require('fetcher'), 'fetcher'); });
"""


def _yarn_project(tmp_path: Path) -> tuple[RepoBuilder, Path]:
    """A yarn classic project, locked: a dependency whose install script downloads from a host
    out of reach, one with a native addon, and its own prepare generating a module its tests
    read; and the directory of the yarn that locked it."""
    repo = RepoBuilder(tmp_path / "app")
    _tarball(repo.path / "vendor" / "fetcher-1.0.0.tgz", FETCHER)
    _tarball(repo.path / "vendor" / "adder-1.0.0.tgz", ADDER)
    package = {"name": "app", "version": "1.0.0", "engines": {"node": ">=18"},
               "scripts": {"prepare": "node scripts/gen.js", "test": "node --test test/"},
               "dependencies": {"fetcher": "file:./vendor/fetcher-1.0.0.tgz",
                                "adder": "file:./vendor/adder-1.0.0.tgz"}}
    (repo.path / "package.json").write_text(json.dumps(package, indent=2))
    yarn = fetch_package("yarn", "1.22.19", tmp_path / "pkgs")
    locked = subprocess.run(["node", str(yarn / "bin" / "yarn.js"), "install", "--ignore-scripts",
                             "--non-interactive"], cwd=repo.path, capture_output=True, text=True,
                            timeout=300)
    assert locked.returncode == 0, locked.stdout + locked.stderr
    shutil.rmtree(repo.path / "node_modules")
    repo.commit({".gitignore": "node_modules/\nlib/\n",
                 "scripts/gen.js": "const fs = require('fs');\nfs.mkdirSync('lib', "
                                   "{ recursive: true });\nfs.writeFileSync('lib/generated.js', "
                                   "'module.exports = [1, 2, 3];\\n');\n",
                 "test/app.test.js": PROJECT_TEST}, "app", date="2023-05-01T12:00:00+00:00")
    return repo, yarn


@pytest.mark.slow
def test_a_dependency_download_out_of_reach_installs_with_scripts_off(
        tmp_path: Path, shared_node: None) -> None:
    repo, _ = _yarn_project(tmp_path)
    out = tmp_path / "setup.json"
    run = subprocess.run([sys.executable, "-m", "benchsmith.cli", "setup", str(repo.path), "--out",
                          str(out), "--no-refdb", "--date", "2023-06-01"], capture_output=True,
                         text=True, timeout=1800)
    assert out.is_file(), run.stdout + run.stderr
    record = json.loads(out.read_text())
    kinds = [(i.get("diagnosis") or {}).get("kind") for i in record["iterations"]]
    assert record["status"] == "validated", (kinds, record.get("failure_reason"))
    assert record["node"]["manager"] == "yarn" and kinds[0] == "script_download_failed"
    assert record["node"]["scripts_off"] == {
        "fetcher": f"its install script could not download from {HOST}"}
    assert record["tests"]["PASSED"] == 3
    assert any("install scripts off: fetcher" in note for note in record["plan"]["notes"])
    assert any("--ignore-scripts" in line for line in record["install"])


@pytest.mark.slow
def test_the_setupbench_agent_installs_with_scripts_off_through_the_engines_repair(
        tmp_path: Path) -> None:
    """The `benchsmith` SetupBench agent takes the engine's repair, yarn included: the install
    with scripts off, the native addon rebuilt (yarn classic has no rebuild: npm's), the project's
    own prepare run; here on the host with Debian's Node and its headers."""
    import time

    from benchsmith.sandbox.local import LocalSandbox
    from benchsmith.setup.node.managers import choose_manager
    from benchsmith.setupbench.engine_agent import _Run
    from benchsmith.setupbench.node_agent import _install_dependencies
    from benchsmith.setupbench.node_dependencies import DependencyRepairs

    node = shutil.which("node")
    headers = Path(node or "/usr/bin/node").resolve().parent.parent / "include" / "node"
    if node is None or not (headers / "node_api.h").is_file():
        pytest.fail("this test needs Debian's nodejs with its headers (include/node/node_api.h)")
    repo, yarn = _yarn_project(tmp_path)
    launchers = tmp_path / "bin"
    launchers.mkdir()
    (launchers / "yarn").write_text(f'#!/bin/sh\nexec node {yarn / "bin" / "yarn.js"} "$@"\n')
    (launchers / "yarn").chmod(0o755)
    version = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout
    ctx = read_node_context(repo.path)
    manager = choose_manager(ctx, version.strip().lstrip("v"))
    assert (manager.name, manager.berry) == ("yarn", False)
    with LocalSandbox() as sandbox:
        run = _Run(sandbox, time.monotonic() + 900, "host")
        run.cwd = str(repo.path)
        run.env.update({"PATH": f"{launchers}:{os.environ['PATH']}",
                        "npm_config_nodedir": str(headers.parent.parent)})
        repairs = DependencyRepairs(repo.path, ctx, manager, version.strip().lstrip("v"),
                                    "2023-06-01")
        install = _install_dependencies(run, manager, repairs)
        commands = [c["command"] for c in run.commands]
        assert install["ok"], (commands, run.last_output[-2000:])
        assert any(c.startswith("yarn install") and c.endswith("--ignore-scripts")
                   for c in commands), commands
        assert any("install scripts off" in r and "fetcher" in r for r in install["relaxations"])
        assert "native addons rebuilt from source" in install["relaxations"], install
        assert repairs.node.scripts_off == {
            "fetcher": f"its install script could not download from {HOST}"}
        tests = subprocess.run(["node", "--test", "test/"], cwd=repo.path, capture_output=True,
                               text=True, timeout=300)
    assert tests.returncode == 0, tests.stdout + tests.stderr  # addon built, prepare run
