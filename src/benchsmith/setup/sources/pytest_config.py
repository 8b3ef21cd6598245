"""The pytest configuration pytest itself would use, in its own precedence order."""

from __future__ import annotations

from typing import Any

from benchsmith.setup.sources.coerce import as_dict, as_str_list
from benchsmith.setup.sources.collector import Collector

INI_CANDIDATES = (("pytest.ini", "pytest"), (".pytest.ini", "pytest"))
LATE_INI_CANDIDATES = (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest"))


def _words(value: Any) -> list[str]:
    if isinstance(value, list):
        return [w for item in as_str_list(value) for w in item.split()]
    return str(value).split()


def _record(c: Collector, source: str, section: dict[str, Any]) -> None:
    c.ctx.pytest_config_file = source
    c.ctx.pytest_ini_keys = list(section)
    addopts = section.get("addopts", "")
    c.ctx.pytest_addopts = " ".join(_words(addopts))
    c.ctx.pytest_testpaths = _words(section.get("testpaths", ""))
    c.mark(source)


def read_pytest_config(c: Collector) -> None:
    """pytest.ini, then pyproject [tool.pytest.ini_options], then tox.ini [pytest], then
    setup.cfg [tool:pytest]; the first one present wins, as in pytest."""
    for path, section in INI_CANDIDATES:
        ini = c.files.ini(path)
        if ini is not None:  # pytest.ini wins even without a [pytest] section
            _record(c, path, dict(ini[section]) if ini.has_section(section) else {})
            return
    pyproject = c.files.toml("pyproject.toml") or {}
    options = as_dict(pyproject.get("tool")).get("pytest", {})
    if isinstance(options, dict) and isinstance(options.get("ini_options"), dict):
        _record(c, "pyproject.toml", as_dict(options["ini_options"]))
        return
    for path, section in LATE_INI_CANDIDATES:
        ini = c.files.ini(path)
        if ini is not None and ini.has_section(section):
            _record(c, path, dict(ini[section]))
            return
