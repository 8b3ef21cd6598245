"""The `benchsmith` agent on a JavaScript/TypeScript repository, installed the way SetupBench
demands: system-wide, no version manager in a home directory.

Node of the line the repository wants at its commit's date (:func:`choose_node`) is fetched
from the npm registry on the host and copied under ``/usr/local`` with the npm it shipped with
(or the one the project pins), so ``node``/``npm``/``npx`` are on a login shell's standard PATH;
yarn or pnpm, when the project uses them, are installed globally at the version it declares.
Then the install (frozen to the lockfile, relaxed only after a failure, with the binary
downloads of browsers and the like skipped only when they are what failed) and the build steps
its documents ask for (:mod:`.node_steps`). Every choice goes to the metrics file.
"""

from __future__ import annotations

import datetime as dt
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.core import BenchsmithError
from benchsmith.harness.node_fetch import fetch_node
from benchsmith.harness.npm_registry import fetch_package, registry_url, resolve_version
from benchsmith.setup.node.context import NodeContext, read_node_context
from benchsmith.setup.node.install_scripts import (
    diagnose_script_download,
    install_line,
    rebuild_command,
    repair_script_download,
)
from benchsmith.setup.node.managers import (
    NO_DOWNLOAD_ENV,
    ManagerChoice,
    bundled_npm,
    choose_manager,
)
from benchsmith.setup.node.runtime import NodeChoice, choose_node
from benchsmith.setupbench.node_dependencies import DependencyRepairs
from benchsmith.setupbench.node_steps import documented_steps

if TYPE_CHECKING:
    from benchsmith.setupbench.engine_agent import _Run

__all__ = ["NODE_BASE_PACKAGES", "setup_node_repository"]

# What a Node project needs around node itself: TLS roots, git, a compiler and python3 for
# node-gyp, and ps (servers are stopped by process group).
NODE_BASE_PACKAGES = ("ca-certificates", "curl", "git", "make", "g++", "python3", "procps")
PREFIX = "/usr/local"
SYSTEM_CA = "/etc/ssl/certs/ca-certificates.crt"
PROFILE_SCRIPT = "/etc/profile.d/benchsmith-node.sh"
# An install that failed on one of these tried to fetch a binary from a host other than the
# registry (a browser, electron, a driver): retried with their skip variables set.
_DOWNLOAD_FAILURE = re.compile(
    r"puppeteer|playwright|electron|cypress|chromedriver|geckodriver|sentry-cli|"
    r"ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|getaddrinfo", re.IGNORECASE)


def setup_node_repository(run: _Run, repo: Path, stamp: str) -> None:
    """Install Node, the package manager, the dependencies and the documented build of the
    checkout at `repo` (a copy of /testbed) into the container of `run`."""
    ctx = read_node_context(repo)
    date = stamp[:10] if stamp else dt.date.today().isoformat()
    node = choose_node(ctx, date)
    manager = choose_manager(ctx, node.version)
    record: dict[str, Any] = {
        "date": date, "sources_read": ctx.sources_read,
        "node": node.model_dump(), "manager": manager.model_dump()}
    run.choices["node"] = record
    run.notes.append(f"Node {node.version} ({node.source}): {'; '.join(node.reasons)}")
    run.notes.append(f"{manager.name} {manager.version} ({manager.source})")
    if not run.step("apt-get update -qq && apt-get install -y -qq --no-install-recommends "
                    + " ".join(NODE_BASE_PACKAGES)):
        return
    _configure_registry(run, record)
    try:
        record["npm"] = _install_node(run, node, manager)
        if manager.name != "npm":
            record["manager_installed"] = _install_manager(run, manager, ctx)
    except BenchsmithError as exc:
        run.notes.append(f"Node could not be installed: {exc}")
        run.returncode = 1
        return
    repairs = DependencyRepairs(repo, ctx, manager, node.version, date)
    record["install"] = _install_dependencies(run, manager, repairs)
    steps = documented_steps(repo, ctx, manager.name)
    record["build"] = []
    for step in steps:
        ok = run.step(step.command)
        record["build"].append({**step.model_dump(), "ok": ok})
        run.notes.append(f"build step `{step.command}` ({step.reason}): "
                         + ("ok" if ok else f"failed with exit {run.returncode}"))
    if steps and not all(entry["ok"] for entry in record["build"]):
        run.returncode = next(c["exit"] for c in reversed(run.commands) if c["exit"])  # type: ignore[assignment]


