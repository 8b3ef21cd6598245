"""Rules that change what a Node install asks of the registry, each recorded on the plan: a
git or GitHub dependency (unreachable) replaced by the registry's release of the same name, a
pinned version the registry no longer has moved to the nearest published one, and, for an
install no lockfile dates, direct dependencies capped to versions whose ``engines.node`` the
chosen Node satisfies."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nodesemver

from benchsmith.core import BenchsmithError, Diagnosis, NodePlan, Plan
from benchsmith.core.node import DependencyEdit
from benchsmith.harness.npm_registry import NotOnRegistry, packument
from benchsmith.setup.node.dating import times_trust
from benchsmith.setup.node.declared import (
    Declared,
    declarations,
    git_lock_entries,
    is_git_spec,
    locked_versions,
)
from benchsmith.setup.node.runtime import satisfies, valid_range

__all__ = ["adapt_lockfile", "engine_caps", "override_path", "record_edit", "repair_engine_caps",
           "repair_git_dependencies", "repair_types_of_dropped", "repair_unpublished"]

NPM_OVERRIDES = ">=8.3.0"  # npm's `overrides` field
NODE_TYPES = "@types/node"


def _doc(name: str, full: bool = True) -> dict[str, Any] | None:
    """The packument, None when the registry has no such package."""
    try:
        return packument(name, full=full)
    except NotOnRegistry:
        return None


def _releases(doc: dict[str, Any]) -> list[str]:
    return [v for v in doc.get("versions") or {} if "-" not in v and nodesemver.valid(v, loose=True)]


def _newest(versions: list[str], spec: str = "*") -> str | None:
    try:
        best = nodesemver.max_satisfying(versions, spec, loose=True)
    except (ValueError, TypeError):
        return None
    return str(best) if best else None


def _by_date(doc: dict[str, Any], versions: list[str], day: str) -> tuple[list[str], bool]:
    """`versions` published by `day` when the registry's times can be trusted (True), else all."""
    if not times_trust(doc).trustworthy:
        return versions, False
    times = doc.get("time") or {}
    return [v for v in versions if str(times.get(v, "9999"))[:10] <= day], True


def _semver_in(spec: str) -> str | None:
    """A version range a git spec carries: ``#semver:^1.2``, or a tag such as ``#v20.15.0``."""
    ref = spec.partition("#")[2]
    ref = ref.removeprefix("semver:")
    ref = re.sub(r"^v(?=\d)", "", ref)
    return ref if ref and not re.fullmatch(r"[0-9a-f]{7,40}", ref) and valid_range(ref) else None


def _registry_release(doc: dict[str, Any], spec: str, locked: list[str], day: str
                      ) -> tuple[str, str] | None:
    """The registry version standing in for a git `spec`, and how it was chosen."""
    versions = _releases(doc)
    for version in locked:
        if version.removeprefix("git:") in (doc.get("versions") or {}):
            return version.removeprefix("git:"), "the version the lockfile names"
    dated, trusted = _by_date(doc, versions, day)
    when = f"published by {day}" if trusted else "(the registry's times cannot date it)"
    if (wanted := _semver_in(spec)) and (best := _newest(dated, wanted)):
        return best, f"the newest of {wanted} {when}"
    best = _newest(dated) or _newest(versions)
    return (best, f"the newest {when}") if best else None


def _runs_tests(name: str, node: NodePlan) -> bool:
    runner = node.tests.runner
    command = node.tests.command[0] if node.tests.command else ""
    return name in (runner, command) or name.startswith((f"{runner}-", f"@{runner}/"))


def record_edit(plan: Plan, node: NodePlan, edit: DependencyEdit, kind: str, summary: str,
                origin: str = "repair") -> None:
    """Add `edit` to the plan, under `kind` ("replaced", "dropped", "pinned") for its record."""
    node.edits = [e for e in node.edits if (e.manifest, e.path, e.name) !=
                  (edit.manifest, edit.path, edit.name)] + [edit]
    getattr(node, kind)[edit.name] = summary
    plan.notes.append(f"{kind} {edit.name} in {edit.manifest}: {summary}")
    plan.sources.setdefault("dependencies", []).append(f"{origin}: {edit.why}")


