"""Repairs for what the machine must provide, not the Python install: Debian packages and
services (both only in sandboxes that may install system packages), and programs the tests
start that a Python distribution the project's own files name provides."""

from __future__ import annotations

import re
from pathlib import Path

from packaging.utils import canonicalize_name

from benchsmith.core import Diagnosis, Plan, Service
from benchsmith.harness.services import DEBIAN_PACKAGES, local_reason
from benchsmith.harness.stand_ins import STAND_INS
from benchsmith.setup.build_repairs import requirement_key
from benchsmith.setup.context_model import RepoContext


def repair_system_packages(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """Missing headers, tools or libraries: install their Debian packages (sandboxes with apt)."""
    fresh = [p for p in diagnosis.facts.get("apt", []) if p not in plan.apt_packages]
    if not fresh:
        return None
    plan.apt_packages += fresh
    return f"install Debian packages {' '.join(fresh)}"


def without_system_packages(diagnosis: Diagnosis, more_plans: bool) -> str | None:
    """Why a backend that installs no system packages stops at `diagnosis` (None: it need not
    stop): what the failure needs, and the options that provide it."""
    if diagnosis.kind == "needs_service":  # another install set would not help
        return local_reason(diagnosis.facts.get("services", []))
    if diagnosis.kind == "system_packages" and diagnosis.facts.get("apt") and not more_plans:
        return ("this backend installs no system packages: allow it with --system-packages "
                "(as root on a Debian-like host), or use --backend docker")
    return None


def repair_services(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """Tests could not reach a database or cache: start it before the tests (sandboxes with apt)."""
    have = {s.kind for s in plan.services}
    fresh = [k for k in diagnosis.facts.get("services", []) if k not in have]
    if not fresh:
        return None
    plan.services += [Service(kind=kind, source="test output") for kind in fresh]  # type: ignore[arg-type]
    packages = [p for kind in fresh for p in DEBIAN_PACKAGES[kind]]  # type: ignore[index]
    return f"start {', '.join(fresh)} before the tests (Debian packages {' '.join(packages)})"



def repair_stand_ins(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """Tests failed reaching a public host that a local stand-in answers for: start it first."""
    fresh = [h for h in diagnosis.facts.get("hosts", []) if h in STAND_INS and h not in plan.stand_ins]
    if not fresh:
        return None
    plan.stand_ins += fresh
    plan.sources.setdefault("stand_ins", []).append("test output")
    return f"start a local stand-in for {', '.join(fresh)} before the tests"

# Where a project names the tools its tests or task runners install.
_TOOL_FILES = ("noxfile.py", "tox.ini", "setup.cfg", "pyproject.toml", "Makefile", "justfile")
_PIP = re.compile(r"pip(?:3(?:\.\d+)?)?")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9]")


def repair_programs(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """Tests start a program that is not installed (``pypi-server``): install the distribution
    of that name, spelled as an install line of the project's own task-runner or CI files, or
    a requirements file, spells it (``session.install("pypiserver")``); pip itself, which
    virtualenvs come with; a program nothing installs is left alone."""
    root = Path(context.repo_root) if context.repo_root else None
    if root is None:
        return None
    files = [root / name for name in _TOOL_FILES]
    files += sorted((root / ".github" / "workflows").glob("*.y*ml"))
    requirements = sorted(root.glob("requirements*.txt")) + sorted(root.glob("requirements/*.txt"))
    # only where something is installed: an install line, or a requirements file
    text = "\n".join(line for f in files if f.is_file()
                     for line in f.read_text(encoding="utf-8", errors="replace").splitlines()
                     if "install" in line.lower())
    text += "\n" + "\n".join(f.read_text(encoding="utf-8", errors="replace") for f in requirements)
    have = {requirement_key(p) for p in plan.packages}
    added: list[str] = []
    for program in diagnosis.facts.get("programs", []):
        if _PIP.fullmatch(program):  # every virtualenv has pip; uv's have not
            added += [] if "pip" in have or "pip" in added else ["pip"]
            continue
        key = re.sub(r"[-_.]", "", program.lower())
        named = next((w for w in _WORD.findall(text) if re.sub(r"[-_.]", "", w.lower()) == key), None)
        if named and canonicalize_name(named) not in have and named not in added:
            added.append(named)
    if not added:
        return None
    plan.packages += added
    plan.sources.setdefault("packages", []).append("programs the tests start")
    return f"install {', '.join(added)} (provides a program the tests start)"
