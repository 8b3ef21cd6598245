"""Import name -> PyPI distribution: the table (``imports.toml``) and the lookup."""

from __future__ import annotations

import sys
from importlib import resources

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _load() -> dict[str, str]:
    text = resources.files(__package__).joinpath("imports.toml").read_text(encoding="utf-8")
    table: dict[str, str] = {}
    for section in tomllib.loads(text).values():
        table.update(section)
    return table


IMPORT_TO_DISTRIBUTION: dict[str, str] = _load()


def distribution_for_import(module: str) -> str:
    """Return the distribution that provides `module` (a dotted name), guessing if unknown.

    The longest dotted prefix found in IMPORT_TO_DISTRIBUTION wins; otherwise the top-level
    name with "_" turned into "-", which PyPI's name normalisation usually resolves.
    """
    parts = module.strip().split(".")
    if not parts[0]:
        raise ValueError(f"not an absolute module name: {module!r}")
    for end in range(len(parts), 0, -1):
        dist = IMPORT_TO_DISTRIBUTION.get(".".join(parts[:end]))
        if dist is not None:
            return dist
    return parts[0].replace("_", "-")
