"""Node diagnosis and repair on real outputs: npm, node-gyp and node run against small projects
written by the tests; each repair's plan change, and where cheap the repaired command, checked."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from benchsmith.core import Diagnosis, ExecResult, NodePlan, NodeTestRun, Plan
from benchsmith.harness.node_fetch import NodeInstall, provide_node
from benchsmith.setup.node.context import read_node_context
from benchsmith.setup.node.repair import NodeRepairer

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="needs node and npm")

NODE = shutil.which("node") or "node"
NPM = shutil.which("npm") or "npm"
# the host node's own headers (node-gyp would download them otherwise)
NODEDIR = str(Path(NODE).resolve().parent.parent)
ADDON_GYP = {"targets": [{"target_name": "hello", "sources": ["hello.cc"]}]}
ADDON_CC = """#include <node_api.h>
{include}
napi_value Init(napi_env env, napi_value exports) {{ return exports; }}
NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
"""


def _plan(**node: object) -> Plan:
    fields: dict[str, object] = {"version": "20.20.0", "line": "20",
                                 "tests": NodeTestRun(runner="node", command=["node", "--test"],
                                                      report_format="tap-files")}
    fields.update(node)
    return Plan(ecosystem="node", runner="node", python="3.11",
                exclude_newer="2025-06-01T00:00:00Z", node=NodePlan.model_validate(fields))


def _write(root: Path, files: dict[str, object]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content, indent=2))
    return root


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None,
         timeout: float = 300) -> ExecResult:
    done = subprocess.run(command, cwd=cwd, env={**os.environ, **(env or {})}, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    return ExecResult(command=" ".join(command), returncode=done.returncode, output=done.stdout)


def _diagnose(result: ExecResult, phase: str, plan: Plan | None = None,
              root: Path | None = None) -> Diagnosis:
    assert not result.ok, result.output[-2000:]
    context = read_node_context(root) if root else None
    return NodeRepairer().diagnose(plan or _plan(), result, phase, context)


def _path_without(tmp: Path, *excluded: str) -> str:
    """A PATH directory holding the machine's programs but `excluded` (and a python3)."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for directory in ("/usr/local/bin", "/usr/bin", "/bin"):
        for program in Path(directory).glob("*"):
            name = program.name
            if (bin_dir / name).exists() or any(name == e or name.endswith("-" + e) or
                                                name.startswith(e + "-") for e in excluded):
                continue
            (bin_dir / name).symlink_to(program.resolve() if name.startswith("python") else program)
    if "python3" not in excluded:
        python = subprocess.run(["python3", "-c", "import os, sys; print(os.path.realpath("
                                 "sys.executable))"], capture_output=True, text=True, check=True)
        (bin_dir / "python3").unlink(missing_ok=True)
        (bin_dir / "python3").symlink_to(python.stdout.strip())
    for name in excluded:
        (bin_dir / name).unlink(missing_ok=True)
    return str(bin_dir)


def _addon_project(root: Path, include: str = "", gyp: dict[str, object] | None = None) -> Path:
    return _write(root, {
        "package.json": {"name": "uses-addon", "version": "1.0.0",
                         "dependencies": {"hello-addon": "file:./addon"}},
        "addon/package.json": {"name": "hello-addon", "version": "1.0.0",
                               "scripts": {"install": "node-gyp rebuild"}},
        "addon/binding.gyp": gyp or ADDON_GYP,
        "addon/hello.cc": ADDON_CC.format(include=include)})


# -- 1. native builds through node-gyp ------------------------------------------------------

@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a C++ compiler")
def test_missing_header_of_a_native_addon_installs_its_debian_package(tmp_path: Path) -> None:
    root = _addon_project(tmp_path / "p", include="#include <sodium.h>")
    result = _run([NPM, "install", "--no-audit", "--no-fund"], root,
                  {"npm_config_nodedir": NODEDIR})
    diagnosis = _diagnose(result, "install")
    assert diagnosis.kind == "system_packages"
    assert diagnosis.facts["apt"] == ["libsodium-dev"]
    assert "header sodium.h" in diagnosis.facts["parts"]
    assert NodeRepairer(apt=False).repair(_plan(), diagnosis, None) is None  # no apt, no repair
    repaired = NodeRepairer(apt=True).repair(_plan(), diagnosis, None)
    assert repaired is not None and repaired[0].apt_packages == ["libsodium-dev"]


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a C++ compiler")
@pytest.mark.parametrize(("excluded", "package"), [
    (("make",), "make"), (("g++", "c++"), "g++"), (("python3", "python"), "python3")])
