"""Narrow untrusted parsed values (TOML, YAML, INI) to the shapes readers expect."""

from __future__ import annotations

from typing import Any

from benchsmith.parsing.setuptools_config import ini_lines


def as_dict(value: Any) -> dict[str, Any]:
    """`value` if it is a mapping (string keys only), else an empty dict."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str)}


def as_list(value: Any) -> list[Any]:
    """`value` if it is a list, a one-item list for a scalar, empty for None/mappings."""
    if isinstance(value, list):
        return value
    if value is None or isinstance(value, dict):
        return []
    return [value]


def as_str(value: Any) -> str | None:
    """`value` if it is a string, else None."""
    return value if isinstance(value, str) else None


def as_str_list(value: Any) -> list[str]:
    """The string items of a list (or a lone string), other items dropped."""
    return [item for item in as_list(value) if isinstance(item, str)]


def ini_list(value: str) -> list[str]:
    """Items of an INI list value separated by newlines and/or commas."""
    return [item.strip() for line in ini_lines(value) for item in line.split(",") if item.strip()]
