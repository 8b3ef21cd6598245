"""The pytest configuration pytest itself would use, in its own precedence order."""

from __future__ import annotations

import ast
from typing import Any

from benchsmith.parsing.python_source import parse_source
from benchsmith.setup.sources.coerce import as_dict, as_str_list
from benchsmith.setup.sources.collector import Collector

INI_CANDIDATES = (("pytest.ini", "pytest"), (".pytest.ini", "pytest"))
LATE_INI_CANDIDATES = (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest"))


def _words(value: Any) -> list[str]:
    if isinstance(value, list):
        return [w for item in as_str_list(value) for w in item.split()]
    return str(value).split()


def _record(c: Collector, source: str, section: dict[str, Any]) -> None:
    c.ctx.pytest_config_file = source
    c.ctx.pytest_ini_keys = list(section)
    addopts = section.get("addopts", "")
    c.ctx.pytest_addopts = " ".join(_words(addopts))
    c.ctx.pytest_testpaths = _words(section.get("testpaths", ""))
    c.mark(source)


def read_pytest_config(c: Collector) -> None:
    """pytest.ini, then pyproject [tool.pytest.ini_options], then tox.ini [pytest], then
    setup.cfg [tool:pytest]; the first one present wins, as in pytest."""
    for path, section in INI_CANDIDATES:
        ini = c.files.ini(path)
        if ini is not None:  # pytest.ini wins even without a [pytest] section
            _record(c, path, dict(ini[section]) if ini.has_section(section) else {})
            return
    pyproject = c.files.toml("pyproject.toml") or {}
    options = as_dict(pyproject.get("tool")).get("pytest", {})
    if isinstance(options, dict) and isinstance(options.get("ini_options"), dict):
        _record(c, "pyproject.toml", as_dict(options["ini_options"]))
        return
    for path, section in LATE_INI_CANDIDATES:
        ini = c.files.ini(path)
        if ini is not None and ini.has_section(section):
            _record(c, path, dict(ini[section]))
            return


CONFTEST_GLOBS = ("conftest.py", "*/conftest.py", "*/*/conftest.py")
# argparse actions that take no value; any other (the default "store", "append") takes one.
_FLAG_ACTIONS = {"store_true", "store_false", "store_const", "append_const", "count", "help",
                 "version"}


def read_conftest_options(c: Collector) -> None:
    """The long options the project's conftest.py files add (``parser.addoption``) that take a
    value, so a command's ``--run-optional no_jupyter`` keeps its value. Read with ``ast``."""
    for path in sorted({p for pattern in CONFTEST_GLOBS for p in c.files.glob(pattern)}):
        text = c.files.text(path)
        try:
            tree = parse_source(text or "")
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and _called(node.func) == "addoption"):
                continue
            action = next((k.value for k in node.keywords if k.arg == "action"), None)
            if isinstance(action, ast.Constant) and action.value in _FLAG_ACTIONS:
                continue
            if any(k.arg == "nargs" and isinstance(k.value, ast.Constant) and k.value.value in (0, "?")
                   for k in node.keywords):
                continue
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith("--"):
                    c.extend_unique(c.ctx.pytest_value_options, [arg.value], path)


def _called(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
