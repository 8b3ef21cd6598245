"""A dependency's install script that downloads from a host out of reach (a browser, a driver,
a prebuilt binary) fails the whole install. Diagnosis: the failed lifecycle script of a package
(npm, yarn, pnpm) and a network error in the log that names no registry. Repair: the install
runs with lifecycle scripts off, the packages with a native build (binding.gyp) are rebuilt
afterwards, and the project's own install-time scripts run as build steps."""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from benchsmith.core import Diagnosis, NodePlan, Plan
from benchsmith.setup.node.managers import bundled_npm

__all__ = ["ROOT_LIFECYCLE", "diagnose_script_download", "install_line", "rebuild_command",
           "rebuild_line", "repair_script_download", "root_lifecycle_steps", "scripts_off_line"]

# The project's own scripts a plain install runs, in the managers' order (npm, yarn classic and
# pnpm also run prepublish and prepare; yarn 2+ only the install ones)
ROOT_LIFECYCLE = ("preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare",
                  "postprepare")
_BERRY_LIFECYCLE = ("preinstall", "install", "postinstall")
TOOLS_PREFIX = "${HOME:-/tmp}/.benchsmith-tools"
REGISTRY_HOSTS = frozenset({"registry.npmjs.org", "registry.yarnpkg.com", "registry.npmjs.com"})

_PACKAGE_DIR = r"(\S*node_modules/(?:@[^/\s]+/)?[^/\s:]+)"
# the package whose lifecycle script failed: npm 6 (`npm ERR! name@1.0.0 install: `) and pnpm
# (`name@1.0.0 postinstall: `), npm 7+ (`npm ERR! path .../node_modules/name` of a failed
# command), yarn classic (`error .../node_modules/name: Command failed.`), pnpm's
# `.../node_modules/name install: Failed`, yarn 2+ (`name@npm:1.0.0 couldn't be built`)
_LIFECYCLE = re.compile(
    r"(?:^|\s)(@[\w.-]+/[\w.-]+|[\w.-]+)@\d\S* (?:preinstall|install|postinstall): |"
    r"npm (?:ERR!|error) path " + _PACKAGE_DIR + r"/?\s*$|"
    r"error " + _PACKAGE_DIR + r": Command failed\.|"
    + _PACKAGE_DIR + r" (?:preinstall|install|postinstall): Failed|"
    r"(@[\w.-]+/[\w.-]+|[\w.-]+)@npm:\S+ couldn't be built successfully", re.MULTILINE)
_NPM_COMMAND_FAILED = re.compile(r"npm (?:ERR!|error) command failed")
_NETWORK = re.compile(r"getaddrinfo|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|"
                      r"EHOSTUNREACH|ENETUNREACH|Error making request|socket hang up|"
                      r"Could not resolve host")
_HOST = re.compile(r"(?:ENOTFOUND|EAI_AGAIN|getaddrinfo \w+|connect E\w+) \[?([\w.:-]+?)\]?"
                   r"(?::\d+)?(?=[\s,;]|$)|(?:Downloading|GET|request to|from)\s+(https?://\S+)",
                   re.MULTILINE)
_NATIVE_BUILD = re.compile(r"gyp ERR!")

# The packages under node_modules (nested, scoped and pnpm's store too) that build a native
# addon (binding.gyp), less those whose scripts could not download; printed space-separated.
# Written for every Node a plan may run: no arrow functions, no withFileTypes.
_FIND_NATIVE = """var fs = require("fs"), path = require("path");
var skip = SKIP, found = {};
function walk(dir) {
  var names; try { names = fs.readdirSync(dir); } catch (e) { return; }
  names.forEach(function (name) {
    var full = path.join(dir, name), stat;
    try { stat = fs.lstatSync(full); } catch (e) { return; }
    if (!stat.isDirectory() || name === ".bin") return;
    if (name === ".pnpm") { fs.readdirSync(full).forEach(function (entry) {
      walk(path.join(full, entry, "node_modules")); }); return; }
    if (name.charAt(0) === "@") { walk(full); return; }
    try {
      var meta = JSON.parse(fs.readFileSync(path.join(full, "package.json"), "utf8"));
      if (fs.existsSync(path.join(full, "binding.gyp")) && skip.indexOf(meta.name) < 0)
        found[meta.name] = true;
    } catch (e) {}
    walk(path.join(full, "node_modules"));
  });
}
walk("node_modules");
process.stdout.write(Object.keys(found).join(" "));"""


def _package_of(groups: tuple[str, ...]) -> str | None:
    value = next((g for g in groups if g), "")
    if "node_modules/" in value:
        found = re.search(r"node_modules/((?:@[^/\s]+/)?[^/\s]+)/*$", value)
        return found.group(1) if found else None
    return value or None


def _registry_hosts() -> set[str]:
    hosts = set(REGISTRY_HOSTS)
    for variable in ("npm_config_registry", "YARN_REGISTRY", "YARN_NPM_REGISTRY_SERVER"):
        if host := urlsplit(os.environ.get(variable, "")).hostname:
            hosts.add(host)
    return hosts


