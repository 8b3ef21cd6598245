"""Node.js repositories (JavaScript and TypeScript): runtime, dependencies and test runners."""

from __future__ import annotations

from typing import Any

__all__ = ["NodeTestCommand", "NodeTestRunner", "detect_test_runner", "render_build_commands",
           "render_test_command"]

_LAZY = {
    "NodeTestRunner": "benchsmith.setup.node.runners",
    "detect_test_runner": "benchsmith.setup.node.runners",
    "NodeTestCommand": "benchsmith.setup.node.commands",
    "render_build_commands": "benchsmith.setup.node.commands",
    "render_test_command": "benchsmith.setup.node.commands",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)
