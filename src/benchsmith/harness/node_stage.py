"""Put a Node plan's runtime into a sandbox: the checkout, a Python virtualenv (node-gyp's
python3), the official Node build and the package manager, through the Sandbox protocol only,
so the same code serves every backend."""

from __future__ import annotations

import json
import posixpath
import shlex
from pathlib import Path

from benchsmith.core import BenchsmithError, Diagnosis, NodePlan, Sandbox, output_tail
from benchsmith.harness.node_fetch import fetch_node
from benchsmith.harness.node_render import heap_env
from benchsmith.harness.npm_registry import fetch_package, registry_url

__all__ = ["NODE_HOME", "NO_DOWNLOAD_ENV", "QUIET_ENV", "bin_of", "ignores_extra_ca", "launcher",
           "manager_package", "node_install_env", "node_release_files", "stage_node"]

# Beside the checkout, inside the sandbox: the Node builds and managers put there.
NODE_HOME = ".benchsmith-node"
# Install scripts that fetch browsers or binaries from other hosts, told to skip (each
# package's documented variable); the tests that need them fail later, visibly.
NO_DOWNLOAD_ENV = {
    "PUPPETEER_SKIP_DOWNLOAD": "1",
    "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD": "1",
    "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1",
    "ELECTRON_SKIP_BINARY_DOWNLOAD": "1",
    "CYPRESS_INSTALL_BINARY": "0",
    "SENTRYCLI_SKIP_DOWNLOAD": "1",
    "CHROMEDRIVER_SKIP_DOWNLOAD": "true",
    "GECKODRIVER_SKIP_DOWNLOAD": "true",
    "SAUCE_CONNECT_DOWNLOAD_ON_INSTALL": "false",
    "NODEDRIVER_SKIP_DOWNLOAD": "1",
    "HUSKY": "0",
    "DISABLE_OPENCOLLECTIVE": "1",
    "ADBLOCK": "1",
}

# Quiet, non-interactive managers; the rest of the environment is in each manager's launcher.
QUIET_ENV = {"npm_config_update_notifier": "false", "npm_config_fund": "false",
             "npm_config_audit": "false", "npm_config_progress": "false",
             "YARN_ENABLE_TELEMETRY": "0", "YARN_ENABLE_PROGRESS_BARS": "false",
             "COREPACK_ENABLE_STRICT": "0"}


def node_install_env(node: NodePlan) -> dict[str, str]:
    """The environment of a Node plan's install commands: quiet managers, and the install
    scripts the plan keeps from downloading binaries (:data:`NO_DOWNLOAD_ENV`). Node and its
    manager are first on the sandbox's PATH (:func:`stage_node`); node-gyp builds with the
    sandbox's Python (the virtualenv's, first on PATH); the heap a repair chose."""
    env = {**QUIET_ENV, "npm_config_python": "python",
           **{k: NO_DOWNLOAD_ENV[k] for k in node.no_download if k in NO_DOWNLOAD_ENV}}
    return env | heap_env(node)


def ignores_extra_ca(version: str) -> bool:
    """Whether Node `version` predates NODE_EXTRA_CA_CERTS (added in 7.3.0)."""
    parts = [int(p) if p.isdigit() else 0 for p in version.split("-")[0].split(".")[:2]]
    return tuple(parts + [0] * (2 - len(parts))) < (7, 3)


def manager_package(node: NodePlan) -> str:
    """The npm package the plan's manager is published as."""
    return "@yarnpkg/cli-dist" if node.berry else node.manager


def _checked_in(node: NodePlan) -> bool:
    """A berry release the repository keeps in its tree (yarnPath), not a version."""
    return node.berry and ("/" in node.manager_version or node.manager_version.endswith("js"))


def bin_of(package_dir: Path, command: str) -> str:
    """Where the unpacked package at `package_dir` keeps its `command` (its package.json bin),
    relative to the package."""
    meta = json.loads((package_dir / "package.json").read_text(encoding="utf-8"))
    bins = meta.get("bin")
    relative = bins.get(command) if isinstance(bins, dict) else bins
    if not isinstance(relative, str):
        raise BenchsmithError(f"{meta.get('name')}@{meta.get('version')} has no `{command}` bin")
    return posixpath.normpath(relative)


