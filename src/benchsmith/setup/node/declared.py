"""What a Node checkout declares about its dependencies, for the rules that change them: every
package.json's dependency sections (the root and its workspaces), the versions a lockfile
holds, and the rendering of recorded package.json changes into one command."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from benchsmith.core.node import DependencyEdit

__all__ = ["SECTIONS", "Declared", "declarations", "git_lock_entries", "git_source", "is_git_spec",
           "locked_versions", "programs_of", "render_edits"]

SECTIONS = ("dependencies", "devDependencies", "optionalDependencies")
# git and GitHub sources: git+https://, git://, github:o/n, o/n#ref, codeload tarballs
_GIT_SPEC = re.compile(r"^(?:git[+:]|github:|gitlab:|bitbucket:|gist:|https?://(?:codeload\.)?"
                       r"(?:github\.com|gitlab\.com|bitbucket\.org)/)|^[\w.-]+/[\w.-]+(?:#.*)?$")
# o/n from a git spec or URL: github.com/o/n(.git), github.com:o/n, codeload.github.com/o/n/...
_OWNER_NAME = re.compile(r"(?:github\.com|gitlab\.com|bitbucket\.org)[/:]([\w.-]+)/([\w.-]+?)"
                         r"(?:\.git)?(?=[/#?]|$)|^(?:github:|gitlab:|bitbucket:)?([\w.-]+)/"
                         r"([\w.-]+?)(?:\.git)?(?:#|$)")


@dataclass(frozen=True)
class Declared:
    """A dependency as one package.json declares it."""

    manifest: str  # repository-relative package.json
    section: str
    name: str
    spec: str


def is_git_spec(spec: str) -> bool:
    """Whether a dependency spec names a git repository or a GitHub tarball."""
    return bool(_GIT_SPEC.match(spec.strip())) and not spec.startswith(("npm:", "file:", "link:"))


def git_source(spec_or_url: str) -> str | None:
    """``owner/name`` of a git spec or URL (lower-case), None when it names none."""
    found = _OWNER_NAME.search(spec_or_url.strip())
    if not found:
        return None
    owner, name = (found.group(1), found.group(2)) if found.group(1) else (found.group(3),
                                                                            found.group(4))
    return f"{owner}/{name}".lower()


def programs_of(manifest: Any, name: str | None = None) -> dict[str, str]:
    """program -> path, from a package.json's (or a registry version's) ``bin``: a lone path is
    the program named after the package (the last part of `name`, else of its own name)."""
    if not isinstance(manifest, dict):
        return {}
    bins = manifest.get("bin")
    if isinstance(bins, dict):
        return {str(program): path for program, path in bins.items() if isinstance(path, str)}
    name = name or manifest.get("name")
    if isinstance(bins, str) and isinstance(name, str):
        return {name.rsplit("/", 1)[-1]: bins}
    return {}


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None


def _manifests(repo: Path, workspaces: list[str]) -> list[str]:
    found = ["package.json"]
    for pattern in workspaces:
        pattern = pattern.strip().lstrip("./").rstrip("/")
        if not pattern or pattern.startswith("!"):
            continue
        for path in sorted(repo.glob(f"{pattern}/package.json")):
            relative = path.relative_to(repo).as_posix()
            if "node_modules" not in relative and relative not in found:
                found.append(relative)
    return found


def declarations(repo: Path, workspaces: list[str]) -> list[Declared]:
    """The dependencies of the root package.json and of the workspaces' ones, but those on a
    package of the workspace itself."""
    manifests = {m: _read_json(repo / m) for m in _manifests(repo, workspaces)}
    local = {str(d.get("name")) for d in manifests.values() if isinstance(d, dict)}
    found: list[Declared] = []
    for manifest, data in manifests.items():
        for section in SECTIONS:
            entries = data.get(section) if isinstance(data, dict) else None
            if isinstance(entries, dict):
                found += [Declared(manifest, section, str(name), str(spec))
                          for name, spec in entries.items() if str(name) not in local]
    return found


def locked_versions(repo: Path, lockfile: str | None) -> dict[str, list[str]]:
    """The versions a lockfile holds per package name, with a "git:" prefix on those it takes
    from a git source (npm's package-lock.json, yarn classic and berry)."""
    if not lockfile or not (repo / lockfile).is_file():
        return {}
    text = (repo / lockfile).read_text(encoding="utf-8", errors="replace")
    found: dict[str, list[str]] = {}

    def add(name: str, version: str, resolved: str) -> None:
        git = is_git_spec(resolved) or "codeload" in resolved or resolved.startswith("git")
        found.setdefault(name, []).append(("git:" if git else "") + version)

    if lockfile.endswith(".json"):
        data = json.loads(text) if text.strip() else {}
        for path, meta in (data.get("packages") or {}).items():
            if path and isinstance(meta, dict) and "version" in meta:
                name = meta.get("name") or path.rsplit("node_modules/", 1)[-1]
                add(str(name), str(meta["version"]), str(meta.get("resolved", "")))
        if not data.get("packages"):
            for name, meta in (data.get("dependencies") or {}).items():
                if isinstance(meta, dict) and "version" in meta:
                    add(name, str(meta["version"]).split("#")[0], str(meta.get("resolved", "")))
    elif lockfile.endswith("yarn.lock"):
        for block in re.split(r"\n(?=\S)", text):
            head, _, body = block.partition("\n")
            version = re.search(r'^\s+version:? "?([^"\s]+)"?', body, re.MULTILINE)
            resolved = re.search(r'^\s+(?:resolved|resolution):? "?([^"\n]+)"?', body, re.MULTILINE)
            key = head.strip().strip(":").split(",")[0].strip().strip('"')
            name = key[:key.index("@", 1)] if "@" in key[1:] else key
            if version and name and not head.startswith("#"):
                spec = key[len(name) + 1:]
                add(name, version.group(1), spec if is_git_spec(spec) else
                    (resolved.group(1) if resolved else ""))
    elif lockfile.endswith(".yaml"):
        data = yaml.safe_load(text) or {}
        for key, meta in (data.get("packages") or {}).items():
            match = re.match(r"^/?(@?[^@/]+(?:/[^@/]+)?)[@/](\d[^(_/]*)", str(key))
            if match:
                resolution = meta.get("resolution") if isinstance(meta, dict) else None
                tarball = str(resolution.get("tarball", "")) if isinstance(resolution, dict) else ""
                add(match.group(1), match.group(2), tarball)
    return found


def git_lock_entries(repo: Path, lockfile: str | None, names: set[str]) -> list[tuple[str, str]]:
    """(section, key) of the entries of an npm lockfile that take one of `names` from git: npm
    keeps an entry whose version still satisfies package.json, so a replaced one must go."""
    if not lockfile or not lockfile.endswith(".json") or not (repo / lockfile).is_file():
        return []
    try:
        data = json.loads((repo / lockfile).read_text(encoding="utf-8", errors="replace"))
    except ValueError:
        return []
    found = []
    for section in ("packages", "dependencies"):
        for key, meta in (data.get(section) or {}).items():
            name = key.rsplit("node_modules/", 1)[-1]
            resolved = str(meta.get("resolved") or meta.get("version") or "") \
                if isinstance(meta, dict) else ""
            if name in names and (is_git_spec(resolved) or resolved.startswith("git")):
                found.append((section, key))
    return found


# the edits as one node run (var and function: the oldest Node lines run it too)
_EDIT_SCRIPT = """var fs = require('fs'), edits = JSON.parse(process.argv[1]);
edits.forEach(function (e) {
  var data = JSON.parse(fs.readFileSync(e.manifest, 'utf8')), at = data;
  e.path.forEach(function (key) { if (typeof at[key] !== 'object' || at[key] === null) at[key] = {}; at = at[key]; });
  if (e.spec === null) delete at[e.name]; else at[e.name] = e.spec;
  fs.writeFileSync(e.manifest, JSON.stringify(data, null, 2) + '\\n');
});"""


def render_edits(edits: list[DependencyEdit]) -> list[str]:
    """The command that makes the recorded package.json changes (none when there are none)."""
    if not edits:
        return []
    payload = [{"manifest": e.manifest, "path": e.path, "name": e.name, "spec": e.spec}
               for e in edits]
    return [shlex.join(["node", "-e", _EDIT_SCRIPT, json.dumps(payload, separators=(",", ":"))])]
