"""The checkout's shape: root files, top-level packages, test directories."""

from __future__ import annotations

import os
from pathlib import Path

from benchsmith.setup.sources.collector import Collector

TEST_DIR_NAMES = ("tests", "test", "testing", "t", "src/tests")
NOT_PACKAGES = frozenset(
    [
        "tests",
        "test",
        "testing",
        "docs",
        "doc",
        "examples",
        "example",
        "benchmarks",
        "build",
        "dist",
        "scripts",
        "tools",
    ]
)
NOT_MODULES = frozenset(
    [
        "setup.py",
        "noxfile.py",
        "conftest.py",
        "runtests.py",
        "run_tests.py",
        "tasks.py",
        "fabfile.py",
        "manage.py",
        "versioneer.py",
        "ez_setup.py",
        "distribute_setup.py",
        "bootstrap.py",
        "setupegg.py",
        "hatch_build.py",
        "conf.py",
        "dodo.py",
    ]
)
MAX_FILES_SCANNED = 5000


def _is_module(name: str) -> bool:
    stem, suffix = os.path.splitext(name)
    return (
        suffix == ".py"
        and stem.isidentifier()
        and name not in NOT_MODULES
        and not stem.startswith("__")
        and not stem.startswith("test_")
        and not stem.endswith("_test")
    )


def _packages_in(root: Path, prefix: str) -> list[tuple[str, Path]]:
    """(import name, path) of packages and single-file modules directly in root/prefix."""
    folder = root / prefix
    if not folder.is_dir():
        return []
    found = []
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.is_dir() and entry.name.isidentifier() and entry.name not in NOT_PACKAGES:
            if (entry / "__init__.py").is_file():
                found.append((entry.name, entry))
        elif entry.is_file() and _is_module(entry.name):
            found.append((entry.stem, entry))
    return found


def _has_python_files(root: Path) -> bool:
    scanned = 0
    for _folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "venv")]
        if any(name.endswith(".py") for name in files):
            return True
        scanned += len(files)
        if scanned > MAX_FILES_SCANNED:
            return False
    return False


def read_layout(c: Collector) -> None:
    """Root files, packages (root and src/), test directories; weak project detection."""
    root = c.files.root
    c.ctx.root_files = sorted(p.name for p in root.iterdir() if p.is_file())
    c.ctx.root_dirs = sorted(p.name for p in root.iterdir() if p.is_dir() and p.name != ".git")
    packages = _packages_in(root, "") + _packages_in(root, "src")
    names = [name for name, _ in packages] + c.ctx.top_level_packages
    c.ctx.top_level_packages = list(dict.fromkeys(names))
    test_dirs = [d for d in TEST_DIR_NAMES if c.files.is_dir(d)]
    for _name, path in packages:
        for sub in ("tests", "test"):
            if (path / sub).is_dir():
                test_dirs.append(c.files.rel(path / sub))
    c.ctx.test_dirs = test_dirs
    if not c.ctx.has_python_project and c.files.text("requirements.txt") is not None:
        c.ctx.has_python_project = _has_python_files(root)
