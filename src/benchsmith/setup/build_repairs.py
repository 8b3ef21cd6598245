"""Repairs of how the project itself is built: build-time imports, editable installs, C
extensions that cannot be built, files a build step cannot make here."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from packaging.utils import canonicalize_name

from benchsmith.core import Diagnosis, Plan
from benchsmith.setup.context_model import RepoContext
from benchsmith.setup.knowledge import distribution_for_import
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


def submodule_sources_missing(diagnosis: Diagnosis, context: RepoContext) -> Diagnosis:
    """A header the build misses, with a submodule not checked out: the project's own vendored
    sources are missing (no Debian package has them), so its build failed."""
    if diagnosis.kind != "system_packages" or not diagnosis.facts.get("headers") \
            or not context.missing_submodules:
        return diagnosis
    return Diagnosis(category="installation", kind="project_build_failed",
                     reason=f"building the project failed: {diagnosis.facts['headers'][0]} is missing, "
                            f"and submodule {', '.join(context.missing_submodules)} is not checked out",
                     facts={"submodules": list(context.missing_submodules)},
                     evidence=diagnosis.evidence)


def repair_pure_python(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """The project's own build failed and its build script has a switch for a pure-Python
    build: set it for the install (the tests then run the Python implementations)."""
    if not context.repo_root:
        return None
    fresh = [n for n in pure_python_switches(Path(context.repo_root)) if n not in plan.build_env]
    if not fresh:
        return None
    plan.build_env.update(dict.fromkeys(fresh, "1"))
    plan.sources.setdefault("build_env", []).append(_BUILD_SCRIPTS[0])
    why = (f": submodule {', '.join(context.missing_submodules)} (sources it may build from) is not "
           "checked out" if context.missing_submodules else "")
    return f"build without C extensions ({', '.join(f'{n}=1' for n in fresh)}){why}"


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
