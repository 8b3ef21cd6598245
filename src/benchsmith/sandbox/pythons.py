"""Find the CPython interpreters this machine already has (uv cannot download them here)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

_MINOR = re.compile(r"^(\d)\.(\d+)")


def _pyenv_root() -> Path | None:
    root = os.environ.get("PYENV_ROOT")
    if root:
        return Path(root)
    if shutil.which("pyenv"):
        try:
            out = subprocess.run(["pyenv", "root"], capture_output=True, text=True, timeout=10)
            if out.returncode == 0 and out.stdout.strip():
                return Path(out.stdout.strip())
        except (OSError, subprocess.TimeoutExpired):
            pass
    default = Path.home() / ".pyenv"
    return default if default.is_dir() else None


def _pyenv_interpreters() -> dict[str, str]:
    found: dict[str, str] = {}
    root = _pyenv_root()
    if root is None or not (root / "versions").is_dir():
        return found
    for version_dir in sorted((root / "versions").iterdir()):
        match = _MINOR.match(version_dir.name)
        if not match:  # pypy, miniconda, virtualenvs
            continue
        minor = f"{match.group(1)}.{match.group(2)}"
        exe = version_dir / "bin" / f"python{minor}"
        if exe.is_file():
            found[minor] = str(exe)  # sorted, so the newest patch release wins
    return found


def _path_interpreters() -> dict[str, str]:
    found: dict[str, str] = {}
    shims = str((_pyenv_root() or Path("/nonexistent")) / "shims")
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not directory or directory == shims or not os.path.isdir(directory):
            continue
        for name in os.listdir(directory):
            match = re.fullmatch(r"python(\d\.\d+)", name)
            if match and os.access(os.path.join(directory, name), os.X_OK):
                found.setdefault(match.group(1), os.path.join(directory, name))
    return found


def _uv_interpreters(uv: str) -> dict[str, str]:
    try:
        out = subprocess.run(
            [uv, "python", "list", "--only-installed", "--output-format", "json"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return {}
    if out.returncode != 0:
        return {}
    found: dict[str, str] = {}
    try:
        entries = json.loads(out.stdout)
    except json.JSONDecodeError:
        return {}
    for entry in entries:
        if entry.get("implementation") != "cpython" or not entry.get("path"):
            continue
        match = _MINOR.match(str(entry.get("version", "")))
        if match:
            found.setdefault(f"{match.group(1)}.{match.group(2)}", entry["path"])
    return found


@lru_cache(maxsize=1)
def host_pythons() -> dict[str, str]:
    """Map each available CPython minor version to an interpreter path (pyenv first)."""
    from benchsmith.sandbox.tools import uv_binary

    found = _uv_interpreters(uv_binary())
    found.update(_path_interpreters())
    found.update(_pyenv_interpreters())
    return dict(sorted(found.items(), key=lambda item: version_key(item[0])))


def version_key(minor: str) -> tuple[int, int]:
    """Sort key for "3.10" style versions."""
    major, _, rest = minor.partition(".")
    return int(major), int(rest or 0)
