"""Safe, cached access to a checkout's files: text, TOML, INI and YAML that never raise."""

from __future__ import annotations

import configparser
import os
import sys
from pathlib import Path
from typing import Any

import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MAX_FILE_BYTES = 2_000_000
SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".tox",
        ".nox",
        ".venv",
        "venv",
        "node_modules",
        "build",
        "dist",
        "__pycache__",
        "site-packages",
    }
)


class _RawScalarLoader(yaml.SafeLoader):
    """Safe YAML loader that keeps floats as written (``3.10`` stays "3.10", not 3.1)."""


def _float_as_text(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    return loader.construct_scalar(node)  # type: ignore[arg-type]


def _unknown_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> None:
    return None  # GitLab's !reference and other custom tags carry no commands we can use


_RawScalarLoader.add_constructor("tag:yaml.org,2002:float", _float_as_text)
_RawScalarLoader.add_multi_constructor("!", _unknown_tag)


class RepoFiles:
    """Reads files of one checkout by repository-relative path; bad files read as None."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._text: dict[str, str | None] = {}
        self._parsed: dict[str, Any] = {}

    def exists(self, rel: str) -> bool:
        """Whether `rel` is a regular file."""
        return (self.root / rel).is_file()

    def is_dir(self, rel: str) -> bool:
        """Whether `rel` is a directory."""
        return (self.root / rel).is_dir()

    def rel(self, path: Path) -> str:
        """`path` relative to the checkout, with forward slashes."""
        return path.relative_to(self.root).as_posix()

    def glob(self, pattern: str) -> list[str]:
        """Repository-relative paths of regular files matching `pattern`, sorted."""
        found = []
        for path in self.root.glob(pattern):
            parts = path.relative_to(self.root).parts
            if path.is_file() and not SKIPPED_DIRS.intersection(parts[:-1]):
                found.append(self.rel(path))
        return sorted(found)

    def walk(self, rel_dir: str, max_depth: int) -> list[str]:
        """Files under `rel_dir` at most `max_depth` levels deep (symlinks not followed), sorted."""
        found = []
        top = self.root / rel_dir
        for folder, dirs, files in os.walk(top):
            depth = len(Path(folder).relative_to(top).parts)
            dirs[:] = [] if depth >= max_depth else [d for d in dirs if d not in SKIPPED_DIRS]
            found += [self.rel(Path(folder) / name) for name in files]
        return sorted(found)

    def text(self, rel: str) -> str | None:
        """UTF-8 text of a file, or None when missing, too large or undecodable."""
        if rel not in self._text:
            path = self.root / rel
            inside = path.resolve().is_relative_to(self.root)  # no symlinks out of the checkout
            self._text[rel] = self._read(path) if inside else None
        return self._text[rel]

    def toml(self, rel: str) -> dict[str, Any] | None:
        """Parsed TOML document, or None when missing or malformed."""
        return self._parse(rel, "toml", _load_toml)

    def ini(self, rel: str) -> configparser.ConfigParser | None:
        """Parsed INI file (no interpolation, keys case-preserved), or None when malformed."""
        return self._parse(rel, "ini", load_ini)

    def yaml(self, rel: str) -> Any:
        """Parsed YAML document (floats kept as text), or None when malformed."""
        return self._parse(rel, "yaml", _load_yaml)

    def _parse(self, rel: str, kind: str, loader: Any) -> Any:
        key = f"{kind}:{rel}"
        if key not in self._parsed:
            text = self.text(rel)
            self._parsed[key] = None if text is None else loader(text)
        return self._parsed[key]

    @staticmethod
    def _read(path: Path) -> str | None:
        try:
            if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
                return None
            return path.read_bytes().decode("utf-8-sig")
        except (OSError, UnicodeDecodeError):
            return None


def _load_toml(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return None


def load_ini(text: str) -> configparser.ConfigParser | None:
    """Parse INI text without interpolation, case-preserving; None when malformed."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(text)
    except (configparser.Error, ValueError):
        return None
    return parser


def _load_yaml(text: str) -> Any:
    try:
        return yaml.load(text, Loader=_RawScalarLoader)
    except (yaml.YAMLError, ValueError, RecursionError):
        return None
