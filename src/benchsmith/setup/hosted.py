"""Packages a testing CI job installs from a git forge (``pip install git+https://github.com/
owner/name``: test data, an unreleased fork): in the plan, their source at the date
(:mod:`benchsmith.harness.vendored` writes it into the checkout)."""

from __future__ import annotations

from packaging.utils import canonicalize_name

from benchsmith.core import BenchsmithError, Plan
from benchsmith.harness.checkout import origin
from benchsmith.harness.vendored import hosted, vendored_path
from benchsmith.setup.context_model import RepoContext


def add_hosted(context: RepoContext, plan: Plan) -> None:
    """Add the context's hosted packages to `plan.vendored`, each at the plan's date, from the
    mirror next to the project's or its URL; one that cannot be reached is left out, noted.
    The project itself (a CI line that installs it from its own repository) is never one."""
    own = canonicalize_name(context.project_name or "")
    seen: set[str] = set()
    for hint in context.hosted_requirements:
        name = (hosted(hint.value) or ("", "", "", None))[2]
        if not context.repo_root or canonicalize_name(name) == own or hint.value in seen:
            continue
        seen.add(hint.value)
        try:
            path = vendored_path(hint.value, origin(context.repo_root), plan.exclude_newer)
        except BenchsmithError as exc:
            plan.notes.append(f"leave out {hint.value} ({hint.source}): {exc}")
            continue
        if path not in plan.vendored:
            plan.vendored.append(path)
            plan.sources.setdefault("vendored", []).append(hint.source)
            plan.notes.append(f"install {hint.value} ({hint.source}) from its source at the "
                              f"date: {path}")

