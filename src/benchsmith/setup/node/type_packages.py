"""Type declarations newer than the compiler: a tsc build failing inside
``node_modules/@types/X`` (or on a type library whose newest version is a deprecated stub) gets
each such package pinned to the newest version DefinitelyTyped published for the compiler's line (its ``tsM.m`` dist-tag, else the newest release whose
``typeScriptVersion`` that line meets), in the package.json that declares it, else through the
manager's overrides."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nodesemver

from benchsmith.core import BenchsmithError, Diagnosis, NodePlan, Plan
from benchsmith.core.node import DependencyEdit
from benchsmith.harness.npm_registry import packument
from benchsmith.setup.node.declared import Declared, declarations, is_git_spec, locked_versions
from benchsmith.setup.node.dependency_repairs import adapt_lockfile, override_path, record_edit
from benchsmith.setup.node.runtime import satisfies, valid_range

__all__ = ["compiler_version", "repair_types_for_compiler", "types_packages"]

TYPESCRIPT = "typescript"
NODE_TYPES = "@types/node"
# the innermost @types package a file lies in: node_modules/@types/express/node_modules/@types/node
_TYPES_FILE = re.compile(r"(?<![^/])node_modules/(@types/[^/]+)/")
_LINE = re.compile(r"^(\d+)\.(\d+)")

Line = tuple[int, int]


def types_packages(files: list[str]) -> list[str]:
    """The ``@types`` packages `files` (paths tsc reported) lie in, in order, once each."""
    return list(dict.fromkeys(found[-1] for f in files if (found := _TYPES_FILE.findall(f))))


def _releases(doc: dict[str, Any], spec: str = "*") -> list[str]:
    return [v for v in doc.get("versions") or {} if "-" not in v
            and nodesemver.valid(v, loose=True) and satisfies(v, spec)]


def _newest(versions: list[str]) -> str | None:
    best = nodesemver.max_satisfying(versions, "*", loose=True) if versions else None
    return str(best) if best else None


def compiler_version(node: NodePlan, repo: Path, workspaces: list[str]) -> str | None:
    """The typescript release the build runs: a rule's pin, else the lockfile's (a dated
    install), else the newest the root-most declared range allows (what an undated one gets)."""
    for edit in node.edits:
        if edit.name == TYPESCRIPT and edit.spec and nodesemver.valid(edit.spec, loose=True):
            return edit.spec
    if node.dating in ("lockfile", "history-lockfile"):
        locked = [v for v in locked_versions(repo, node.lockfile).get(TYPESCRIPT, [])
                  if not v.startswith("git:")]
        if locked:
            return locked[0]
    entries = sorted((d for d in declarations(repo, workspaces) if d.name == TYPESCRIPT
                      and not is_git_spec(d.spec) and valid_range(d.spec)),
                     key=lambda d: d.manifest.count("/"))
    if not entries:
        return None
    try:
        return _newest(_releases(packument(TYPESCRIPT), entries[0].spec))
    except BenchsmithError:
        return None


def _needs(meta: Any) -> Line | None:
    """The oldest TypeScript a DefinitelyTyped version supports (its ``typeScriptVersion``)."""
    found = _LINE.match(str(meta.get("typeScriptVersion") or "")) if isinstance(meta, dict) else None
    return (int(found.group(1)), int(found.group(2))) if found else None


def _for_compiler(doc: dict[str, Any], line: Line, spec: str, cap: str = "*"
                  ) -> tuple[str, str] | None:
    """The newest version `spec` and `cap` allow for TypeScript `line`, and how it was found."""
    tag = f"ts{line[0]}.{line[1]}"
    tagged = str((doc.get("dist-tags") or {}).get(tag) or "")
    versions = doc.get("versions") or {}
    if tagged and satisfies(tagged, spec) and satisfies(tagged, cap) and \
            not (versions.get(tagged) or {}).get("deprecated"):
        return tagged, f"its {tag} dist-tag"
    fits = [v for v in _releases(doc, spec) if (needs := _needs(versions[v])) and needs <= line
            and not versions[v].get("deprecated") and satisfies(v, cap)]
    best = _newest(fits)
    return (best, f"the newest whose typeScriptVersion is {line[0]}.{line[1]} or older"
            + ("" if cap == "*" else f", of {cap}")) if best else None


def _pin(plan: Plan, node: NodePlan, name: str, doc: dict[str, Any], line: Line, compiler: str,
         entries: list[Declared], stub_only: bool = False) -> bool:
    """Pin `name` for TypeScript `line`: each declaration of it, else through the overrides
    (an npm without them: a devDependency of the same name, to which npm dedupes);
    `stub_only`: only where the newest version is a deprecated stub without declarations."""
    versions = doc.get("versions") or {}
    targets: list[tuple[str, list[str], str, str | None]] = [
        (e.manifest, [e.section], e.name, e.spec) for e in entries]
    if not entries:
        path, key = override_path(node, None, name) or (["devDependencies"], name)
        targets = [("package.json", path, key, None)]
    # Node's own declarations describe one Node major: none newer than the Node that runs
    major = node.version.split(".")[0]
    cap = f"<{int(major) + 1}" if name == NODE_TYPES and major.isdigit() else "*"
    pinned = False
    for manifest, path, key, spec in targets:
        found = _for_compiler(doc, line, spec or "*", cap) or _for_compiler(doc, line, spec or "*")
        newest = _newest(_releases(doc, spec or "*"))
        stub = str((versions.get(newest) or {}).get("deprecated") or "") if newest else ""
        if found is None or newest is None or found[0] == newest or (stub_only and not stub):
            continue
        needs = _needs(versions.get(newest))
        why = (f"{name} {newest} is a deprecated stub without declarations ({stub[:80]})"
               if stub else f"{name} {newest} needs a newer TypeScript than {compiler}"
               + (f" ({needs[0]}.{needs[1]} or later)" if needs else "")) \
            + f"; {found[0]} is the newest for {line[0]}.{line[1]} ({found[1]})"
        record_edit(plan, node, DependencyEdit(manifest=manifest, path=path, name=key,
                                               spec=found[0], was=spec, why=why),
                    "pinned", f"{spec or 'newest'} -> {found[0]} ({why}"
                    + ("" if spec else f"; through {'.'.join(path)}") + ")",
                    origin="type declarations for the compiler")
        pinned = True
    return pinned


def repair_types_for_compiler(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any
                              ) -> str | None:
    """tsc fails inside ``@types`` packages (newer than its parser), or finds a type library
    whose newest version is a stub without declarations: each is pinned to the newest version
    for the compiler's line, once per package."""
    stubs = {f"@types/{lib}" for lib in diagnosis.facts.get("type_libraries", [])}
    names = [n for n in dict.fromkeys([*types_packages(diagnosis.facts.get("dependency_files", [])),
                                       *sorted(stubs)]) if n not in node.pinned]
    if diagnosis.facts.get("compiler") != ["tsc"] or not names:
        return None
    repo = Path(getattr(context, "repo_root", "") or ".")
    workspaces = list(getattr(context, "workspaces", []) or [])
    compiler = compiler_version(node, repo, workspaces)
    parsed = nodesemver.parse(compiler, loose=True) if compiler else None
    if compiler is None or parsed is None:
        return None
    declared = declarations(repo, workspaces)
    changed = []
    for name in names:
        try:
            doc = packument(name, full=True)
        except BenchsmithError:
            continue
        entries = [d for d in declared if d.name == name and valid_range(d.spec)]
        if _pin(plan, node, name, doc, (parsed.major, parsed.minor), compiler, entries,
                stub_only=name in stubs):
            changed.append(name)
    if not changed:
        return None
    if node.dating in ("lockfile", "history-lockfile"):
        adapt_lockfile(plan, node, "type declarations pinned for the compiler")
    return f"type declarations for TypeScript {compiler}: " + \
        ", ".join(f"{n} {node.pinned[n].split(' (')[0]}" for n in changed)
