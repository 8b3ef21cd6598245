"""Which of a project's extras provides a module its tests import.

A test that imports an optional dependency says which extra the suite needs: installing the
extra, not just the distribution, keeps the project's own constraints on it (``Markdown<3``)
and brings the rest of that extra along.
"""

from __future__ import annotations

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from benchsmith.setup.knowledge import distribution_for_import

# Extras never installed for the tests: documentation, linting, releases.
_NOT_FOR_TESTS = ("doc", "lint", "release", "publish", "deploy")


def _provides(requirement: str, module: str) -> bool:
    try:
        name = canonicalize_name(Requirement(requirement).name)
    except InvalidRequirement:
        return False
    top = module.split(".")[0]
    guesses = {canonicalize_name(distribution_for_import(module)), canonicalize_name(top)}
    return name in guesses or name.removeprefix("python-") == canonicalize_name(top)


def extra_for_import(module: str, extras: dict[str, list[str]],
                     installed: list[str]) -> tuple[str, str] | None:
    """(extra, requirement) of the first extra, not in `installed`, whose requirement provides
    `module` (the import-name table, else the name itself); None when no extra lists it."""
    for extra, requirements in extras.items():
        if extra in installed or extra.startswith("__") or any(w in extra for w in _NOT_FOR_TESTS):
            continue
        for requirement in requirements:
            if _provides(requirement, module):
                return extra, requirement
    return None
