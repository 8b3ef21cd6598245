"""Repairs of how the project itself is built: build-time imports, editable installs, C
extensions that cannot be built, files a build step cannot make here."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from packaging.utils import canonicalize_name

from benchsmith.core import Diagnosis, Plan
from benchsmith.sandbox.pythons import version_key
from benchsmith.setup.context_model import RepoContext
from benchsmith.setup.date_rules import BUILD_TOOL_FLOOR, allow_build_tool, backend_distribution
from benchsmith.setup.knowledge import distribution_for_import
from benchsmith.setup.pyversion import allows_python
from benchsmith.setup.releases import source_archive_before


def repair_build_dependency(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """setup.py imports something at build time: pre-install it and build without isolation."""
    needed = [distribution_for_import(m) for m in diagnosis.facts.get("modules", [])]
    needed += ["setuptools", "wheel"] + [r for r in context.build_requires if r]
    # a build tool the plan already has (a newer backend a repair allowed) keeps its version
    have = {requirement_key(r) for r in plan.build_requirements}
    fresh = [n for n in dict.fromkeys(needed) if requirement_key(n) not in have]
    if plan.build_isolation is False and not fresh:
        return None
    plan.build_requirements += fresh
    plan.build_isolation = False
    return f"build without isolation after installing {', '.join(fresh)}"


def repair_declared_requirements(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """setup.py imports the project's own package (for its version), and with it the package's
    dependencies, before anything is installed: install what the project declares it needs
    (read statically) first, then build the project without isolation, where the build sees it."""
    if not diagnosis.facts.get("own_import") or not context.install_requires:
        return None
    have = {requirement_key(r) for r in plan.build_requirements}
    declared = [h.value for h in context.install_requires]
    fresh = [r for r in dict.fromkeys(["setuptools", "wheel", *declared,
                                       *(r for r in context.build_requires if r)])
             if requirement_key(r) not in have]
    if not any(requirement_key(r) not in ("setuptools", "wheel") for r in fresh):
        return None
    plan.build_requirements += fresh
    plan.build_isolation = False
    sources = sorted({h.source for h in context.install_requires})
    plan.sources.setdefault("build_requirements", []).extend(
        s for s in sources if s not in plan.sources.get("build_requirements", []))
    plan.notes.append(f"setup.py imports {diagnosis.facts['own_import'][0]}: the requirements "
                      f"declared in {', '.join(sources)} are installed before the project")
    return (f"setup.py imports {diagnosis.facts['own_import'][0]}, which needs "
            f"{', '.join(diagnosis.facts.get('modules', []))}: install the requirements declared in "
            f"{', '.join(sources)} ({', '.join(fresh)}) first, then build without isolation")


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


# An environment switch a build script reads to skip its C extensions (AIOHTTP_NO_EXTENSIONS,
# MSGPACK_PUREPYTHON, DISABLE_SQLALCHEMY_CEXT, ...).
_PURE_SWITCH = re.compile(
    r"""(?:os\.environ\.get|os\.getenv|environ\.get|getenv)\(\s*["']([A-Z0-9_]+)["']"""
    r"""|["']([A-Z0-9_]+)["']\s+in\s+os\.environ|environ\[\s*["']([A-Z0-9_]+)["']\s*\]""")
_PURE_NAME = re.compile(r"(?:NO|DISABLE|WITHOUT|SKIP)_?(?:[A-Z0-9]+_)*?(?:C_?)?(?:EXT|EXTENSIONS?|CEXTS?|"
                        r"CYTHON|SPEEDUPS?|ACCELERAT[A-Z]*|COMPIL[A-Z]*)(?:_|\b)|PURE_?PYTHON")
_BUILD_SCRIPTS = ("setup.py", "build.py", "hatch_build.py", "build_ext.py", "_build.py")


def pure_python_switches(root: Path) -> list[str]:
    """The environment variables the project's build scripts read to build without C code."""
    names: list[str] = []
    for script in _BUILD_SCRIPTS:
        path = root / script
        if not path.is_file():
            continue
        text = path.read_text(errors="replace")
        for match in _PURE_SWITCH.finditer(text):
            name = next(g for g in match.groups() if g)
            if _PURE_NAME.search(name) and name not in names:
                names.append(name)
    return names


def repair_pure_python(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """The project's own build failed and its build script has a switch for a pure-Python
    build: set it for the install (the tests then run the Python implementations)."""
    if not context.repo_root:
        return None
    fresh = [n for n in pure_python_switches(Path(context.repo_root)) if n not in plan.build_env]
    if not fresh:
        return None
    plan.build_env.update(dict.fromkeys(fresh, "1"))
    return f"build without C extensions ({', '.join(f'{n}=1' for n in fresh)})"


def repair_release_files(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """A build step generates or downloads files it cannot make here (npm, an unreachable host):
    the project's last source archive on the index before the date has them."""
    if plan.release_files or not context.project_name:
        return None
    moment = datetime.fromisoformat(plan.exclude_newer.replace("Z", "+00:00"))
    found = source_archive_before(context.project_name, moment)
    if found is None:
        return None
    version, plan.release_files = found
    return (f"take the generated files the checkout lacks from {context.project_name} {version}'s "
            f"source archive")