def _configure_registry(run: _Run, record: dict[str, Any]) -> None:
    """The registry for every later npm/yarn/pnpm (the global npmrc, which outranks nothing the
    project sets, and the install's environment, which does), and the system CA bundle for
    Node when the sandbox passes one in (a TLS-intercepting proxy)."""
    registry = registry_url()
    lines = [f"registry={registry}/"]
    exports = []
    if run.capture(f"test -s {SYSTEM_CA} && echo yes").strip() == "yes":
        lines.append(f"cafile={SYSTEM_CA}")
        exports.append(f"export NODE_EXTRA_CA_CERTS={SYSTEM_CA}\n")
        run.env["NODE_EXTRA_CA_CERTS"] = SYSTEM_CA
    run.sandbox.exec(f"mkdir -p {PREFIX}/etc /etc/profile.d", cwd="/", timeout=60)
    run.sandbox.write_file(f"{PREFIX}/etc/npmrc", ("\n".join(lines) + "\n").encode())
    if exports:
        run.sandbox.write_file(PROFILE_SCRIPT, "".join(exports).encode())
    run.env.update({"npm_config_registry": registry, "CI": "true",
                    "npm_config_nodedir": PREFIX,  # node-gyp's headers: no download
                    "npm_config_update_notifier": "false", "npm_config_fund": "false",
                    "npm_config_audit": "false"})
    record["registry"] = registry


def _npm_spec(manager: ManagerChoice, node: NodeChoice) -> tuple[str, str]:
    if manager.name == "npm" and manager.source in ("packageManager", "volta"):
        return manager.version, manager.source
    return bundled_npm(node.version), f"the npm Node {node.version} shipped with"


def _install_node(run: _Run, node: NodeChoice, manager: ManagerChoice) -> dict[str, str]:
    """Node's binary and headers, and npm, under /usr/local (fetched on the host)."""
    prefix = fetch_node(node.version)
    run.sandbox.upload(prefix / "bin" / "node", f"{PREFIX}/bin/node")
    if (prefix / "include" / "node").is_dir():
        run.sandbox.upload(prefix / "include" / "node", f"{PREFIX}/include/node")
    spec, why = _npm_spec(manager, node)
    version = resolve_version("npm", spec)
    npm_dir = fetch_package("npm", version)
    modules = f"{PREFIX}/lib/node_modules"
    run.sandbox.exec(f"rm -rf {modules}/npm && mkdir -p {modules}", cwd="/", timeout=60)
    run.sandbox.upload(npm_dir, f"{modules}/npm")
    links = [f"ln -sf ../lib/node_modules/npm/bin/{cli} {PREFIX}/bin/{name}"
             for name, cli in (("npm", "npm-cli.js"), ("npx", "npx-cli.js"))
             if (npm_dir / "bin" / cli).is_file()]
    if not run.step(f"chmod 755 {PREFIX}/bin/node && " + " && ".join(links)
                    + " && node --version && npm --version"):
        raise BenchsmithError(f"node {node.version} or npm {version} does not run here: "
                              f"{run.last_output.strip()[-200:]}")
    if int(version.split(".")[0]) < 7:  # old npm drops root privileges for install scripts
        run.env["npm_config_unsafe_perm"] = "true"
    return {"version": version, "spec": spec, "why": why}