def _hosts(out: str) -> list[str]:
    found = []
    for bare, url in _HOST.findall(out):
        host = bare if bare else (urlsplit(url).hostname or "")
        if host and not host.startswith("node_modules"):
            found.append(host)
    return list(dict.fromkeys(found))


def diagnose_script_download(out: str) -> Diagnosis | None:
    """A dependency's install script failed on a network error to a host that is not the
    registry; not a native build (node-gyp's rules) nor a registry fetch (no script ran)."""
    network = _NETWORK.search(out)
    if network is None or _NATIVE_BUILD.search(out):
        return None
    packages = []
    for found in _LIFECYCLE.finditer(out):
        if found.group(2) and not _NPM_COMMAND_FAILED.search(out):
            continue  # npm 7+ prints a path for other errors too
        if (package := _package_of(found.groups())) is not None:
            packages.append(package)
    packages = list(dict.fromkeys(packages))
    if not packages:
        return None
    hosts = _hosts(out)
    registry = _registry_hosts()
    if hosts and all(host in registry for host in hosts):
        return None
    outside = [host for host in hosts if host not in registry]
    start = out.rfind("\n", 0, network.start()) + 1
    end = out.find("\n", network.end())
    where = f" from {', '.join(outside[:2])}" if outside else ""
    return Diagnosis(category="installation", kind="script_download_failed",
                     evidence=out[start:end if end >= 0 else None].strip()[:300],
                     facts={"packages": packages, "hosts": outside},
                     reason=f"the install script of {', '.join(packages[:3])} could not download"
                            f"{where}")


def root_lifecycle_steps(scripts: dict[str, str], berry: bool) -> list[str]:
    """The project's own scripts an install would have run, as build steps (their bodies, run
    in the checkout with its node_modules/.bin first on PATH)."""
    names = _BERRY_LIFECYCLE if berry else ROOT_LIFECYCLE
    return [f"sh -c {shlex.quote(body)}" for name in names
            if isinstance(body := scripts.get(name), str) and body.strip()]


def repair_script_download(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any
                           ) -> str | None:
    """Install with lifecycle scripts off (once): the native addons rebuilt afterwards, the
    project's own install-time scripts run as the first build steps."""
    packages = diagnosis.facts.get("packages", [])
    if node.scripts_off or not packages:
        return None
    hosts = diagnosis.facts.get("hosts", [])
    why = f"its install script could not download{' from ' + hosts[0] if hosts else ''}"
    node.scripts_off = {package: why for package in packages}
    steps = root_lifecycle_steps(getattr(context, "scripts", {}) or {}, node.berry)
    node.build[:0] = [step for step in steps if step not in node.build]
    plan.notes.append(f"install scripts off: {', '.join(packages)} ({why}); packages with a "
                      "native build (binding.gyp) are rebuilt after the install"
                      + (f"; the project's own {len(steps)} install-time script(s) run as build "
                         "steps" if steps else ""))
    plan.sources.setdefault("install_args", []).append(f"repair: {diagnosis.reason}")
    return f"install with lifecycle scripts off ({diagnosis.reason}), then rebuild native addons"


def install_line(node: NodePlan, command: list[str]) -> str:
    """The install command, with lifecycle scripts off when a repair turned them off."""
    return scripts_off_line(command, node.berry) if node.scripts_off else shlex.join(command)


def scripts_off_line(command: list[str], berry: bool) -> str:
    """An install command with every lifecycle script off."""
    if berry:  # yarn 2+ has no --ignore-scripts: its enableScripts setting
        return "YARN_ENABLE_SCRIPTS=0 " + shlex.join(command)
    return shlex.join([*command, "--ignore-scripts"])


def rebuild_command(node: NodePlan) -> str | None:
    """The command rebuilding the native addons an install with scripts off left unbuilt (not
    those whose scripts failed); None when scripts are on."""
    if not node.scripts_off:
        return None
    return rebuild_line(node.manager, node.berry, node.version, node.scripts_off)


def rebuild_line(manager: str, berry: bool, node_version: str, skip: Iterable[str]) -> str:
    """Rebuild every package under node_modules with a native build (binding.gyp) but those in
    `skip`, with the manager's rebuild, or with npm's (of `node_version`) for yarn classic,
    which has none."""
    find = f"names=$(node -e {shlex.quote(_FIND_NATIVE.replace('SKIP', json.dumps(sorted(skip))))})"
    if manager == "yarn" and not berry:
        npm = f"npm@{bundled_npm(node_version)}"
        rebuild = (f'yarn global add --non-interactive --ignore-scripts --prefix "{TOOLS_PREFIX}" '
                   f'--global-folder "{TOOLS_PREFIX}/yarn-global" {npm} >/dev/null && '
                   'npm_config_nodedir="${npm_config_nodedir:-$(dirname "$(dirname "$(readlink -f '
                   '"$(command -v node)")")")}" '
                   f'"{TOOLS_PREFIX}/bin/npm" rebuild $names')
    else:
        rebuild = f"{manager} rebuild $names"
    return f'{find} && if [ -n "$names" ]; then {rebuild}; fi'
