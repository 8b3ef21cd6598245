"""What a Python project declares in setup.cfg, setup.py and pyproject.toml, read without
running anything: its requirement lists, and its build settings apart from what only describes
it (so that two commits can be told to install the same project or not)."""

from __future__ import annotations

import ast
import configparser
import re
import sys
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from benchsmith.parsing.pyast import ModuleValues, Unresolved, parse_python, setup_call


def ini_lines(value: str) -> list[str]:
    """Non-empty, non-comment lines of a multi-line INI value."""
    lines = (line.strip() for line in value.splitlines())
    return [line for line in lines if line and not line.startswith(("#", ";"))]


def cfg_requirements(value: str) -> list[str]:
    """A setup.cfg requirement list: one per line, or setuptools' one-line list split on ";"
    (which also starts environment markers)."""
    lines = [line.split(" #", 1)[0].strip() for line in ini_lines(value)]
    if len(lines) == 1 and ";" in lines[0]:
        try:
            Requirement(lines[0])
        except InvalidRequirement:
            return [part.strip() for part in lines[0].split(";") if part.strip()]
    return lines


def cfg_interpolate(section: dict[str, str], value: str, depth: int = 0) -> str:
    """setuptools reads setup.cfg with ConfigParser's ``%(key)s`` interpolation."""

    def expand(match: re.Match[str]) -> str:
        if depth > 5 or match.group(1) not in section:
            return match.group(0)
        return cfg_interpolate(section, section[match.group(1)], depth + 1)

    return re.sub(r"%\(([^)]+)\)s", expand, value).replace("%%", "%")


# keys that describe a project without changing what installing it makes
DESCRIPTIVE = frozenset({
    "description", "long_description", "long_description_content_type", "readme", "author",
    "author_email", "authors", "maintainer", "maintainer_email", "maintainers", "url",
    "download_url", "project_urls", "urls", "classifiers", "keywords", "license",
    "license_file", "license_files", "platforms", "python_requires", "requires-python",
    "zip_safe", "test_suite", "tests_require", "home_page", "home-page", "summary"})
# which packages and data files the project has: an editable install reads them where they are
LAYOUT = frozenset({"packages", "package_data", "package-data", "include_package_data",
                    "include-package-data", "exclude_package_data", "exclude-package-data",
                    "options.packages.find", "options.package_data",
                    "options.exclude_package_data"})
REQUIRES = ("install_requires", "dependencies")
_IGNORED = DESCRIPTIVE | LAYOUT | set(REQUIRES)
# pyproject tables of the build backends, whose settings shape the install
_BUILD_TOOLS = ("setuptools", "setuptools_scm", "setuptools-scm", "poetry", "flit", "hatch",
                "pdm", "maturin", "scikit-build", "meson-python", "versioneer")


class Declared:
    """One build file's settings that shape an editable install (`build`, comparable between
    commits: not descriptive metadata, the layout, or the requirements)
    and its declared requirements (`requires`: None where they are computed, [] where none).
    `build` is None where the file cannot be read."""

    def __init__(self, build: Any, requires: list[str] | None) -> None:
        self.build, self.requires = build, requires


def declared(name: str, text: str | None) -> Declared:
    """What the build file `name` (setup.py, setup.cfg or pyproject.toml) holding `text`
    declares; an absent file declares nothing."""
    if text is None:
        return Declared({}, [])
    reader = {"setup.py": _setup_py, "setup.cfg": _setup_cfg, "pyproject.toml": _pyproject}[name]
    return reader(text)


def _pyproject(text: str) -> Declared:
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return Declared(None, None)
    project = dict(data.get("project") or {})
    requires = project.pop("dependencies", [])
    dynamic = project.get("dynamic") or []
    tools = {key: _without(value) for key, value in (data.get("tool") or {}).items()
             if key in _BUILD_TOOLS}
    described = {"build-system": data.get("build-system"), "tool": tools,
                 "project": _without(project)}
    build = {key: value for key, value in described.items() if value}
    readable = isinstance(requires, list) and "dependencies" not in dynamic
    return Declared(build, [str(r) for r in requires] if readable else None)


def _setup_cfg(text: str) -> Declared:
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return Declared(None, None)
    build: dict[str, dict[str, str]] = {}
    for section in parser.sections():
        if section not in LAYOUT and (section in ("metadata", "options")
                                      or section.startswith("options.")):
            entries = {key: " ".join(ini_lines(value)) for key, value in parser[section].items()
                       if key not in _IGNORED}
            if entries:
                build[section] = entries
    options = dict(parser["options"]) if parser.has_section("options") else {}
    requires = cfg_requirements(cfg_interpolate(options, options.get("install_requires", "")))
    computed = any(line.startswith(("file:", "attr:")) for line in requires)
    return Declared(build, None if computed else requires)


def _setup_py(text: str) -> Declared:
    tree = parse_python(text)
    call = setup_call(tree) if tree else None
    if tree is None or call is None:
        return Declared(None, None)
    values = ModuleValues(tree)
    requires: list[str] | None = []
    skipped: set[str] = set()
    for keyword in call.keywords:
        if keyword.arg is None:  # setup(**kwargs): what it holds is not known here
            requires = None
        elif keyword.arg in REQUIRES:
            requires = _literal_list(values, keyword.value)
            if isinstance(keyword.value, ast.Name):
                skipped.add(keyword.value.id)
    call.keywords = [keyword for keyword in call.keywords if keyword.arg not in _IGNORED]
    tree.body = [stmt for stmt in tree.body  # the module-level list that install_requires names
                 if not (isinstance(stmt, ast.Assign) and any(
                     isinstance(target, ast.Name) and target.id in skipped
                     for target in stmt.targets))]
    return Declared(ast.dump(tree), requires)


def _without(table: Any) -> Any:
    """A pyproject table without its descriptive, layout and requirement keys."""
    if not isinstance(table, dict):
        return table
    return {key: value for key, value in table.items() if key not in _IGNORED}


def _literal_list(values: ModuleValues, node: ast.expr) -> list[str] | None:
    try:
        value = values.evaluate(node)
    except (Unresolved, TypeError, RecursionError):
        return None
    if isinstance(value, str):
        value = value.splitlines()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return None
    return [item.strip() for item in value if item.strip()]
