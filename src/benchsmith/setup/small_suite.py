"""A validated run that collected a small share of the tests a repository has: its test
modules are named so that pytest's patterns pass them by (``tests/models.py`` beside one
``tests/test_utils.py``), as in projects whose own script loads every module of the test
package through unittest. The tests that exist are counted from the source (``ast``, never
run); when the run counted fewer than a quarter of them, one more round has pytest collect
every module of the test directories that defines tests (a module among them that does
not import is counted as an error and stops nothing)."""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

from benchsmith.core import Plan
from benchsmith.setup.commands import positional_args
from benchsmith.setup.context_model import RepoContext
from benchsmith.setup.record import Iteration

MIN_TESTS = 20  # below this many defined tests, a small run is no sign of anything
SHARE = 4  # "small": the run counted fewer than 1 / SHARE of the tests defined
_PYTEST_FILES = ("test_*.py", "*_test.py")
_SKIPPED = {"__pycache__", "node_modules", "build", "dist", ".git"}
_MAX_DEPTH = 5


def defined_tests(path: Path) -> int:
    """The test functions a module defines: ``test*`` functions at its top level and ``test*``
    methods of its classes."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError):
        return 0
    count = 0
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            count += 1
        elif isinstance(node, ast.ClassDef):
            count += sum(1 for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                         and n.name.startswith("test"))
    return count


def _modules(start: Path, depth: int = 0) -> list[Path]:
    found: list[Path] = []
    for path in sorted(start.iterdir()) if start.is_dir() else []:
        if path.name in _SKIPPED or path.name.startswith("."):
            continue
        if path.is_dir() and depth < _MAX_DEPTH:
            found += _modules(path, depth + 1)
        elif path.suffix == ".py" and path.name not in ("conftest.py", "__init__.py", "setup.py"):
            found.append(path)
    return found


def _test_dirs(plan: Plan, context: RepoContext, root: Path) -> list[str]:
    named = [a for a in (plan.test_args[i] for i in positional_args(plan.test_args))
             if (root / a).is_dir()]
    return named or [d for d in context.root_dirs if d in ("tests", "test", "testing") and (root / d).is_dir()]


def widened_collection(plan: Plan, validated: Iteration, context: RepoContext
                       ) -> tuple[Plan, str, str] | None:
    """(plan, what it changes, origin) for a round that collects the test modules pytest's
    file patterns passed by, when `validated` counted under a quarter of the tests the test
    directories define; else None."""
    if plan.runner != "pytest" or "python_files" in plan.ini_overrides or not context.repo_root:
        return None
    root = Path(context.repo_root)
    counted = sum(validated.tests.values())
    defined = {path: defined_tests(path) for d in _test_dirs(plan, context, root)
               for path in _modules(root / d)}
    total = sum(defined.values())
    if total < MIN_TESTS or counted * SHARE >= total:
        return None
    passed_by = sorted({p.name for p, n in defined.items()
                        if n and not any(fnmatch.fnmatch(p.name, pattern) for pattern in _PYTEST_FILES)})
    if not passed_by:
        return None
    trial = plan.model_copy(deep=True)
    trial.ini_overrides["python_files"] = " ".join([*_PYTEST_FILES, *passed_by])
    if "--continue-on-collection-errors" not in trial.test_args:
        # modules the project's own script may have loaded only where their optional drivers
        # import: one that does not import is counted as an error, the rest still run
        trial.test_args.insert(0, "--continue-on-collection-errors")
    trial.sources.setdefault("test", []).append("test modules by their definitions")
    what = (f"the run counted {counted} tests of the {total} its test directories define: "
            f"pytest collects {', '.join(passed_by[:3])}{' ...' if len(passed_by) > 3 else ''} too")
    trial.notes.append(what)
    return trial, f"{what}; one round with them", "small suite"