def test_native_build_without_a_build_tool_installs_it(tmp_path: Path, excluded: tuple[str, ...],
                                                       package: str) -> None:
    root = _addon_project(tmp_path / "p")
    path = _path_without(tmp_path, *excluded)
    result = _run([NODE, str(Path(NPM).resolve()), "install", "--no-audit", "--no-fund"], root,
                  {"PATH": path, "npm_config_nodedir": NODEDIR})
    diagnosis = _diagnose(result, "install")
    assert diagnosis.kind == "system_packages", diagnosis
    assert package in diagnosis.facts["apt"]
    repaired = NodeRepairer(apt=True).repair(_plan(), diagnosis, None)
    assert repaired is not None and package in repaired[0].apt_packages


CONFIGURE = """#!/bin/sh
# checks in the words of an autoconf-generated configure script
for program in cc nasm; do
  printf 'checking for %s... ' "$program"
  if command -v "$program" >/dev/null; then echo yes; else echo no; missing=$program; fi
done
[ -z "$missing" ] || { echo "configure: error: no $missing found" >&2; exit 1; }
"""


def test_a_configure_script_missing_an_assembler_installs_it(tmp_path: Path) -> None:
    # a dependency builds its library from sources in its install script (its prebuilt
    # binary cannot be downloaded) and configure stops on a program the system lacks
    root = _write(tmp_path / "p", {
        "package.json": {"name": "uses-jpeg", "version": "1.0.0",
                         "dependencies": {"jpeg-build": "file:./jpeg"}},
        "jpeg/package.json": {"name": "jpeg-build", "version": "1.0.0",
                              "scripts": {"install": "sh ./configure"}},
        "jpeg/configure": CONFIGURE})
    result = _run([NPM, "install", "--no-audit", "--no-fund"], root,
                  {"PATH": _path_without(tmp_path, "nasm")})
    diagnosis = _diagnose(result, "install")
    assert diagnosis.kind == "system_packages", diagnosis
    assert diagnosis.facts["apt"] == ["nasm"] and diagnosis.facts["parts"] == ["program nasm"]
    repaired = NodeRepairer(apt=True).repair(_plan(), diagnosis, None)
    assert repaired is not None and repaired[0].apt_packages == ["nasm"]


@pytest.mark.skipif(shutil.which("pkg-config") is None, reason="needs pkg-config")
def test_missing_pkg_config_module_installs_its_dev_package(tmp_path: Path) -> None:
    gyp = {"targets": [{"target_name": "hello", "sources": ["hello.cc"],
                        "libraries": ["<!@(pkg-config --libs libzmq)"]}]}
    root = _addon_project(tmp_path / "p", gyp=gyp)
    result = _run([NPM, "install", "--no-audit", "--no-fund"], root,
                  {"npm_config_nodedir": NODEDIR, "PKG_CONFIG_PATH": str(tmp_path),
                   "PKG_CONFIG_LIBDIR": str(tmp_path)})
    diagnosis = _diagnose(result, "install")
    assert diagnosis.kind == "system_packages"
    assert diagnosis.facts["apt"] == ["libzmq3-dev"]


@pytest.mark.slow
def test_python2_era_node_gyp_builds_with_python_2(tmp_path: Path) -> None:
    tools = _write(tmp_path / "tools", {"package.json": {"name": "tools", "version": "1.0.0"}})
    subprocess.run([NPM, "install", "--no-audit", "--no-fund", "node-gyp@3.8.0"], cwd=tools,
                   check=True, capture_output=True, timeout=600)
    gyp = str(tools / "node_modules" / "node-gyp" / "bin" / "node-gyp.js")
    addon = _addon_project(tmp_path / "p") / "addon"
    no_python = _run([NODE, gyp, "rebuild", f"--nodedir={NODEDIR}"], addon,
                     {"PATH": _path_without(tmp_path, "python3", "python")})
    python3 = shutil.which("python3") or "python3"
    on_python3 = _run([NODE, gyp, "rebuild", f"--nodedir={NODEDIR}", f"--python={python3}"], addon)
    for result in (no_python, on_python3):
        diagnosis = _diagnose(result, "install")
        assert diagnosis.kind == "gyp_python", diagnosis
        repaired = NodeRepairer().repair(_plan(), diagnosis, None)
        assert repaired is not None and repaired[0].python == "2.7"
        assert "node-gyp 3" in repaired[1]
        assert NodeRepairer().repair(repaired[0], diagnosis, None) is None


