"""Plan rules that depend on the pin date or the Python version, applied to a new plan and
again whenever a validated plan is reused at another date."""

from __future__ import annotations

from datetime import date

from packaging.requirements import InvalidRequirement, Requirement

from benchsmith.core import Plan
from benchsmith.sandbox.pythons import version_key
from benchsmith.setup.context_model import RepoContext
from benchsmith.setup.knowledge import PEP660_DATES

# Later build backends with the PEP 660 hooks, used when the pin date predates them.
BUILD_TOOL_FLOOR = "2022-12-31"
# Python versions before this one seeded setuptools into every virtualenv (venv, virtualenv).
SEEDED_SETUPTOOLS_UNTIL = (3, 12)


def apply_date_rules(plan: Plan, context: RepoContext) -> None:
    """Rules that depend on the pin date or the Python; re-applied when a plan is reused at
    another date."""
    seed_setuptools(plan)
    if not plan.install_project or not plan.editable:
        return
    pinned = date.fromisoformat(plan.exclude_newer[:10])
    backend = backend_distribution(context)
    since = PEP660_DATES.get(backend)
    if since and pinned < date.fromisoformat(since) and backend not in plan.exclude_newer_packages:
        floor = max(BUILD_TOOL_FLOOR, since)
        allow_build_tool(plan, backend, f"{floor}T00:00:00Z")
        plan.notes.append(
            f"{backend} before {since} has no PEP 660 editable builds: "
            f"allowing {backend} up to {floor}"
        )


def allow_build_tool(plan: Plan, backend: str, stamp: str) -> None:
    """Let `backend` (and, for setuptools, `wheel`, whose bdist_wheel setuptools drove until
    70.1: a 2022 setuptools building an sdist with a 2017 wheel fails) go up to `stamp`."""
    plan.exclude_newer_packages.setdefault(backend, stamp)
    if backend == "setuptools":
        plan.exclude_newer_packages.setdefault("wheel", plan.exclude_newer_packages[backend])


def seed_setuptools(plan: Plan) -> None:
    """Before Python 3.12, every virtualenv came with setuptools (and so `pkg_resources`, which
    projects of that time import at run time without declaring it); uv's do not. Seed it, at
    the plan's date like everything else, so the environment is the one the project knew."""
    if version_key(plan.python) >= SEEDED_SETUPTOOLS_UNTIL:
        return
    if "setuptools" in _names(plan.packages):
        return
    plan.packages.append("setuptools")
    plan.notes.append(f"Python {plan.python}: setuptools seeded, as virtualenvs of that time were")


def backend_distribution(context: RepoContext) -> str:
    backend = (context.build_backend or "setuptools.build_meta").split(".")[0].split(":")[0]
    return {
        "setuptools": "setuptools",
        "flit_core": "flit-core",
        "poetry": "poetry-core",
        "hatchling": "hatchling",
        "pdm": "pdm-backend",
    }.get(backend, backend.replace("_", "-"))


def _names(requirements: list[str]) -> set[str]:
    names = set()
    for text in requirements:
        try:
            names.add(Requirement(text).name.lower())
        except InvalidRequirement:
            continue
    return names