def _install_manager(run: _Run, manager: ManagerChoice, ctx: NodeContext) -> dict[str, str]:
    """yarn or pnpm, installed globally with npm at the version the project declares; a
    checked-in yarn release (yarnPath) is run by a global yarn classic."""
    if manager.berry and ctx.yarn_path:
        package, spec = "yarn", "1"
    else:
        package, spec = ("@yarnpkg/cli-dist" if manager.berry else manager.name), manager.version
    version = resolve_version(package, spec)
    if not run.step(f"npm install -g {shlex.quote(f'{package}@{version}')} && "
                    f"{manager.name} --version"):
        raise BenchsmithError(f"{package}@{version} could not be installed globally: "
                              f"{run.last_output.strip()[-200:]}")
    return {"package": package, "version": version}


def _install_dependencies(run: _Run, manager: ManagerChoice, repairs: DependencyRepairs
                          ) -> dict[str, Any]:
    """The install: frozen to the lockfile; after a git source or a version the registry lacks,
    unfrozen with package.json changed by the engine's rules (once per kind); after a failure
    that a binary download caused, again with the downloads skipped; after any other failure
    of a frozen install, unfrozen."""
    command = shlex.join(manager.install_command)
    if manager.name == "npm" and int(run.choices["node"]["npm"]["version"].split(".")[0]) < 6:
        command = "npm install"  # no `npm ci` before npm 5.7
    unfrozen = "npm install" if manager.name == "npm" else shlex.join(manager.install_command[:2])
    if manager.name == "pnpm" and manager.lockfile:
        unfrozen = "pnpm install --no-frozen-lockfile"
    relaxations: list[str] = []
    ok = run.step(command)

    def repaired() -> bool:  # the install after each dependency repair the failure allows
        nonlocal command
        while run.left() > 0 and (description := repairs.repair(run)):
            relaxations.append(f"{description}: installed with `{unfrozen}`")
            command = unfrozen
            if run.step(command):
                return True
        return False

    ok = ok or repaired()
    if not ok and _DOWNLOAD_FAILURE.search(run.last_output) and run.left() > 0:
        relaxations.append("binary downloads skipped (" + ", ".join(NO_DOWNLOAD_ENV) + ")")
        run.env.update(NO_DOWNLOAD_ENV)
        ok = run.step(command)
    if not ok and _DOWNLOAD_FAILURE.search(run.last_output) and run.left() > 0:
        ok = _install_without_scripts(run, repairs, command, relaxations)
    if not ok and command != unfrozen and run.left() > 0:
        relaxations.append(f"`{command}` failed: installed with `{unfrozen}`")
        command = unfrozen
        ok = run.step(command)
    ok = ok or repaired()
    for name in NO_DOWNLOAD_ENV:
        run.env.pop(name, None)
    run.notes += relaxations
    return {"command": command, "ok": ok, "relaxations": relaxations, **repairs.record()}


def _install_without_scripts(run: _Run, repairs: DependencyRepairs, command: str,
                             relaxations: list[str]) -> bool:
    """The setup engine's repair of an install script that cannot download
    (:mod:`benchsmith.setup.node.install_scripts`), for every manager: the install with
    lifecycle scripts off, the native addons (a ``binding.gyp``) rebuilt from source but those
    whose script failed, then the project's own install-time scripts."""
    node = repairs.node
    diagnosis = diagnose_script_download(run.last_output)
    if diagnosis is None or repair_script_download(repairs.plan, node, diagnosis,
                                                   repairs.ctx) is None:
        return False
    line = install_line(node, shlex.split(command))
    if not run.step(line):
        return False
    relaxations.append(f"install scripts off (`{line}`): {diagnosis.reason}")
    rebuild = rebuild_command(node)
    if rebuild is not None:
        ok = run.step(rebuild)
        relaxations.append("native addons rebuilt from source"
                           + ("" if ok else f" (the rebuild failed with exit {run.returncode})"))
    for step in list(node.build):  # the project's own prepare and install scripts
        ok = run.step(f'PATH="$PWD/node_modules/.bin:$PATH" {step}')
        relaxations.append(f"the project's own install-time script `{step}` run"
                           + ("" if ok else f": exit {run.returncode}"))
    return True
