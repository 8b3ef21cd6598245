"""tox environment names."""

from __future__ import annotations

import re

_TOX_PYTHON_FACTOR = re.compile(r"^(?:py|python)(\d)\.?(\d+)$")


def python_from_tox_env(name: str) -> str | None:
    """Return "X.Y" for a tox env name such as "py38", "py3.10" or "py310-django32".

    Returns None when no factor pins a CPython minor version ("py3", "pypy3", "lint").
    Expects one env name; brace and comma expansion of an envlist is the caller's job.
    """
    for factor in name.strip().split("-"):
        match = _TOX_PYTHON_FACTOR.match(factor)
        if match:
            return f"{match.group(1)}.{match.group(2)}"
    return None
