"""noxfile.py, read with ``ast`` (never imported): session Pythons, installs and runs."""

from __future__ import annotations

import ast
import re

from benchsmith.parsing.pyast import ModuleValues, parse_python
from benchsmith.setup.sources.coerce import as_list
from benchsmith.setup.sources.collector import Collector
from benchsmith.setup.sources.commands import join_args

SOURCE = "noxfile.py"
_PREFIXES = {"install": "pip install", "conda_install": "conda install"}
_RUN_METHODS = ("run", "run_always", "run_install")


def _is_session_decorator(node: ast.expr) -> bool:
    func = node.func if isinstance(node, ast.Call) else node
    return (isinstance(func, ast.Attribute) and func.attr == "session") or (
        isinstance(func, ast.Name) and func.id == "session"
    )


def _literal_args(call: ast.Call, values: ModuleValues) -> list[str]:
    args: list[str] = []
    for arg in call.args:
        value = values.value_or(arg.value if isinstance(arg, ast.Starred) else arg, None)
        items = value if isinstance(arg, ast.Starred) and isinstance(value, list) else [value]
        args += [item for item in items if isinstance(item, str)]
    return args


def _session_pythons(
    c: Collector, function: ast.FunctionDef | ast.AsyncFunctionDef, values: ModuleValues
) -> None:
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call) and _is_session_decorator(decorator):
            for keyword in decorator.keywords:
                if keyword.arg in ("python", "py"):
                    for version in as_list(values.value_or(keyword.value, None)):
                        c.python(version, SOURCE)


def read_noxfile(c: Collector) -> None:
    """Pythons of @nox.session(python=...), session.install(...) and session.run(...) calls."""
    text = c.files.text(SOURCE)
    if text is None:
        return
    tree = parse_python(text)
    if tree is None:
        _regex_fallback(c, text)
        return
    values = ModuleValues(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _session_pythons(c, node, values)
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        method = node.func.attr
        args = _literal_args(node, values) if method in _PREFIXES or method in _RUN_METHODS else []
        if args and method in _PREFIXES:
            c.command(f"{_PREFIXES[method]} {join_args(args)}", SOURCE)
        elif args:
            c.command(join_args(args), SOURCE)


def _regex_fallback(c: Collector, text: str) -> None:
    for versions in re.findall(r"\bpython\s*=\s*[\[(]([^\])]*)[\])]", text):
        for version in re.findall(r"['\"]([^'\"]+)['\"]", versions):
            c.python(version, SOURCE)
    for method, raw_args in re.findall(
        r"\.(install|run)\(((?:\s*['\"][^'\"]*['\"]\s*,?)+)\)", text
    ):
        args = re.findall(r"['\"]([^'\"]*)['\"]", raw_args)
        c.command(
            f"pip install {join_args(args)}" if method == "install" else join_args(args), SOURCE
        )
