"""Other CI services: Travis, CircleCI, Azure Pipelines, GitLab CI and AppVeyor."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from benchsmith.setup.sources.coerce import as_dict, as_str
from benchsmith.setup.sources.collector import Collector
from benchsmith.setup.sources.versions import image_python, tox_env_pythons, windows_python_dir

WALK_BUDGET = 20_000
_TOXENV = re.compile(r"\bTOXENV=['\"]?([\w.,{}\-]+)")


@dataclass(frozen=True)
class CIService:
    """Where one CI service keeps shell commands and Python versions in its YAML."""

    paths: tuple[str, ...]
    command_keys: frozenset[str]
    python_keys: frozenset[str] = frozenset()
    image_keys: frozenset[str] = frozenset({"image"})


SERVICES = (
    CIService(
        (".travis.yml",),
        frozenset({"before_install", "install", "before_script", "script"}),
        frozenset({"python"}),
    ),
    CIService((".circleci/config.yml",), frozenset({"run"}), frozenset({"python-version"})),
    CIService(
        ("azure-pipelines.yml", "azure-pipelines.yaml", ".azure-pipelines.yml"),
        frozenset({"script", "bash"}),
        frozenset({"python.version", "pythonversion", "python_version", "versionspec", "python"}),
    ),
    CIService(
        (".gitlab-ci.yml",), frozenset({"script", "before_script"}), frozenset({"python_version"})
    ),
    CIService(
        ("appveyor.yml", ".appveyor.yml"),
        frozenset({"install", "before_build", "build_script", "before_test", "test_script"}),
        frozenset({"python_version", "python"}),
    ),
)


def _walk(node: Any, key: str = "", budget: list[int] | None = None) -> Iterator[tuple[str, Any]]:
    """(key, value) for every mapping entry and every list item (under its list's key)."""
    budget = [WALK_BUDGET] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0:
        return
    if isinstance(node, dict):
        for child_key, child in node.items():
            name = str(child_key).lower()
            yield name, child
            yield from _walk(child, name, budget)
    elif isinstance(node, list):
        for item in node:
            yield key, item
            yield from _walk(item, key, budget)


def _command_text(value: Any) -> str | None:
    if isinstance(value, dict):
        value = as_dict(value)
        return as_str(value.get("command")) or as_str(value.get("cmd")) or as_str(value.get("ps"))
    return as_str(value)


def _python(c: Collector, service: CIService, key: str, value: Any, path: str) -> None:
    if key in service.python_keys:
        text = str(value) if isinstance(value, (str, int, float)) else ""
        c.python(windows_python_dir(text) or value, path)
    if key in service.image_keys:
        image = as_str(value) or as_str(as_dict(value).get("name"))
        c.python(image_python(image) if image else None, path)
    if key in ("toxenv", "tox_env") and isinstance(value, str):
        for minor in tox_env_pythons(value):
            c.python(minor, path)
    for match in _TOXENV.finditer(value if isinstance(value, str) else ""):
        for env in match.group(1).split(","):
            for minor in tox_env_pythons(env):
                c.python(minor, path)


def read_other_ci(c: Collector) -> None:
    """Commands and Python versions of every non-GitHub CI configuration present."""
    for service in SERVICES:
        for path in service.paths:
            doc = c.files.yaml(path)
            if not isinstance(doc, dict):
                continue
            for key, value in _walk(doc):
                text = _command_text(value) if key in service.command_keys else None
                if text:
                    c.script(text, path)
                _python(c, service, key, value, path)
