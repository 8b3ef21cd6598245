"""Which test framework the project uses: pytest, unittest or nose."""

from __future__ import annotations

import re

from packaging.requirements import InvalidRequirement, Requirement

from benchsmith.setup.sources.collector import Collector
from benchsmith.setup.sources.requirements import requirement_lines

MAX_TEST_FILES = 200
_PYTEST = re.compile(r"\b(pytest|py\.test)\b")
_UNITTEST_COMMAND = re.compile(r"\bunittest\b|setup\.py\s+test\b")
_NOSE_COMMAND = re.compile(r"\bnosetests\b|-m\s+nose\b|\bnose\.main\b")
_UNITTEST_IMPORT = re.compile(r"^\s*(import unittest|from unittest\b)", re.MULTILINE)


def _requirement_names(lines: list[str]) -> set[str]:
    names = set()
    for line in lines:
        try:
            names.add(Requirement(line).name.lower())
        except InvalidRequirement:
            continue
    return names


def _declared_requirements(c: Collector) -> set[str]:
    ctx = c.ctx
    lines = [r for reqs in ctx.extras.values() for r in reqs]
    lines += [r for reqs in ctx.dependency_groups.values() for r in reqs]
    lines += (
        ctx.poetry_dev_dependencies + ctx.hatch_test_dependencies + [h.value for h in ctx.tox_deps]
    )
    for path in ctx.requirement_files:
        lines += requirement_lines(c.files.text(path) or "")
    return _requirement_names(lines)


def _test_files_import_unittest(c: Collector) -> bool:
    paths = c.files.glob("test*.py") + [p for d in c.ctx.test_dirs for p in c.files.walk(d, 4)]
    paths = [p for p in paths if p.rsplit("/", 1)[-1].startswith("test") and p.endswith(".py")]
    paths = paths[:MAX_TEST_FILES]
    return any(_UNITTEST_IMPORT.search(c.files.text(path) or "") for path in paths)


def detect_frameworks(c: Collector) -> None:
    """Set uses_unittest / uses_nose from commands, configuration, requirements and test files."""
    ctx = c.ctx
    commands = [h.value for h in ctx.test_commands]
    requirements = _declared_requirements(c)
    mentions_pytest = (
        any(_PYTEST.search(command) for command in commands)
        or ctx.pytest_config_file is not None
        or any(name == "pytest" or name.startswith("pytest-") for name in requirements)
        or c.files.exists("conftest.py")
    )
    ctx.pytest_mentioned = mentions_pytest
    ctx.uses_nose = any(_NOSE_COMMAND.search(command) for command in commands) or bool(
        {"nose"} & requirements
    )
    if mentions_pytest:
        ctx.uses_unittest = False
    elif any(_UNITTEST_COMMAND.search(command) for command in commands):
        ctx.uses_unittest = True
    else:
        ctx.uses_unittest = _test_files_import_unittest(c)
