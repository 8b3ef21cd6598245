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
