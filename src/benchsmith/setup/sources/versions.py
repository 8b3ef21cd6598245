"""Turn the many spellings of a Python version into "X.Y" minors."""

from __future__ import annotations

import itertools
import re
from typing import Any

_MINOR = re.compile(r"^(?:cpython-?|python-?)?([23])\.(\d{1,2})(?![\d])")
_TOX_ENV = re.compile(r"^py([23])\.?(\d{1,2})$")
_WINDOWS_DIR = re.compile(r"python([23])(\d{1,2})(?:-x64|-32)?\\?$", re.IGNORECASE)
_IMAGE = re.compile(r"(?:^|/)python:([23])\.(\d{1,2})(?![\d])")


def python_minor(value: Any) -> str | None:
    """ "3.10", 3.9, "3.11-dev", "3.12.0-beta.1" -> "X.Y"; PyPy, "3.x" and expressions -> None."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    text = str(value).strip().strip("'\"").lower()
    if "${{" in text or "pypy" in text or "graalpy" in text:
        return None
    match = _MINOR.match(text)
    if not match:
        return None
    return f"{match.group(1)}.{int(match.group(2))}"


def windows_python_dir(value: str) -> str | None:
    r"""AppVeyor's ``C:\Python38-x64`` -> "3.8"."""
    match = _WINDOWS_DIR.search(value.strip())
    return f"{match.group(1)}.{int(match.group(2))}" if match else None


def image_python(value: str) -> str | None:
    """Docker images ``python:3.8-slim`` or ``cimg/python:3.10`` -> the minor version."""
    match = _IMAGE.search(value.strip())
    return f"{match.group(1)}.{int(match.group(2))}" if match else None


def tox_env_pythons(env: str) -> list[str]:
    """Minor versions named by the factors of a tox env: "py38-django32" -> ["3.8"]."""
    found = []
    for factor in env.strip().split("-"):
        match = _TOX_ENV.match(factor.strip())
        if match:
            found.append(f"{match.group(1)}.{int(match.group(2))}")
    return found


def expand_braces(text: str) -> list[str]:
    """tox-style brace expansion: "py3{8,9}-dj{32,40}" -> four env names."""
    parts = re.split(r"(\{[^{}]*\})", text)
    choices = [p[1:-1].split(",") if p.startswith("{") else [p] for p in parts]
    return ["".join(combo).strip() for combo in itertools.product(*choices)]


def split_envlist(value: str) -> list[str]:
    """Env names of a tox envlist (commas/newlines outside braces), braces expanded."""
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for char in value:
        if char in ",\n" and depth == 0:
            items.append("".join(current))
            current = []
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        current.append(char)
    items.append("".join(current))
    envs: list[str] = []
    for item in items:
        item = item.split("#", 1)[0].strip()
        if item:
            envs.extend(env for env in expand_braces(item) if env)
    return envs


_CLASSIFIER = re.compile(r"^Programming Language :: Python :: ([23])\.(\d{1,2})\s*$")


def classifier_pythons(classifiers: list[str]) -> list[str]:
    """ "Programming Language :: Python :: 3.8" -> "3.8" (X.Y classifiers only)."""
    found = []
    for classifier in classifiers:
        match = _CLASSIFIER.match(classifier.strip())
        if match:
            found.append(f"{match.group(1)}.{int(match.group(2))}")
    return found
