"""pyproject.toml: PEP 621 metadata, build system, Poetry, PDM, Hatch and dependency groups."""

from __future__ import annotations

import re
from typing import Any

from benchsmith.setup.sources.coerce import as_dict, as_list, as_str, as_str_list
from benchsmith.setup.sources.collector import Collector
from benchsmith.setup.sources.poetry import (
    poetry_requirements,
    poetry_specifier,
    poetry_table_requirements,
)
from benchsmith.setup.sources.versions import classifier_pythons

SOURCE = "pyproject.toml"
POETRY_TEST_GROUPS = ("test", "tests", "testing", "dev")
HATCH_TEST_ENVS = ("default", "test", "tests", "hatch-test")
_HATCH_ARGS = re.compile(r"\{args(?::([^}]*))?\}")  # "{args:tests}" -> its default


def read_pyproject(c: Collector) -> None:
    """Everything pyproject.toml says about the package (tox and pytest are read elsewhere)."""
    data = c.files.toml(SOURCE)
    if data is None:
        return
    project = as_dict(data.get("project"))
    tool = as_dict(data.get("tool"))
    poetry = as_dict(tool.get("poetry"))
    build = as_dict(data.get("build-system"))
    if "project" in data or "poetry" in tool or "build-system" in data:
        c.ctx.has_python_project = True
        c.mark(SOURCE)
    backend = as_str(build.get("build-backend"))
    if backend:
        c.ctx.build_backend = backend
    c.extend_unique(c.ctx.build_requires, as_str_list(build.get("requires")), SOURCE)
    _project(c, project)
    _poetry(c, poetry)
    _dependency_groups(c, as_dict(data.get("dependency-groups")))
    _pdm(c, as_dict(tool.get("pdm")))
    _hatch(c, as_dict(as_dict(tool.get("hatch")).get("envs")))
    setuptools = as_dict(tool.get("setuptools"))
    modules = as_str_list(setuptools.get("packages")) + as_str_list(setuptools.get("py-modules"))
    c.extend_unique(c.ctx.top_level_packages, [m.split(".")[0] for m in modules], SOURCE)


def _project(c: Collector, project: dict[str, Any]) -> None:
    c.project_name(project.get("name"), SOURCE)
    requires = as_str(project.get("requires-python"))
    if requires:
        c.requires_python(requires, SOURCE)
    pythons = classifier_pythons(as_str_list(project.get("classifiers")))
    c.extend_unique(c.ctx.classifier_pythons, pythons, SOURCE)
    for extra, reqs in as_dict(project.get("optional-dependencies")).items():
        c.extend_unique(c.ctx.extras.setdefault(extra, []), as_str_list(reqs), SOURCE)
        c.mark(SOURCE)


def _poetry(c: Collector, poetry: dict[str, Any]) -> None:
    c.project_name(poetry.get("name"), SOURCE)
    dependencies = as_dict(poetry.get("dependencies"))
    python = as_str(dependencies.get("python"))
    specifier = poetry_specifier(python) if python else None
    if specifier:
        c.requires_python(specifier, SOURCE)
    pythons = classifier_pythons(as_str_list(poetry.get("classifiers")))
    c.extend_unique(c.ctx.classifier_pythons, pythons, SOURCE)
    dev = poetry_table_requirements(poetry.get("dev-dependencies"))
    groups = as_dict(poetry.get("group"))
    for name in POETRY_TEST_GROUPS:
        dev += poetry_table_requirements(as_dict(groups.get(name)).get("dependencies"))
    c.extend_unique(c.ctx.poetry_dev_dependencies, dev, SOURCE)
    for extra, names in as_dict(poetry.get("extras")).items():
        reqs = [
            r for n in as_str_list(names) for r in poetry_requirements(n, dependencies.get(n, "*"))
        ]
        c.extend_unique(c.ctx.extras.setdefault(extra, []), reqs, SOURCE)


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _resolve_group(groups: dict[str, Any], name: str, seen: frozenset[str]) -> list[str]:
    by_normal = {_normalize(key): key for key in groups}
    resolved: list[str] = []
    for item in as_list(groups.get(name)):
        include = as_str(as_dict(item).get("include-group"))
        if isinstance(item, str):
            resolved.append(item)
        elif include and _normalize(include) in by_normal and _normalize(include) not in seen:
            key = by_normal[_normalize(include)]
            resolved += _resolve_group(groups, key, seen | {_normalize(include)})
    return resolved


def _dependency_groups(c: Collector, groups: dict[str, Any]) -> None:
    for name in groups:
        reqs = _resolve_group(groups, name, frozenset({_normalize(name)}))
        c.extend_unique(c.ctx.dependency_groups.setdefault(name, []), reqs, SOURCE)
        c.mark(SOURCE)


def _pdm(c: Collector, pdm: dict[str, Any]) -> None:
    for name, reqs in as_dict(pdm.get("dev-dependencies")).items():
        c.extend_unique(
            c.ctx.dependency_groups.setdefault(f"pdm:{name}", []), as_str_list(reqs), SOURCE
        )
        c.mark(SOURCE)
    for script in as_dict(pdm.get("scripts")).values():
        table = as_dict(script)
        command = table.get("cmd", table.get("shell", script))
        text = " ".join(as_str_list(command)) if isinstance(command, list) else as_str(command)
        if text:
            c.script(text, SOURCE)


def _hatch(c: Collector, envs: dict[str, Any]) -> None:
    for name in HATCH_TEST_ENVS:
        env = as_dict(envs.get(name))
        reqs = as_str_list(env.get("dependencies")) + as_str_list(env.get("extra-dependencies"))
        c.extend_unique(c.ctx.hatch_test_dependencies, reqs, SOURCE)
        for script in as_dict(env.get("scripts")).values():
            for text in as_str_list(script):
                c.script(_HATCH_ARGS.sub(lambda m: m.group(1) or "", text), SOURCE)
