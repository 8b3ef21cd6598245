"""Repairs of how the project itself is built: build-time imports, editable installs."""

from __future__ import annotations

from packaging.utils import canonicalize_name

from benchsmith.core import Diagnosis, Plan
from benchsmith.sandbox.pythons import version_key
from benchsmith.setup.context_model import RepoContext
from benchsmith.setup.date_rules import BUILD_TOOL_FLOOR, allow_build_tool, backend_distribution
from benchsmith.setup.knowledge import distribution_for_import
from benchsmith.setup.pyversion import allows_python


def repair_build_dependency(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """setup.py imports something at build time: pre-install it and build without isolation."""
    needed = [distribution_for_import(m) for m in diagnosis.facts.get("modules", [])]
    needed += ["setuptools", "wheel"] + [r for r in context.build_requires if r]
    fresh = [n for n in dict.fromkeys(needed) if n not in plan.build_requirements]
    if plan.build_isolation is False and not fresh:
        return None
    plan.build_requirements += fresh
    plan.build_isolation = False
    return f"build without isolation after installing {', '.join(fresh)}"


def repair_editable(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """No PEP 660 hooks at the date: allow a newer build backend; when the project pins an old
    one in its build requirements, build without isolation next to the newer one; at last fall
    back to a regular install (which a patch to a src layout no longer reaches).

    uv builds editables through PEP 660 only, and no setuptools that runs on Python 3.6 or
    older has it (64 needs 3.7): there, the first step is Python 3.7, if the project allows it."""
    if plan.editable and (3, 0) <= version_key(plan.python) < (3, 7) and allows_python(context, "3.7"):
        previous, plan.python = plan.python, "3.7"
        plan.python_fallbacks = []
        return (f"switch Python {previous} -> 3.7 (editable installs need setuptools 64, "
                f"which needs Python 3.7)")
    backend = backend_distribution(context)
    if backend not in plan.exclude_newer_packages and plan.build_isolation:
        allow_build_tool(plan, backend, f"{BUILD_TOOL_FLOOR}T00:00:00Z")
        return f"allow {backend} up to {BUILD_TOOL_FLOOR} (editable builds)"
    if plan.build_isolation and plan.editable:
        others = [r for r in context.build_requires if r and requirement_key(r) != backend]
        allow_build_tool(plan, backend, f"{BUILD_TOOL_FLOOR}T00:00:00Z")
        wheel = [] if "wheel" in {requirement_key(r) for r in others} else ["wheel"]
        plan.build_requirements = [backend, *wheel, *others]
        plan.build_isolation = False
        return (f"build without isolation next to {backend} up to "
                f"{plan.exclude_newer_packages[backend][:10]} (the project pins an older one)")
    if plan.editable:
        plan.editable = False
        return "install the project without -e (no editable support at that date)"
    return None


def requirement_key(requirement: str) -> str:
    head = requirement.split(";")[0]
    for sep in "<>=!~[ @":
        head = head.split(sep)[0]
    return canonicalize_name(head)
