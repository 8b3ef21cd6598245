"""What the exported image of a Node instance stages: the instance's Node build and package
manager (the official build and the manager's package, from the npm registry) copied into the
build context and put where a sandbox stages them (:mod:`benchsmith.harness.node_stage`), with
their launchers and the install's environment."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from benchsmith.core import CHECKOUT_PATH, BenchsmithError
from benchsmith.harness.node_render import heap_env
from benchsmith.harness.node_stage import (
    NODE_HOME,
    ignores_extra_ca,
    launcher,
    node_install_env,
    node_release_files,
)
from benchsmith.instance import TaskInstance

# Build-context directories: the Node build, the manager's package, the launchers.
NODE_DIR, MANAGER_DIR, LAUNCHERS_DIR = "node", "node-manager", "node-bin"


@dataclass
class NodeExportFiles:
    """A Node instance's staging for an image recipe: build-context directories and where
    they go, what is linked into the environment's bin, and the variables of its commands."""

    dirs: dict[str, Path]
    copies: dict[str, str]
    links: list[str]
    check: str
    about: str
    install_env: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)


def node_export_files(instance: TaskInstance, scratch: Path) -> NodeExportFiles:
    """Fetch the instance's Node build and manager (host cache) and write their launchers
    under `scratch`, laid out as a sandbox stages them beside the checkout."""
    node = instance.node
    if node is None or not instance.python:
        raise BenchsmithError(f"{instance.instance_id} has no Node plan or no Python: was it built?")
    prefix, manager_dir, scripts = node_release_files(node)
    home = posixpath.join(posixpath.dirname(CHECKOUT_PATH), NODE_HOME)
    node_prefix = f"{home}/node-{node.version}"
    tool_dir = CHECKOUT_PATH if manager_dir is None else f"{home}/{manager_dir.name}"
    launchers = scratch / LAUNCHERS_DIR
    launchers.mkdir(parents=True, exist_ok=True)
    for command, script in scripts.items():
        (launchers / command).write_text(launcher(f"{node_prefix}/bin/node",
                                                  posixpath.join(tool_dir, script), node_prefix,
                                                  node.berry, ignores_extra_ca(node.version)))
        (launchers / command).chmod(0o755)
    dirs = {NODE_DIR: prefix, LAUNCHERS_DIR: launchers}
    copies = {NODE_DIR: node_prefix, LAUNCHERS_DIR: f"{home}/bin"}
    if manager_dir is not None:
        dirs[MANAGER_DIR], copies[MANAGER_DIR] = manager_dir, tool_dir
    return NodeExportFiles(
        dirs=dirs, copies=copies,
        links=[f"{node_prefix}/bin/node", *(f"{home}/bin/{command}" for command in scripts)],
        check=f"node --version && {node.manager} --version",
        about=f"{node.dating}; Node {node.version}, {node.manager} {node.manager_version}",
        install_env=node_install_env(node), env=heap_env(node))