# -- 2. engines, 5. module formats: another Node release -------------------------------------

@pytest.fixture(scope="module")
def node18(tmp_path_factory: pytest.TempPathFactory) -> NodeInstall:
    return provide_node("18.20.4", tmp_path_factory.mktemp("node18"))


@pytest.fixture(scope="module")
def node22(tmp_path_factory: pytest.TempPathFactory) -> NodeInstall:
    return provide_node("22.12.0", tmp_path_factory.mktemp("node22"))


@pytest.mark.slow
def test_engine_mismatch_moves_to_the_next_fitting_node(tmp_path: Path, node22: NodeInstall) -> None:
    root = _write(tmp_path / "p", {
        "package.json": {"name": "p", "version": "1.0.0", "dependencies": {"dep": "file:./dep"}},
        "dep/package.json": {"name": "dep", "version": "1.0.0", "engines": {"node": ">=22.12"}}})
    result = _run([NPM, "install", "--engine-strict", "--no-audit", "--no-fund"], root)
    diagnosis = _diagnose(result, "install")
    assert diagnosis.kind == "engine_mismatch"
    assert diagnosis.facts == {"ranges": [">=22.12"], "packages": ["dep@1.0.0"]}
    plan = _plan(fallbacks=["18.20.4", "22.12.0", "24.0.0"])
    repaired = NodeRepairer().repair(plan, diagnosis, None)
    assert repaired is not None
    node = repaired[0].node
    assert node is not None and (node.version, node.line) == ("22.12.0", "22")
    assert node.fallbacks == ["18.20.4", "24.0.0"]
    assert "dep@1.0.0 needs node >=22.12" in repaired[0].notes[-1]
    assert NodeRepairer().repair(_plan(fallbacks=["18.20.4"]), diagnosis, None) is None
    npm_cli = Path(NPM).resolve()
    again = _run([node22.node, str(npm_cli), "install", "--engine-strict", "--no-audit",
                  "--no-fund"], root)
    assert again.ok, again.output[-2000:]


ESM_ONLY = {"node_modules/esm-only/package.json": {"name": "esm-only", "version": "1.0.0",
                                                   "type": "module", "exports": "./index.js"},
            "node_modules/esm-only/index.js": "export const answer = 42;\n"}


@pytest.mark.slow
@pytest.mark.parametrize(("files", "need"), [
    ({**ESM_ONLY, "test.js": "const { answer } = require('esm-only');\n"
                             "if (answer !== 42) process.exit(1);\n"}, "require-esm"),
    ({"test.js": "import { strictEqual } from 'node:assert';\nstrictEqual(1, 1);\n"},
     "module-detection")])
def test_module_format_errors_move_to_a_node_that_loads_them(
        tmp_path: Path, node18: NodeInstall, node22: NodeInstall, files: dict[str, object],
        need: str) -> None:
    root = _write(tmp_path / "p", {"package.json": {"name": "p", "version": "1.0.0",
                                                    "engines": {"node": ">=16"}}, **files})
    diagnosis = _diagnose(_run([node18.node, "test.js"], root), "test", root=root)
    assert diagnosis.kind == "module_format"
    assert diagnosis.facts == {"needs": [need]}
    plan = _plan(version="18.20.4", line="18", fallbacks=["16.20.2", "20.18.0", "22.12.0"])
    repaired = NodeRepairer().repair(plan, diagnosis, read_node_context(root))
    assert repaired is not None and repaired[0].node is not None
    assert repaired[0].node.version == "22.12.0"
    assert _run([node22.node, "test.js"], root).ok
    # a project whose engines exclude every release that could load it: diagnosed, not repaired
    _write(root, {"package.json": {"name": "p", "version": "1.0.0", "engines": {"node": "<20"}}})
    assert NodeRepairer().repair(plan, diagnosis, read_node_context(root)) is None