def adapt_lockfile(plan: Plan, node: NodePlan, why: str, repo: Path | None = None) -> None:
    """A frozen install refuses a changed package.json: the lockfile is adapted instead, its
    entries taking a replaced package from git left out."""
    if repo is not None and node.lockfile:
        for section, key in git_lock_entries(repo, node.lockfile, set(node.replaced)):
            if not any(e.manifest == node.lockfile and e.name == key for e in node.edits):
                node.edits.append(DependencyEdit(manifest=node.lockfile, path=[section], name=key,
                                                 why=why))
                plan.notes.append(f"{node.lockfile}: entry {key} left out (its git source)")
    if node.dating == "lockfile" and node.lockfile:
        node.dating = "history-lockfile"  # the commit's own lockfile, adapted (no earlier commit)
        plan.notes.append(f"dating lockfile -> history-lockfile: {node.lockfile} adapted by a "
                          f"non-frozen install ({why})")


def _replace_or_drop(plan: Plan, node: NodePlan, declared: Declared, locked: list[str],
                     why: str) -> bool:
    day = plan.exclude_newer[:10]
    doc = _doc(declared.name)
    path = [declared.section]
    if doc is not None and (found := _registry_release(doc, declared.spec, locked, day)):
        version, how = found
        record_edit(plan, node, DependencyEdit(
            manifest=declared.manifest, path=path, name=declared.name, spec=version,
            was=declared.spec, why=why), "replaced", f"{declared.spec} -> {version} ({how}; {why})")
        return True
    if declared.section != "dependencies" and not _runs_tests(declared.name, node):
        record_edit(plan, node, DependencyEdit(
            manifest=declared.manifest, path=path, name=declared.name, spec=None,
            was=declared.spec, why=why), "dropped",
            f"{declared.section} {declared.spec} left out: not on the registry ({why})")
        return True
    return False


def override_path(node: NodePlan, parent: str | None, name: str) -> tuple[list[str], str] | None:
    """Where the manager reads a forced version of `name` (under `parent`), if it has one."""
    if node.manager == "yarn":
        return ["resolutions"], f"{parent}/{name}" if parent else name
    if node.manager == "pnpm":
        return ["pnpm", "overrides"], f"{parent}>{name}" if parent else name
    if node.manager_version[:1].isdigit() and satisfies(node.manager_version, NPM_OVERRIDES):
        return (["overrides", parent] if parent else ["overrides"]), name
    return None


def _transitive(plan: Plan, node: NodePlan, direct: list[Declared], why: str) -> bool:
    """A git source no package.json names: the registry manifests of the direct dependencies
    are read for git sources, each replaced through the manager's overrides, else its parent
    left out."""
    changed = False
    for parent in direct:
        if is_git_spec(parent.spec) or parent.spec.startswith(("npm:", "file:", "link:", "workspace:")):
            continue
        try:
            doc = packument(parent.name)
        except BenchsmithError:
            continue
        version = _newest(_releases(doc), parent.spec) if valid_range(parent.spec) else None
        children = ((doc.get("versions") or {}).get(version or "") or {}).get("dependencies") or {}
        for child, spec in children.items():
            if not is_git_spec(str(spec)) or child in node.replaced:
                continue  # every git source goes at once: none of them can be fetched
            target = override_path(node, parent.name, child)
            child_doc = _doc(child)
            found = _registry_release(child_doc, str(spec), [], plan.exclude_newer[:10]) \
                if child_doc else None
            if target and found:
                record_edit(plan, node, DependencyEdit(
                    path=target[0], name=target[1], spec=found[0], was=str(spec), why=why),
                    "replaced", f"{spec} (a dependency of {parent.name}) -> {found[0]} ({found[1]}; "
                    f"{why}; through {'.'.join(target[0])})")
                changed = True
            elif parent.section != "dependencies" and not _runs_tests(parent.name, node):
                record_edit(plan, node, DependencyEdit(
                    manifest=parent.manifest, path=[parent.section], name=parent.name, spec=None,
                    was=parent.spec, why=why), "dropped",
                    f"{parent.section} left out: its dependency {child} comes from {spec} ({why})")
                changed = True
                break
    return changed


