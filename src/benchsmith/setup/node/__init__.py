"""Node.js repositories (JavaScript and TypeScript): runtime, dependencies and test runners."""

from __future__ import annotations

from typing import Any

__all__ = ["NodeChoice", "NodeContext", "choose_node", "fetch_node", "is_node_project",
           "read_node_context"]

_LAZY = {
    "NodeContext": "benchsmith.setup.node.context",
    "is_node_project": "benchsmith.setup.node.context",
    "read_node_context": "benchsmith.setup.node.context",
    "NodeChoice": "benchsmith.setup.node.runtime",
    "choose_node": "benchsmith.setup.node.runtime",
    "fetch_node": "benchsmith.setup.node.fetch",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)
