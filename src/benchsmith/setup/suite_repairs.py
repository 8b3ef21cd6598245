"""Repairs of how the suite is run (as opposed to what is installed)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path, PurePosixPath

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


def repair_prepare_step(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """The tests ask for a step of the project's own first (a script that fills a test cache):
    run it after the install. Only a script the repository has is run, never another program.
    A path of the checkout the tests looked in (named with the checkout's absolute path), not
    there yet and without an extension (a cache directory), is made first, as the project's
    own task runner does."""
    root = Path(context.repo_root) if context.repo_root else None
    added: list[str] = []
    for command in diagnosis.facts.get("commands", []):
        try:
            words = shlex.split(command)
        except ValueError:
            continue
        at = 0 if words and words[0].startswith("./") else 1
        if root is None or len(words) <= at or not (root / words[at]).is_file():
            continue
        if not (root / words[at]).resolve().is_relative_to(root.resolve()):
            continue
        made = [w for w in words[at + 1:] if w in diagnosis.facts.get("places", [])
                and not PurePosixPath(w).suffix and not (root / w).exists()]
        step = " && ".join([*(f"mkdir -p {shlex.quote(w)}" for w in made), command])
        if step not in plan.prepare:
            plan.prepare.append(step)
            added.append(step)
    if not added:
        return None
    plan.sources.setdefault("prepare", []).append("test output")
    return f"run {'; '.join(added)} after the install (the tests ask for it)"


def repair_crashing_plugin(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """pytest crashed inside a plugin the plan installs beside the tests (pytest-qt without a
    Qt binding, in its ``pytest_configure``): leave that package out."""
    modules = {_squashed(m) for m in diagnosis.facts.get("plugin_modules", [])}
    dropped = [p for p in plan.packages if _squashed(re.split(r"[\s;<>=!~\[]", p)[0]) in modules]
    if not dropped:
        return None
    plan.packages = [p for p in plan.packages if p not in dropped]
    plan.notes.append(f"left out {', '.join(dropped)}: pytest crashed in it")
    return f"leave out {', '.join(dropped)} (pytest crashed in that plugin)"


def _squashed(name: str) -> str:
    """A distribution or module name without case or separators (pytest-qt, pytestqt)."""
    return re.sub(r"[^a-z0-9]", "", name.lower())
