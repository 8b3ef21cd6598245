"""Test discovery of the nose and `setup.py test` era: collect what the project's own runner
collected, with pytest where its settings can say so, with the old runner where they cannot.

- nose (a nosetests command, a ``[nosetests]`` section, ``test_suite='nose.collector'``)
  collected every module, function and class its ``testMatch`` regex matches (by default a
  name starting with "test", or with it after ``_``, ``.`` or ``-``: ``tests.py``,
  ``parser_tests.py``). pytest runs those with ``python_files``, ``python_functions`` and
  ``python_classes`` set to match. Yield tests (test generators) are the exception: pytest 4
  dropped them, so such a suite runs under nose itself (``pynose`` on Python 3.10 and later,
  where nose no longer imports), and every generated test is a result of its own.
- ``setup.py test`` ran setup()'s ``test_suite`` through unittest's loader: a package had
  every module scanned, a module or a callable (``pkg.tests.suite``) was loaded by name, with
  the module's ``additional_tests()`` when it has one (setuptools' loader called it).
  unittest runs the same, named the same.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

from benchsmith.core import Plan
from benchsmith.sandbox.pythons import version_key
from benchsmith.setup.commands import positional_args
from benchsmith.setup.context_model import RepoContext

# a test_suite module's hook that setuptools' loader (not unittest's) adds to the module's tests
_ADDITIONAL = re.compile(r"^def additional_tests\(", re.MULTILINE)
NOSE_DEFAULT_MATCH = r"(?:^|[\b_\./-])[Tt]est"
# pytest's patterns for nose's default testMatch (plain words are prefixes, the rest globs)
NOSE_DEFAULT_PATTERNS = {
    "python_files": "test*.py Test*.py *_test*.py *_Test*.py",
    "python_functions": "test Test *_test* *_Test*",
    "python_classes": "Test *_Test* *_test*",
}
_PYTEST_DEFAULT_FILES = ("test_*.py", "*_test.py")
_SKIPPED_DIRS = {"build", "dist", "docs", "node_modules", "venv", "__pycache__"}
MAX_DEPTH = 5


def _nose_match(context: RepoContext) -> re.Pattern[str]:
    try:
        return re.compile(context.nose_config.get("testmatch") or NOSE_DEFAULT_MATCH)
    except re.error:
        return re.compile(NOSE_DEFAULT_MATCH)


def _test_modules(root: Path, start: Path, match: re.Pattern[str], depth: int = 0) -> list[Path]:
    """The modules nose collects under `start`: it enters packages and directories whose name
    matches, and takes the modules whose name matches."""
    found: list[Path] = []
    for path in sorted(start.iterdir()) if start.is_dir() else []:
        if path.name.startswith(".") or path.name in _SKIPPED_DIRS:
            continue
        if path.is_dir() and depth < MAX_DEPTH and (
                (path / "__init__.py").is_file() or match.search(path.name)):
            found += _test_modules(root, path, match, depth + 1)
        elif path.suffix == ".py" and path.name != "setup.py" and match.search(path.stem):
            found.append(path)
    return found


def _definitions(path: Path) -> list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError):
        return []
    found: list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append(node)
        if isinstance(node, ast.ClassDef):
            found += [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return found


def _is_generator(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A yield of the function's own (not of a function or lambda nested in it)."""
    stack: list[ast.AST] = list(node.body)
    while stack:
        child = stack.pop()
        if isinstance(child, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack += list(ast.iter_child_nodes(child))
    return False


def _faithful_to_replace(plan: Plan) -> bool:
    """Only a test command benchsmith guessed (a test directory) gives way."""
    return not plan.entry and all(s.endswith(" directory") for s in plan.sources.get("test", []))


def _where(context: RepoContext, root: Path) -> list[str]:
    words = re.split(r"[\s,]+", context.nose_config.get("where", "").strip())
    return [w.strip("/") for w in words if w and (root / w).is_dir()]


def _nose(context: RepoContext, plan: Plan, root: Path) -> None:
    match = _nose_match(context)
    where = _where(context, root)
    modules = [m for start in ([root / w for w in where] or [root]) for m in _test_modules(root, start, match)]
    if not modules:
        return
    source = "setup.cfg [nosetests]" if context.nose_config else "nose"
    definitions = [(node, module) for module in modules for node in _definitions(module)]
    generators = [node for node, _ in definitions if not isinstance(node, ast.ClassDef)
                  and match.search(node.name) and _is_generator(node)]
    if generators:
        runner = "pynose" if version_key(plan.python) >= (3, 10) else "nose"
        plan.runner, plan.entry, plan.test_args = "unittest", ["nose", "-v"], where
        plan.packages = [p for p in plan.packages if p != "pytest"]
        plan.packages.insert(0, runner)
        plan.sources["test"] = [source]
        plan.notes.append(f"yield tests ({generators[0].name}, ...): run by {runner}, as pytest 4 "
                          "and later no longer runs them")
        return
    names = [m.name for m in modules]
    if match.pattern == NOSE_DEFAULT_MATCH:
        overrides = dict(NOSE_DEFAULT_PATTERNS)
    else:  # any regex: the names it matches here
        functions = [n.name for n, _ in definitions if match.search(n.name)
                     and not isinstance(n, ast.ClassDef)]
        classes = [n.name for n, _ in definitions if isinstance(n, ast.ClassDef) and match.search(n.name)]
        overrides = {"python_files": " ".join(sorted(set(names))),
                     "python_functions": " ".join(sorted(set(functions))) or "test",
                     "python_classes": " ".join(sorted(set(classes))) or "Test"}
    if all(any(fnmatch.fnmatch(n, p) for p in _PYTEST_DEFAULT_FILES) for n in names) and not where:
        return  # pytest collects these modules as they are
    if plan.runner != "pytest":  # unittest's loader takes TestCase classes only; nose took more
        plan.runner, plan.test_args = "pytest", []
        plan.packages.insert(0, "pytest")
    plan.ini_overrides.update(overrides)
    if where:
        positional = set(positional_args(plan.test_args))
        plan.test_args = [a for i, a in enumerate(plan.test_args) if i not in positional] + where
    plan.sources["test"] = [source]
    plan.notes.append(f"nose's testMatch {match.pattern!r}: pytest collects the same modules")


def _test_suite(context: RepoContext, plan: Plan, root: Path) -> None:
    assert context.test_suite is not None
    name = context.test_suite.value
    path = name.replace(".", "/")
    if (root / path).is_dir():  # setuptools' loader scanned every module of the package
        top = ["-t", "."] if (root / path / "__init__.py").is_file() else []
        args = ["discover", "-s", path, *top, "-p", "*.py"]
    elif (root / f"{path}.py").is_file() or (root / path.rsplit("/", 1)[0]).exists() or (
            root / f"{path.rsplit('/', 1)[0]}.py").is_file():
        args = [name]  # a module, or a callable returning the suite
        module = root / f"{path}.py"
        if module.is_file() and _ADDITIONAL.search(module.read_text(errors="replace")):
            args.append(f"{name}.additional_tests")  # setuptools' loader called it as well
    else:
        return
    plan.runner, plan.entry, plan.test_args = "unittest", [], args
    plan.packages = [p for p in plan.packages if p != "pytest"]
    plan.sources["test"] = [context.test_suite.source]
    plan.notes.append(f"`setup.py test` ran test_suite {name!r}: unittest loads it the same way")


def apply_legacy_discovery(context: RepoContext, plan: Plan) -> None:
    """Where the project's runner was nose or `setup.py test` and nothing names pytest, make
    the test command collect what that runner collected."""
    if not context.repo_root or context.pytest_mentioned or not _faithful_to_replace(plan):
        return
    root = Path(context.repo_root)
    suite = context.test_suite.value if context.test_suite else ""
    if context.uses_nose or suite.startswith("nose."):
        _nose(context, plan, root)
    elif suite:
        _test_suite(context, plan, root)