def launcher(node: str, script: str, nodedir: str, berry: bool = False,
             ca_by_config: bool = False) -> str:
    """A manager's launcher: the plan's node, the CA bundle and the registry the sandbox has
    (an offline phase's registry stays), node-gyp pointed at the Node headers. Yarn 2 and
    later refuse yarn classic's YARN_REGISTRY as a legacy setting: they get their own only.
    `ca_by_config`: a Node that ignores NODE_EXTRA_CA_CERTS, whose npm and yarn are given the
    bundle as their own cafile setting."""
    registry = registry_url()
    yarn = "YARN_NPM_REGISTRY_SERVER" if berry else "YARN_REGISTRY"
    cafile = ('[ -n "$NODE_EXTRA_CA_CERTS" ] && : "${npm_config_cafile:=$NODE_EXTRA_CA_CERTS}" '
              '"${YARN_CAFILE:=$NODE_EXTRA_CA_CERTS}" && export npm_config_cafile YARN_CAFILE\n')
    return ("#!/bin/sh\n"
            ': "${NODE_EXTRA_CA_CERTS:=${SSL_CERT_FILE:-}}"\n'
            '[ -n "$NODE_EXTRA_CA_CERTS" ] && export NODE_EXTRA_CA_CERTS || unset NODE_EXTRA_CA_CERTS\n'
            + (cafile if ca_by_config else "")
            # npm before 7 run by root drops to `nobody` for lifecycle scripts, which then
            # cannot enter the checkout ("cannot run in wd") and are skipped; later npm ignores it
            + ': "${npm_config_unsafe_perm:=true}"\n'
            + f': "${{npm_config_registry:={registry}}}"\n'
            f': "${{{yarn}:=$npm_config_registry}}"\n'
            + ("unset YARN_REGISTRY\n" if berry else "")
            + f'export npm_config_registry {yarn} npm_config_unsafe_perm npm_config_nodedir={shlex.quote(nodedir)}\n'
            f'exec {shlex.quote(node)} {shlex.quote(script)} "$@"\n')


def node_release_files(node: NodePlan) -> tuple[Path, Path | None, dict[str, str]]:
    """The plan's Node build and manager, fetched to the host's cache: (Node's prefix, the
    manager's unpacked package or None for a checked-in yarn release, each launcher's script
    relative to the manager's directory, or to the checkout for a checked-in release)."""
    prefix = fetch_node(node.version)
    if _checked_in(node):
        return prefix, None, {str(node.manager): node.manager_version}
    manager_dir = fetch_package(manager_package(node), node.manager_version)
    scripts = {str(node.manager): bin_of(manager_dir, node.manager)}
    if node.manager == "npm" and (manager_dir / "bin" / "npx-cli.js").is_file():
        scripts["npx"] = "bin/npx-cli.js"
    return prefix, manager_dir, scripts


def stage_node(sandbox: Sandbox, repo_dir: Path, plan_python: str, node: NodePlan) -> Diagnosis | None:
    """Upload the checkout, create the virtualenv, and put Node `node.version` and its manager
    on the virtualenv's PATH (its bin directory comes first on every backend)."""
    try:
        prefix, manager_dir, scripts = node_release_files(node)
    except BenchsmithError as exc:
        return Diagnosis(category="installation", kind="not_in_registry", reason=str(exc),
                         facts={"node": [node.version], "manager": [node.manager_version]})
    sandbox.upload(repo_dir, sandbox.workdir)
    try:
        sandbox.setup_python(plan_python)
    except BenchsmithError as exc:
        return Diagnosis(category="python", kind="python_unavailable", reason=str(exc))
    home = posixpath.join(posixpath.dirname(sandbox.workdir.rstrip("/")), NODE_HOME)
    node_prefix = f"{home}/node-{node.version}"
    sandbox.upload(prefix, node_prefix)
    tool_dir = sandbox.workdir  # a checked-in yarn release runs from the checkout
    if manager_dir is not None:
        tool_dir = f"{home}/{manager_dir.name}"
        sandbox.upload(manager_dir, tool_dir)
    shims = []
    for command, script in scripts.items():
        path = f"{home}/bin/{command}"
        sandbox.write_file(path, launcher(f"{node_prefix}/bin/node", posixpath.join(tool_dir, script),
                                          node_prefix, node.berry,
                                          ignores_extra_ca(node.version)).encode())
        shims.append(path)
    link = (f"chmod +x {' '.join(shims)} {node_prefix}/bin/node && "
            "bindir=$(python -c 'import os, sys; print(os.path.dirname(sys.executable))') && "
            f"ln -sf {node_prefix}/bin/node {' '.join(shims)} \"$bindir\"/ && node --version && "
            f"{node.manager} --version")
    result = sandbox.exec(link, timeout=300)
    if not result.ok:
        return Diagnosis(category="installation", kind="install_failed",
                         reason=f"Node {node.version} or {node.manager} does not run in the "
                                f"sandbox: {output_tail(result.output)}", evidence=result.output[-2000:])
    return None