# -- 3. peer dependencies --------------------------------------------------------------------

@pytest.mark.slow
def test_peer_conflict_installs_with_legacy_peer_deps(tmp_path: Path) -> None:
    root = _write(tmp_path / "p", {"package.json": {
        "name": "p", "version": "1.0.0",
        "dependencies": {"react": "17.0.2", "react-dom": "18.2.0"}}})
    result = _run([NPM, "install", "--no-audit", "--no-fund"], root, timeout=600)
    diagnosis = _diagnose(result, "install")
    assert diagnosis.kind == "peer_conflict"
    assert "react@" in " ".join(diagnosis.facts["packages"])
    repaired = NodeRepairer().repair(_plan(), diagnosis, None)
    assert repaired is not None and repaired[0].node is not None
    assert repaired[0].node.install_args == ["--legacy-peer-deps"]
    assert "relaxed: --legacy-peer-deps" in repaired[0].notes[-1]
    assert NodeRepairer().repair(repaired[0], diagnosis, None) is None  # relaxed once
    again = _run([NPM, "install", "--no-audit", "--no-fund", *repaired[0].node.install_args], root,
                 timeout=600)
    assert again.ok, again.output[-2000:]


# -- 4. lockfiles ----------------------------------------------------------------------------

def test_lockfile_out_of_step_falls_to_a_non_frozen_install(tmp_path: Path) -> None:
    root = _write(tmp_path / "p", {"package.json": {"name": "p", "version": "1.0.0"},
                                   "dep/package.json": {"name": "dep", "version": "1.0.0"}})
    subprocess.run([NPM, "install", "--package-lock-only"], cwd=root, check=True,
                   capture_output=True)
    _write(root, {"package.json": {"name": "p", "version": "1.0.0",
                                   "dependencies": {"dep": "file:./dep"}}})
    diagnosis = _diagnose(_run([NPM, "ci"], root), "install")
    assert diagnosis.kind == "lockfile_unusable" and not diagnosis.facts
    plan = _plan(dating="lockfile", lockfile="package-lock.json")
    repaired = NodeRepairer().repair(plan, diagnosis, read_node_context(root))
    assert repaired is not None and repaired[0].node is not None
    node = repaired[0].node
    assert (node.dating, node.lockfile, node.history_commit) == (
        "history-lockfile", "package-lock.json", None)
    assert "dating lockfile -> history-lockfile" in repaired[0].notes[-1]
    assert _run([NPM, "install", "--no-audit", "--no-fund"], root).ok  # the non-frozen install
    # the adapted lockfile failing too: left out, npm resolves as of the date (nothing to doubt)
    again = NodeRepairer().repair(repaired[0], diagnosis, read_node_context(root))
    assert again is not None and again[0].node is not None
    assert (again[0].node.dating, again[0].node.before, again[0].node.lockfile) == (
        "before", "2025-06-01", None)
    assert NodeRepairer().repair(_plan(dating="not-dated"), diagnosis, None) is None


@pytest.fixture(scope="module")
def yarn_pnpm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """yarn classic and pnpm from the registry: their bin directory."""
    tools = _write(tmp_path_factory.mktemp("managers"), {"package.json": {"name": "t", "version": "1.0.0"}})
    subprocess.run([NPM, "install", "--no-audit", "--no-fund", "yarn@1.22.22", "pnpm@9.15.0"],
                   cwd=tools, check=True, capture_output=True, timeout=600)
    return tools / "node_modules" / ".bin"