def repair_git_dependencies(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any
                            ) -> str | None:
    """Git and GitHub sources cannot be fetched: each git dependency of the package.json files
    becomes the registry's release of its name (the lockfile's version when the registry has
    it), a devDependency the registry lacks is left out; a git source only a dependency names
    is replaced through the manager's overrides."""
    repo = Path(getattr(context, "repo_root", "") or ".")
    declared = declarations(repo, list(getattr(context, "workspaces", []) or []))
    locked = locked_versions(repo, node.lockfile)
    why = "git sources cannot be fetched"
    changed = [d.name for d in declared if is_git_spec(d.spec) and d.name not in node.replaced
               and d.name not in node.dropped
               and _replace_or_drop(plan, node, d, [v for v in locked.get(d.name, [])
                                                   if v.startswith("git:")], why)]
    names = {d.name for d in declared}
    for name, versions in locked.items():  # git sources of the lockfile no package.json names
        git = [v.removeprefix("git:") for v in versions if v.startswith("git:")]
        if git and name not in names and name not in node.replaced \
                and (doc := _doc(name)) and (target := override_path(node, None, name)) \
                and (found := _registry_release(doc, "", git, plan.exclude_newer[:10])):
            record_edit(plan, node, DependencyEdit(path=target[0], name=target[1], spec=found[0],
                                                   was=f"git {git[0]}", why=why),
                        "replaced", f"git {git[0]} -> {found[0]} ({found[1]}; {why})")
            changed.append(name)
    sources = [s for s in diagnosis.facts.get("sources", []) if s]
    if not changed and sources and _transitive(plan, node, declared, why):
        changed.append(", ".join(sources))
    if not changed:
        return None
    adapt_lockfile(plan, node, why, repo)
    return f"git dependencies from the registry instead: {', '.join(changed)}"


def repair_unpublished(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any
                       ) -> str | None:
    """A version the registry answers 404 for: the nearest published version the declared
    range allows, else (a devDependency that does not run the tests) the dependency left out."""
    repo = Path(getattr(context, "repo_root", "") or ".")
    declared = declarations(repo, list(getattr(context, "workspaces", []) or []))
    changed = []
    for missing in diagnosis.facts.get("packages", []):
        name, _, version = missing[1:].partition("@")
        name = missing[0] + name
        doc = _doc(name)
        for entry in (d for d in declared if d.name == name and not is_git_spec(d.spec)):
            why = f"the registry has no {name}@{version}" if version and doc else \
                f"the registry has no {name}"
            published = [v for v in _releases(doc) if v != version] if doc else []
            allowed = [v for v in published if satisfies(v, entry.spec)]
            below = [v for v in allowed if not version or nodesemver.lte(v, version, loose=True)]
            nearest = _newest(below) or (str(nodesemver.min_satisfying(allowed, "*", loose=True))
                                         if allowed else None)
            if nearest:
                record_edit(plan, node, DependencyEdit(
                    manifest=entry.manifest, path=[entry.section], name=name, spec=nearest,
                    was=entry.spec, why=why), "replaced",
                    f"{entry.spec} -> {nearest} (the nearest published version {entry.spec!r} "
                    f"allows; {why})")
            elif entry.section != "dependencies" and not _runs_tests(name, node):
                record_edit(plan, node, DependencyEdit(
                    manifest=entry.manifest, path=[entry.section], name=name, spec=None,
                    was=entry.spec, why=why), "dropped",
                    f"{entry.section} {entry.spec} left out: no published version it allows ({why})")
            else:
                continue
            changed.append(name)
    if not changed:
        return None
    adapt_lockfile(plan, node, "versions the registry no longer has")
    return f"unpublished versions replaced or left out: {', '.join(dict.fromkeys(changed))}"


