"""Repairs of how the suite is run (as opposed to what is installed)."""

from __future__ import annotations

from benchsmith.core import Diagnosis, Plan
from benchsmith.setup.context_model import RepoContext


def repair_collection_errors(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """A few test files cannot be imported (a clash of two test packages of one name): let the
    rest of the suite run; the files that fail stay in the results as errors."""
    if plan.runner != "pytest" or "--continue-on-collection-errors" in plan.test_args:
        return None
    plan.test_args.append("--continue-on-collection-errors")
    files = diagnosis.facts.get("files", [])
    if not files:
        return "run the tests despite collection errors"
    return ("run the tests despite collection errors in " + ", ".join(files[:3])
            + (f" and {len(files) - 3} more" if len(files) > 3 else ""))