@pytest.mark.slow
@pytest.mark.parametrize("manager", ["yarn", "pnpm"])
def test_yarn_and_pnpm_engine_and_lockfile_failures(tmp_path: Path, yarn_pnpm: Path,
                                                    manager: str) -> None:
    tool = str(yarn_pnpm / manager)
    root = _write(tmp_path / "p", {"package.json": {"name": "p", "version": "1.0.0"},
                                   "dep/package.json": {"name": "dep", "version": "1.0.0"}})
    assert _run([tool, "install"], root).ok
    _write(root, {"package.json": {"name": "p", "version": "1.0.0",
                                   "dependencies": {"dep": "file:./dep"}}})
    stale = _diagnose(_run([tool, "install", "--frozen-lockfile"], root), "install")
    assert stale.kind == "lockfile_unusable" and not stale.facts
    plan = _plan(manager=manager, dating="lockfile",
                 lockfile="yarn.lock" if manager == "yarn" else "pnpm-lock.yaml")
    repaired = NodeRepairer().repair(plan, stale, read_node_context(root))
    assert repaired is not None and repaired[0].node is not None
    assert repaired[0].node.dating == "history-lockfile"
    # a manager that cannot read a lockfile's format: the lockfile is left out, nothing dates
    # (only npm resolves as of a date)
    if manager == "pnpm":
        lock = root / "pnpm-lock.yaml"
        lock.write_text(lock.read_text().replace("lockfileVersion: '9.0'", "lockfileVersion: '99.0'"))
        unreadable = _diagnose(_run([tool, "install", "--frozen-lockfile"], root), "install")
        assert unreadable.kind == "lockfile_unusable" and unreadable.facts == {"unreadable": ["yes"]}
        left_out = NodeRepairer().repair(plan, unreadable, read_node_context(root))
        assert left_out is not None and left_out[0].node is not None
        assert (left_out[0].node.dating, left_out[0].node.lockfile) == ("not-dated", None)
    _write(root, {"dep/package.json": {"name": "dep", "version": "1.0.0",
                                       "engines": {"node": ">=22.12"}},
                  "package.json": {"name": "p", "version": "1.0.0", "engines": {"node": ">=22.12"},
                                   "dependencies": {"dep": "file:./dep"}}})
    for name in ("yarn.lock", "pnpm-lock.yaml"):
        (root / name).unlink(missing_ok=True)
    engine = _diagnose(_run([tool, "install", "--engine-strict"], root), "install")
    assert engine.kind == "engine_mismatch" and engine.facts["ranges"] == [">=22.12"]
    moved = NodeRepairer().repair(_plan(fallbacks=["18.20.4", "22.12.0"]), engine, None)
    assert moved is not None and moved[0].node is not None and moved[0].node.version == "22.12.0"


# -- 6. build output the tests load ----------------------------------------------------------

@pytest.mark.parametrize("required", ["../dist/index", ".."])
def test_tests_loading_build_output_run_the_build_script_first(tmp_path: Path, required: str) -> None:
    root = _write(tmp_path / "p", {
        "package.json": {"name": "p", "version": "1.0.0", "main": "dist/index.js",
                         "scripts": {"lint": "node -e 0", "compile": "node scripts/make-dist.js",
                                     "test": "node test/index.test.js"}},
        "scripts/make-dist.js": "const fs = require('fs');\nfs.mkdirSync('dist', "
                                "{ recursive: true });\nfs.writeFileSync('dist/index.js', "
                                "'module.exports = (a, b) => a + b;\\n');\n",
        "test/index.test.js": f"const add = require('{required}');\n"
                              "require('assert').strictEqual(add(1, 2), 3);\n"})
    diagnosis = _diagnose(_run([NPM, "test"], root), "test", root=root)
    assert diagnosis.kind == "build_output_missing"
    assert diagnosis.facts["dirs"] == ["dist"]
    repaired = NodeRepairer().repair(_plan(), diagnosis, read_node_context(root))
    assert repaired is not None and repaired[0].node is not None
    assert repaired[0].node.build == ["npm run compile"]
    for step in repaired[0].node.build:
        assert _run(["sh", "-c", step], root).ok
    assert _run([NPM, "test"], root).ok


# -- 7. programs scripts run -----------------------------------------------------------------

@pytest.mark.slow
def test_a_program_no_dependency_installs_is_added(tmp_path: Path) -> None:
    root = _write(tmp_path / "p", {"package.json": {
        "name": "p", "version": "1.0.0", "scripts": {"test": "semver 1.2.3 && node -e 0"}}})
    diagnosis = _diagnose(_run([NPM, "test"], root), "test", root=root)
    assert diagnosis.kind == "missing_programs"
    assert diagnosis.facts == {"programs": ["semver"]}
    repaired = NodeRepairer().repair(_plan(), diagnosis, read_node_context(root))
    assert repaired is not None and repaired[0].node is not None
    assert repaired[0].node.build[0].startswith("npm install --global --prefix")
    assert "semver@7." in repaired[1]
    home = {"HOME": str(tmp_path / "home")}
    assert _run(["sh", "-c", repaired[0].node.build[0]], root, home).ok
    assert _run([NPM, "test"], root, home).ok


