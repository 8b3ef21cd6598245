"""Python source to an AST, safely from several threads at once.

CPython 3.11's AST validation keeps its recursion depth in interpreter-wide state, so two
threads parsing at the same moment can fail with ``SystemError: AST constructor recursion
depth mismatch`` (seen with `prepare --jobs 2`). Every parse of Python source in benchsmith
goes through :func:`parse_source`, one at a time.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse_source(text: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(text)`, serialised; raises what `ast.parse` raises (SyntaxError, ...)."""
    with _LOCK:
        return ast.parse(text, filename)


def _marks_flaky(node: ast.expr) -> bool:
    """`@pytest.mark.flaky`, `@flaky`, `@mark.flaky(reruns=3)`, `@flaky.flaky(...)`."""
    target = node.func if isinstance(node, ast.Call) else node
    return ((isinstance(target, ast.Attribute) and target.attr == "flaky")
            or (isinstance(target, ast.Name) and target.id == "flaky"))


def declared_flaky(text: str, path: str) -> list[str]:
    """Node-ID prefixes of the tests a test module itself declares flaky: functions, methods
    and classes decorated with a `flaky` mark, or the whole module (`pytestmark`). Such a test
    passes or fails by chance (timing, the network), so it is no label."""
    try:
        tree = parse_source(text, path)
    except (SyntaxError, ValueError):
        return []
    found: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            marks = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
            if any(_marks_flaky(mark) for mark in marks):
                return [path]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if any(_marks_flaky(d) for d in node.decorator_list):
                found.append(f"{path}::{node.name}")
            elif isinstance(node, ast.ClassDef):
                found += [f"{path}::{node.name}::{item.name}" for item in node.body
                          if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                          and any(_marks_flaky(d) for d in item.decorator_list)]
    return found
