"""What is done: turn a repository at a date into a validated environment."""

from __future__ import annotations

from typing import Any

__all__ = ["ReferenceDB", "SetupEngine", "SetupOptions", "SetupRecord"]

_LAZY = {
    "SetupEngine": "benchsmith.setup.engine",
    "SetupOptions": "benchsmith.setup.engine",
    "SetupRecord": "benchsmith.setup.record",
    "ReferenceDB": "benchsmith.setup.refdb",
}


def __getattr__(name: str) -> Any:
    # Lazy, so importing one submodule does not import the whole engine.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)
