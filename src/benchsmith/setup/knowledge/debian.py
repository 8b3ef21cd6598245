"""Debian packages by what a failing command names as missing: the tables (``debian.toml``)."""

from __future__ import annotations

import sys
from importlib import resources

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _load() -> dict[str, dict[str, str]]:
    text = resources.files(__package__).joinpath("debian.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


_TABLES = _load()
HEADER_PACKAGES: dict[str, str] = _TABLES["headers"]
"""C headers (``libxml/parser.h``) -> the -dev package that ships them."""
TOOL_PACKAGES: dict[str, str] = _TABLES["tools"]
"""Commands (``pkg-config``, ``xml2-config``) -> the package that installs them."""
LIBRARY_PACKAGES: dict[str, str] = _TABLES["libraries"]
"""Shared libraries by soname prefix (``libGL.so``) -> the run-time package."""
DEV_PACKAGES: dict[str, str] = _TABLES["dev"]
"""A library's short name (``-llz4``, pkg-config ``fuse3``) -> its -dev package."""
