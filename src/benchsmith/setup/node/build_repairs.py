"""Rules for the build steps of a Node plan: a step that runs a program of a dependency a rule
left out is left out too, and a TypeScript build that fails on the project's own sources with
the newest compiler an undated range allows gets the compiler line of the range's lower bound."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nodesemver

from benchsmith.core import BenchsmithError, Diagnosis, NodePlan, Plan
from benchsmith.core.node import DependencyEdit
from benchsmith.harness.npm_registry import packument
from benchsmith.setup.node.declared import declarations, programs_of
from benchsmith.setup.node.dependency_repairs import record_edit
from benchsmith.setup.node.runtime import satisfies, valid_range
from benchsmith.setup.node.scripts import Invocation, expand

__all__ = ["leave_out_dropped_steps", "repair_dropped_programs", "repair_typescript_line"]

TYPESCRIPT = "typescript"
_STEP = "\0step"  # the name a build step is expanded under (no package.json script has it)


def _step_invocations(step: str, scripts: dict[str, Any]) -> list[Invocation]:
    """Every command a build step runs, the package.json scripts it calls read through."""
    return expand({**scripts, _STEP: step}, _STEP)


def _bins(name: str, spec: str | None) -> set[str]:
    """The programs package `name` installs: the ``bin`` of the version `spec` allows (else
    the latest); nothing when the registry has no such package."""
    try:
        doc = packument(name)
    except BenchsmithError:
        return set()
    versions = doc.get("versions") or {}
    version = None
    if spec and valid_range(spec):
        try:
            version = nodesemver.max_satisfying(list(versions), spec, loose=True)
        except (ValueError, TypeError):
            version = None
    chosen = versions.get(str(version or (doc.get("dist-tags") or {}).get("latest")))
    return set(programs_of(chosen, name))


def _providers(node: NodePlan, programs: set[str]) -> dict[str, str]:
    """program -> the left-out package providing it: by name first, else by its ``bin``."""
    found = {p: name for name in node.dropped for p in programs if p == name.rsplit("/", 1)[-1]}
    wanted = programs - set(found)
    specs = {e.name: e.was for e in node.edits if e.spec is None}
    for name in node.dropped if wanted else []:
        for program in _bins(name, specs.get(name)) & wanted:
            found.setdefault(program, name)
    return found


def leave_out_dropped_steps(plan: Plan, node: NodePlan, context: Any) -> str | None:
    """Leave out the build steps that run a program only a left-out dependency installs (a
    step calling a script keeps the script's other commands); recorded in
    ``node.left_out_steps``. The test command is never touched."""
    if not node.dropped or not node.build:
        return None
    scripts = dict(getattr(context, "scripts", None) or {})
    runs = {step: _step_invocations(step, scripts) for step in node.build}
    providers = _providers(node, {i.command for invocations in runs.values() for i in invocations})
    if not providers:
        return None
    build: list[str] = []
    for step in node.build:
        left = [i for i in runs[step] if i.command in providers]
        if not left:
            build.append(step)
            continue
        kept = [i.text for i in runs[step] if i.command not in providers]
        build += [k for k in kept if k not in build]
        program = left[0].command
        why = (f"runs `{program}` of {providers[program]}, which was left out: "
               f"{node.dropped[providers[program]]}")
        node.left_out_steps[step] = why + (f"; its other commands kept: {'; '.join(kept)}"
                                           if kept else "")
        plan.notes.append(f"build step `{step}` left out: {node.left_out_steps[step]}")
        plan.sources.setdefault("build", []).append(f"repair: `{program}` is not installed")
    node.build = build
    return f"build steps left out: {', '.join(f'`{s}`' for s in node.left_out_steps)} " \
        f"(they run programs of left-out {', '.join(sorted(set(providers.values())))})"


def repair_dropped_programs(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any
                            ) -> str | None:
    """Build steps run a program that is not installed because a rule left its package out:
    those steps are left out (see :func:`leave_out_dropped_steps`)."""
    if not set(diagnosis.facts.get("programs", [])) & {
            i.command for step in node.build
            for i in _step_invocations(step, dict(getattr(context, "scripts", None) or {}))}:
        return None
    return leave_out_dropped_steps(plan, node, context)


def _line_of_lower_bound(allowed: list[str]) -> str | None:
    """The newest release of the minor line of the oldest release in `allowed`."""
    lowest = nodesemver.min_satisfying(allowed, "*", loose=True) if allowed else None
    parsed = nodesemver.parse(str(lowest), loose=True) if lowest else None
    if parsed is None:
        return None
    line = f"~{parsed.major}.{parsed.minor}.0"
    best = nodesemver.max_satisfying(allowed, line, loose=True)
    return str(best) if best else None


def repair_typescript_line(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any
                           ) -> str | None:
    """tsc fails on the project's own sources while nothing dates the install: the newest
    compiler its range allows is stricter than the author's. `typescript` is pinned to the
    newest patch of the minor line of the range's lower bound (the author had at least that
    line), once."""
    if diagnosis.facts.get("compiler") != ["tsc"] or not diagnosis.facts.get("files") or \
            node.dating != "not-dated" or TYPESCRIPT in node.pinned:
        return None
    repo = Path(getattr(context, "repo_root", "") or ".")
    entries = [d for d in declarations(repo, list(getattr(context, "workspaces", []) or []))
               if d.name == TYPESCRIPT and re.search(r"\d", d.spec) and valid_range(d.spec)]
    try:
        doc = packument(TYPESCRIPT) if entries else {}
    except BenchsmithError:
        return None
    releases = [v for v in doc.get("versions") or {}
                if "-" not in v and nodesemver.valid(v, loose=True)]
    files = ", ".join(diagnosis.facts.get("files", [])[:3]) or "its sources"
    for entry in entries:
        allowed = [v for v in releases if satisfies(v, entry.spec)]
        newest = nodesemver.max_satisfying(allowed, "*", loose=True) if allowed else None
        best = _line_of_lower_bound(allowed)
        if best is None or newest is None or best == str(newest):
            continue
        why = (f"typescript {newest}, the newest {entry.spec!r} allows (nothing dates the "
               f"install), fails on the project's own sources ({files}); {best} is the newest "
               f"of {best.rsplit('.', 1)[0]}.x, the line of the range's lower bound")
        record_edit(plan, node, DependencyEdit(
            manifest=entry.manifest, path=[entry.section], name=TYPESCRIPT, spec=best,
            was=entry.spec, why=why), "pinned", f"{entry.spec} -> {best} ({why})",
            origin="typescript of the range's lower bound")
    if TYPESCRIPT not in node.pinned:
        return None
    return f"pin typescript to the line of its range's lower bound: {node.pinned[TYPESCRIPT]}"
