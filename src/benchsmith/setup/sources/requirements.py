"""Requirement files (requirements*.txt and friends) and Pipfile."""

from __future__ import annotations

import re
from typing import Any

from benchsmith.setup.sources.coerce import as_dict, as_str, as_str_list
from benchsmith.setup.sources.collector import Collector

REQUIREMENT_GLOBS = (
    "*requirements*.txt",
    "requirements/*.txt",
    "requirements/*/*.txt",
    "reqs/*.txt",
    "ci/*requirements*.txt",
    "*/*requirements*.txt",
)
# Requirement directories whose files often have no extension (requirements/tests, reqs/dev).
REQUIREMENT_DIRS = ("requirements", "reqs")
PIPFILE_GROUPS = ("packages", "dev-packages")
# conda environment files, where CI installs a project's optional test dependencies from
CONDA_GLOBS = ("environment.yml", "environment.yaml", "ci/*.yml", "ci/*.yaml",
               "ci/requirements/*.yml", "ci/requirements/*.yaml", "ci/deps/*.yml",
               "conda/*.yml", "requirements/*.yml")
_CONDA_SPEC = re.compile(r"^(?:[\w.-]+::)?(?P<name>[A-Za-z0-9][\w.-]*)")
_NOT_PACKAGES = {"python", "pip"}


def find_requirement_files(c: Collector) -> None:
    """Every requirements-style file: .txt ones, and those without an extension in a
    requirements directory; as sorted repository-relative paths."""
    found = {path for pattern in REQUIREMENT_GLOBS for path in c.files.glob(pattern)}
    found |= {path for folder in REQUIREMENT_DIRS for path in c.files.glob(f"{folder}/*")
              if "." not in (name := path.rsplit("/", 1)[-1]) and name[:1].islower()}
    for path in sorted(found):
        if c.files.text(path) is not None:
            c.extend_unique(c.ctx.requirement_files, [path], path)
    c.ctx.requirement_files.sort()


def requirement_lines(text: str) -> list[str]:
    """Requirement lines of a requirements file (comments, blanks, options other than -r/-e dropped)."""
    lines = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if (
            line
            and not line.startswith("#")
            and (not line.startswith("-") or line.startswith(("-r", "-e")))
        ):
            lines.append(line)
    return lines


def _pipfile_requirement(name: str, spec: Any) -> str | None:
    table = {"version": spec} if isinstance(spec, str) else as_dict(spec)
    if any(key in table for key in ("path", "git", "file", "editable")):
        return None
    version = as_str(table.get("version")) or "*"
    version = "" if version.strip() == "*" else version.strip()
    extras = as_str_list(table.get("extras"))
    return name + (f"[{','.join(extras)}]" if extras else "") + version


def read_pipfile(c: Collector) -> None:
    """Pipfile packages as dependency groups "pipfile:<section>", python_version as a Python hint."""
    source = "Pipfile"
    data = c.files.toml(source)
    if data is None:
        return
    for group in PIPFILE_GROUPS:
        reqs = [_pipfile_requirement(n, s) for n, s in as_dict(data.get(group)).items()]
        if reqs:
            key = f"pipfile:{group}"
            c.extend_unique(
                c.ctx.dependency_groups.setdefault(key, []), [r for r in reqs if r], source
            )
    requires = as_dict(data.get("requires"))
    c.python(
        as_str(requires.get("python_full_version")) or as_str(requires.get("python_version")),
        source,
    )


def read_conda_environments(c: Collector) -> None:
    """Package names of conda environment files (conda specs and their ``pip:`` lists), as
    ``conda_packages``: what CI installed beyond the project's extras (never installed
    as such: an optional round takes one only when a skipped test names it)."""
    for path in sorted({p for pattern in CONDA_GLOBS for p in c.files.glob(pattern)}):
        data = c.files.yaml(path)
        if not isinstance(data, dict) or not isinstance(data.get("dependencies"), list):
            continue
        names = []
        for entry in data["dependencies"]:
            specs = as_str_list(entry.get("pip")) if isinstance(entry, dict) else [entry]
            for spec in specs:
                found = _CONDA_SPEC.match(spec.strip()) if isinstance(spec, str) else None
                if found and found["name"].lower() not in _NOT_PACKAGES:
                    names.append(found["name"])
        c.extend_unique(c.ctx.conda_packages, names, path)
