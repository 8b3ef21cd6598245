"""A repository's own test script, recognised by its shape (read with ``ast``, never run):

- ``runtests``: a ``runtests.py`` (at the root or in a top-level test directory) whose argument
  parser declares ``--settings``, a verbosity option and positional test labels (``--parallel``
  too since Django 1.9: it is then run with ``--parallel 1``),
  with a settings module beside it (the one the script defaults to, preferring one that uses
  SQLite): Django's ``tests/runtests.py``.
- ``bintest``: a ``bin/test`` that calls the ``test(...)`` function of a package whose runner
  module is ``<pkg>/testing/runtests.py`` or ``<pkg>/utilities/runtests.py``: SymPy's shape.
"""

from __future__ import annotations

import ast
from typing import Literal

from benchsmith.core import TestScript
from benchsmith.parsing.pyast import parse_python
from benchsmith.setup.sources.collector import Collector
from benchsmith.setup.sources.repo_files import RepoFiles

_RUNTESTS = ("tests/runtests.py", "test/runtests.py", "runtests.py")
_RUNNER_MODULES = ("testing/runtests.py", "utilities/runtests.py")
_SQLITE = "django.db.backends.sqlite3"
BINTEST_SEED = 1  # a fixed --seed: the runner's random choices are the same in every run


def read_test_scripts(c: Collector) -> None:
    """Record the repository's own test script when one has a shape benchsmith runs."""
    runner: Literal["runtests", "bintest"] = "runtests"
    script = runtests_script(c.files)
    if script is None:
        script, runner = bintest_script(c.files), "bintest"
    if script is not None:
        c.ctx.test_script, c.ctx.test_script_runner = script, runner
        c.mark(script.path)


def declared_options(tree: ast.Module) -> tuple[list[str], list[str]]:
    """The option strings (``-v``, ``--settings``) and positional names an argparse or optparse
    parser in `tree` declares."""
    options: list[str] = []
    positional: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("add_argument", "add_option")):
            continue
        for arg in node.args:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                (options if arg.value.startswith("-") else positional).append(arg.value)
    return list(dict.fromkeys(options)), positional


def _settings_defaults(tree: ast.Module) -> list[str]:
    """Settings modules the script defaults to: ``os.environ.setdefault("DJANGO_SETTINGS_MODULE",
    X)`` and the ``default=`` of its ``--settings`` option."""
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        words = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if node.func.attr == "setdefault" and words[:1] == ["DJANGO_SETTINGS_MODULE"] and len(words) > 1:
            found.append(words[1])
        elif node.func.attr == "add_argument" and "--settings" in words:
            found += [k.value.value for k in node.keywords if k.arg == "default"
                      and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)]
    return found


def runtests_script(files: RepoFiles) -> TestScript | None:
    """A Django-shaped ``runtests.py`` and the settings module it runs with, or None."""
    for path in _RUNTESTS:
        tree = parse_python(files.text(path) or "") if files.exists(path) else None
        if tree is None:
            continue
        options, positional = declared_options(tree)
        verbosity = "--verbosity" in options or "-v" in options
        if not (verbosity and positional and "--settings" in options):
            continue
        folder = path.rpartition("/")[0]
        prefix = f"{folder}/" if folder else ""
        beside = [p.removeprefix(prefix).removesuffix(".py") for p in files.glob(f"{prefix}*.py")]
        candidates = [m for m in dict.fromkeys([*_settings_defaults(tree), *beside])
                      if files.exists(f"{prefix}{m.replace('.', '/')}.py")]
        sqlite = [m for m in candidates if _SQLITE in (files.text(f"{prefix}{m.replace('.', '/')}.py") or "")]
        settings = (sqlite or [m for m in candidates if m in _settings_defaults(tree)] or [""])[0]
        if not settings:
            continue
        parallel = ", --parallel" if "--parallel" in options else ""
        rule = (f"{path} declares --settings{parallel}, a verbosity option and test labels; "
                f"settings {settings} ({prefix}{settings.replace('.', '/')}.py"
                f"{', SQLite' if settings in sqlite else ''})")
        return TestScript(path=path, options=options, settings=settings, rule=rule)
    return None


def _called_package(tree: ast.Module) -> str | None:
    """The package whose ``test(...)`` the script calls: ``pkg.test(...)`` after ``import pkg``,
    or ``test(...)`` imported from ``pkg.<...>.runtests``."""
    imported: set[str] = set()
    from_runner: str | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.asname or alias.name for alias in node.names if "." not in alias.name}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").endswith(".runtests") \
                and any(alias.name == "test" for alias in node.names):
            from_runner = (node.module or "").split(".")[0]
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "test" and isinstance(func.value, ast.Name) \
                and func.value.id in imported:
            return func.value.id
        if isinstance(func, ast.Name) and func.id == "test" and from_runner:
            return from_runner
    return None


def bintest_script(files: RepoFiles) -> TestScript | None:
    """A ``bin/test`` driving its package's own runner module, or None."""
    path = "bin/test"
    tree = parse_python(files.text(path) or "") if files.exists(path) else None
    package = _called_package(tree) if tree is not None else None
    module = next((f"{package}/{m}" for m in _RUNNER_MODULES if files.exists(f"{package}/{m}")),
                  None) if package else None
    if tree is None or module is None:
        return None
    options, _ = declared_options(tree)
    seed = BINTEST_SEED if "--seed" in options else None
    rule = f"{path} calls {package}.test(), the runner in {module}"
    return TestScript(path=path, options=options, seed=seed, rule=rule)