# -- 8. heap ---------------------------------------------------------------------------------

def test_heap_exhaustion_raises_the_heap_limit(tmp_path: Path) -> None:
    root = _write(tmp_path / "p", {"grow.js": "const kept = [];\n"
                                   "for (let i = 0; i < 40; i++) kept.push(new Array(1e6).fill(i));\n"})
    diagnosis = _diagnose(_run([NODE, "--max-old-space-size=64", "grow.js"], root), "test")
    assert diagnosis.kind == "heap_exhausted"
    repaired = NodeRepairer().repair(_plan(), diagnosis, None)
    assert repaired is not None and repaired[0].node is not None
    assert repaired[0].node.memory_mb == 4096
    assert _run([NODE, f"--max-old-space-size={repaired[0].node.memory_mb}", "grow.js"], root).ok
    twice = NodeRepairer().repair(repaired[0], diagnosis, None)
    assert twice is not None and twice[0].node is not None and twice[0].node.memory_mb == 8192
    assert NodeRepairer().repair(twice[0], diagnosis, None) is None


def test_the_ecosystem_renders_what_the_repairs_recorded() -> None:
    """A repaired plan reaches the commands: the lockfile given up is removed before the
    install, the heap limit is in the tests' environment and the install's, node-gyp builds
    with the sandbox's Python, and the repairer may install Debian packages where apt is."""
    from benchsmith.harness.render import plan_spec
    from benchsmith.setup.node.ecosystem import NodeEcosystem

    plan = _plan(dating="not-dated", dropped_lockfile="package-lock.json", memory_mb=4096,
                 manager="npm", manager_version="9.5.1")
    ecosystem = NodeEcosystem(apt=True)
    install, test = ecosystem.render(plan)
    assert install[0] == "rm -f package-lock.json" and install[1].startswith("npm install")
    assert plan_spec(plan, []).env["NODE_OPTIONS"] == "--max-old-space-size=4096"
    assert "NODE_OPTIONS=--max-old-space-size=4096" in test[0]
    env = ecosystem.install_env(plan)
    assert env["NODE_OPTIONS"] == "--max-old-space-size=4096" and env["npm_config_python"] == "python"
    assert isinstance(ecosystem.repairer(), NodeRepairer) and ecosystem.repairer().apt
    assert ecosystem.render(_plan(dating="not-dated"))[0][0].startswith("npm install")


# npm 5.5's own words when its staging directory broke under it (installs run side by side)
NPM5_STAGING = """npm ERR! path /tmp/x/repo/packages/attrs/node_modules/.staging/@types/babylon-0ee46242/package.json
npm ERR! code ENOTDIR
npm ERR! errno -20
npm ERR! syscall open
npm ERR! ENOTDIR: not a directory, open '/tmp/x/repo/packages/attrs/node_modules/.staging/@types/babylon-0ee46242/package.json'
"""


def test_npm_before_6_breaking_its_own_install_moves_to_npm_6() -> None:
    failed = ExecResult(command="npm install", returncode=254, output=NPM5_STAGING)
    plan = _plan(version="8.9.0", line="8", manager="npm", manager_version="5.5.1",
                 manager_source="Node 8.9.0's npm")
    diagnosis = _diagnose(failed, "install", plan)
    assert diagnosis.kind == "manager_defect"
    repaired = NodeRepairer().repair(plan, diagnosis, None)
    assert repaired is not None and repaired[0].node is not None
    assert repaired[0].node.manager_version == "6.14.18"  # the last npm 6: it runs on Node 8
    assert repaired[0].node.manager_source.startswith("repair: npm 5.5.1")
    # npm 3 on Node 6 too; npm 6 itself, or another manager, has no such repair
    older = _plan(version="6.9.5", line="6", manager="npm", manager_version="3.10.8")
    again = NodeRepairer().repair(older, _diagnose(failed, "install", older), None)
    assert again is not None and again[0].node is not None
    assert again[0].node.manager_version == "6.14.18"
    for manager, version in (("npm", "6.14.18"), ("yarn", "1.22.22")):
        other = _plan(version="8.9.0", line="8", manager=manager, manager_version=version)
        assert NodeRepairer().repair(other, _diagnose(failed, "install", other), None) is None
