"""Evaluate literal values in Python files (setup.py, noxfile.py) without running them."""

from __future__ import annotations

import ast
from typing import Any

from benchsmith.parsing.python_source import parse_source


class Unresolved(Exception):
    """The expression is not a literal or a reference to one."""


def parse_python(text: str) -> ast.Module | None:
    """The module's AST, or None when it does not parse (e.g. Python 2 syntax)."""
    try:
        return parse_source(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


class ModuleValues:
    """Module-level ``NAME = <expr>`` assignments, evaluated on demand as literals."""

    def __init__(self, tree: ast.Module) -> None:
        self.nodes: dict[str, ast.expr] = {}
        for stmt in tree.body:
            for inner in stmt.body if isinstance(stmt, ast.Try) else [stmt]:
                self._record(inner)

    def _record(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                self._assign(target, stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self._assign(stmt.target, stmt.value)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            old = self.nodes.get(stmt.target.id)
            if old is not None and isinstance(stmt.op, ast.Add):
                self.nodes[stmt.target.id] = ast.BinOp(left=old, op=ast.Add(), right=stmt.value)

    def _assign(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.nodes[target.id] = value
        elif (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and isinstance(self.nodes.get(target.value.id), ast.Dict)
            and isinstance(target.slice, ast.Constant)
        ):
            old = self.nodes[target.value.id]
            assert isinstance(old, ast.Dict)
            self.nodes[target.value.id] = ast.Dict(
                keys=[*old.keys, target.slice], values=[*old.values, value]
            )

    def evaluate(self, node: ast.expr, depth: int = 0) -> Any:
        """The literal value of `node`; raises Unresolved for anything computed at runtime."""
        if depth > 20:
            raise Unresolved("too deep")
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name) and node.id in self.nodes:
            return self.evaluate(self.nodes[node.id], depth + 1)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items: list[Any] = []
            for element in node.elts:
                if isinstance(element, ast.Starred):
                    items.extend(self._sequence(element.value, depth))
                else:
                    items.append(self.evaluate(element, depth + 1))
            return items
        if isinstance(node, ast.Dict):
            return self._dict(node.keys, node.values, depth)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "dict"
        ):
            keys: list[ast.expr | None] = [
                ast.Constant(k.arg) if k.arg else None for k in node.keywords
            ]
            if not node.args:
                return self._dict(keys, [k.value for k in node.keywords], depth)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.evaluate(node.left, depth + 1), self.evaluate(node.right, depth + 1)
            if type(left) is type(right) and isinstance(left, (list, str)):
                return left + right
        raise Unresolved(ast.dump(node)[:80])

    def _sequence(self, node: ast.expr, depth: int) -> list[Any]:
        value = self.evaluate(node, depth + 1)
        if not isinstance(value, list):
            raise Unresolved("not a sequence")
        return value

    def _dict(
        self, keys: list[ast.expr | None], values: list[ast.expr], depth: int
    ) -> dict[Any, Any]:
        """A dict of the entries that resolve; unresolvable entries are left out."""
        result: dict[Any, Any] = {}
        for key, value in zip(keys, values, strict=True):
            try:
                if key is None:
                    nested = self.evaluate(value, depth + 1)
                    result.update(nested if isinstance(nested, dict) else {})
                else:
                    result[self.evaluate(key, depth + 1)] = self.evaluate(value, depth + 1)
            except (Unresolved, TypeError):
                continue
        return result

    def value_or(self, node: ast.expr, default: Any) -> Any:
        """`evaluate(node)`, or `default` when it does not resolve."""
        try:
            return self.evaluate(node)
        except (Unresolved, TypeError, RecursionError):
            return default


def setup_call(tree: ast.Module) -> ast.Call | None:
    """The setup() call of a setup.py (the one with the most keywords)."""
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == "setup")
            or (isinstance(node.func, ast.Attribute) and node.func.attr == "setup")
        )
    ]
    return max(calls, key=lambda call: len(call.keywords), default=None)