def repair_types_of_dropped(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any
                            ) -> str | None:
    """The TypeScript build misses only modules a rule left out: tsc still writes the
    JavaScript, so its build steps go on past the type errors (the tests of those modules fail,
    the others run)."""
    modules = diagnosis.facts.get("modules", [])
    if diagnosis.facts.get("compiler") != ["tsc"] or not modules or \
            any(m not in node.dropped for m in modules):
        return None
    steps = [i for i, step in enumerate(node.build) if step.split()[:1] == ["tsc"]
             and not step.endswith("|| true")]
    for i in steps:
        node.build[i] = f"{node.build[i]} || true"
    if not steps:
        return None
    plan.notes.append(f"tsc build steps go on past type errors: {', '.join(modules)} left out")
    plan.sources.setdefault("build", []).append(f"repair: {diagnosis.reason}")
    return f"build past the type errors of left-out {', '.join(modules)} (tsc emits regardless)"


def _engines(meta: Any) -> str | None:
    """A version's ``engines.node``; Node's own type declarations (whose major is the Node
    major they describe, and which use the TypeScript of their time) need that Node."""
    if isinstance(meta, dict) and meta.get("name") == NODE_TYPES and \
            (parsed := nodesemver.parse(str(meta.get("version")), loose=True)):
        return f">={parsed.major}"
    engines = meta.get("engines") if isinstance(meta, dict) else None
    value = engines.get("node") if isinstance(engines, dict) else None
    return value if isinstance(value, str) and valid_range(value) else None


def engine_caps(repo: Path, workspaces: list[str], node_versions: list[str], day: str
                ) -> dict[str, list[DependencyEdit]]:
    """Per Node release: each direct dependency whose newest allowed version needs a newer
    Node (its ``engines.node``), or was published after `day` where the registry's times can
    be trusted, pinned in its package.json to the newest allowed version that fits."""
    caps: dict[str, list[DependencyEdit]] = {v: [] for v in node_versions}
    for entry in declarations(repo, workspaces):
        if is_git_spec(entry.spec) or not valid_range(entry.spec):
            continue
        try:
            doc = packument(entry.name, full=True)
        except BenchsmithError:
            continue
        versions = doc.get("versions") or {}
        allowed = [v for v in _releases(doc) if satisfies(v, entry.spec)]
        newest = _newest(allowed)
        if newest is None:
            continue
        dated, trusted = _by_date(doc, allowed, day)
        for node_version in node_versions:
            fits = [v for v in dated
                    if satisfies(node_version, _engines(versions[v]) or "*")]
            best = _newest(fits)
            if best is None or best == newest:
                continue
            needs = _engines(versions[newest])
            why = (f"{entry.name}@{newest} needs node {needs}" if needs and
                   not satisfies(node_version, needs) else f"{entry.name}@{newest} is newer than "
                   f"{day}") + f"; {best} is the newest of {entry.spec!r} for Node {node_version}" \
                + (f" published by {day}" if trusted else "")
            caps[node_version].append(DependencyEdit(
                manifest=entry.manifest, path=[entry.section], name=entry.name, spec=best,
                was=entry.spec, why=why))
    return caps


def repair_engine_caps(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any
                       ) -> str | None:
    """A failure of an install nothing dated: cap each direct dependency by ``engines.node``
    and the date (:func:`engine_caps`), once. Applied only after a failure, as the newest
    versions often run despite an engine warning."""
    if node.dating != "not-dated" or node.pinned or diagnosis.infrastructure:
        return None
    repo = Path(getattr(context, "repo_root", "") or ".")
    caps = engine_caps(repo, list(getattr(context, "workspaces", []) or []), [node.version],
                       (plan.exclude_newer or "")[:10])
    for edit in caps.get(node.version, []):
        record_edit(plan, node, edit, "pinned", f"{edit.was} -> {edit.spec} ({edit.why})",
                    origin="engines.node cap")
    return f"pinned {len(node.pinned)} direct dependencies the date or Node {node.version} " \
        f"cannot have: {', '.join(sorted(node.pinned))}" if node.pinned else None
