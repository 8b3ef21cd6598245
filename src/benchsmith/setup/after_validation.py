"""What a validated round still lacks: optional requirements its tests were skipped without,
test modules that did not import (a pass rate above the threshold hides them), and test
modules pytest's file patterns passed by (setup/small_suite.py)."""

from __future__ import annotations

import re
from pathlib import Path

from benchsmith.core import Diagnosis, Plan, Repairer
from benchsmith.parsing.failure_groups import collection_errors
from benchsmith.setup.context_model import RepoContext
from benchsmith.setup.record import Iteration
from benchsmith.setup.small_suite import widened_collection

_MISSING = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named ['\"]?([A-Za-z_][\w.]*)")


def note_collection_errors(iteration: Iteration, outputs: list[str]) -> None:
    """Record the test modules of the run that pytest could not import, with their errors."""
    errors = [f"{e.path}: {e.error}" for out in outputs for e in collection_errors(out)]
    iteration.collection_errors = list(dict.fromkeys(errors))


def another_round(plan: Plan, validated: Iteration, context: RepoContext, repairer: Repairer,
                  focused: bool = False) -> tuple[Plan, str, str] | None:
    """(plan, what it adds, origin) for one more round after `validated`, or None: the
    optional requirements the tests skip without, else the distributions the test modules
    that did not import are missing (repaired as any missing module is), else the test modules
    a run that counted a small share of the defined tests did not collect (not for a run
    `focused` on some test files)."""
    if validated.optional:
        trial = plan.model_copy(deep=True)
        trial.packages += validated.optional
        trial.sources.setdefault("packages", []).append("skip reasons")
        trial.notes.append("optional requirements the tests skip without: "
                           + ", ".join(validated.optional))
        return trial, (f"tests skip without {', '.join(validated.optional)} "
                       "(the project's extras): one round with them"), "optional"
    local = {Path(name).stem for name in context.root_dirs + context.root_files}
    modules = [m for m in dict.fromkeys(_MISSING.findall("\n".join(validated.collection_errors)))
               if m.split(".")[0] not in local or m.split(".")[0] in context.top_level_packages]
    if not modules:
        return None if focused else widened_collection(plan, validated, context)
    diagnosis = Diagnosis(category="installation", kind="missing_modules",
                          reason=f"test modules do not import: {', '.join(modules)} missing",
                          facts={"modules": modules})
    repaired = repairer.repair(plan, diagnosis, context)
    if repaired is None:
        return None
    modules_text = ", ".join(e.split(":")[0] for e in validated.collection_errors)
    return repaired[0], (f"{modules_text} did not import: {repaired[1]}; one round with "
                         "that"), "collection errors"
