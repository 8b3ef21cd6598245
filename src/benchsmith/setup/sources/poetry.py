"""Translate Poetry version constraints and dependency tables into PEP 440/508."""

from __future__ import annotations

import re
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet

from benchsmith.setup.sources.coerce import as_dict, as_str, as_str_list

_VERSION = re.compile(r"^\d+(\.\d+)*$")
_SKIPPED_SOURCES = ("path", "git", "url", "file")


def _bump(parts: list[int], index: int) -> str:
    upper = parts[: index + 1]
    upper[index] += 1
    upper += [0] * (len(parts) - len(upper))
    return ".".join(str(p) for p in upper)


def _convert_one(token: str) -> list[str] | None:
    if token in ("*", ""):
        return []
    if token.startswith("^") or (token.startswith("~") and not token.startswith("~=")):
        version = token[1:].strip()
        if not _VERSION.match(version):
            return None
        parts = [int(p) for p in version.split(".")]
        if token.startswith("^"):
            nonzero = [i for i, p in enumerate(parts) if p != 0]
            index = nonzero[0] if nonzero else len(parts) - 1
        else:
            index = 0 if len(parts) == 1 else 1
        parts += [0] * (2 - len(parts))
        return [f">={version}", f"<{_bump(parts, index)}"]
    if _VERSION.match(token) or re.match(r"^\d+(\.\d+)*\.\*$", token):
        return [f"=={token}"]
    if token.startswith("="):
        token = token if token.startswith("==") else f"={token}"
    return [token]


def poetry_specifier(constraint: str) -> str | None:
    """Poetry constraint -> PEP 440 specifier ("^3.7" -> ">=3.7,<4.0", "*" -> "").

    An "a || b" union cannot be written in PEP 440; its last branch (usually the
    newest line) is used. None when the constraint cannot be translated.
    """
    branch = re.split(r"\|\|?", constraint)[-1].strip()
    branch = re.sub(r"(<=|>=|==|!=|~=|<|>|=)\s+", r"\1", branch)
    specs: list[str] = []
    for token in re.split(r"[,\s]+", branch):
        converted = _convert_one(token.strip())
        if converted is None:
            return None
        specs.extend(converted)
    text = ",".join(specs)
    try:
        SpecifierSet(text)
    except InvalidSpecifier:
        return None
    return text


def _python_marker(constraint: str) -> str | None:
    spec = poetry_specifier(constraint)
    if not spec:
        return None
    clauses = []
    for item in SpecifierSet(spec):
        version = item.version.removesuffix(".*")
        clauses.append(f'python_version {item.operator} "{version}"')
    return " and ".join(clauses)


def poetry_requirements(name: str, spec: Any) -> list[str]:
    """PEP 508 strings for one Poetry dependency (a string, a table, or a list of tables)."""
    if name.lower() == "python":
        return []
    tables = spec if isinstance(spec, list) else [spec]
    out = []
    for table in tables:
        entry = {"version": table} if isinstance(table, str) else as_dict(table)
        if not entry or any(key in entry for key in _SKIPPED_SOURCES):
            continue
        version = poetry_specifier(as_str(entry.get("version")) or "*")
        if version is None:
            continue
        extras = as_str_list(entry.get("extras"))
        text = name + (f"[{','.join(extras)}]" if extras else "") + version
        markers = [m for m in (as_str(entry.get("markers")),) if m]
        python = as_str(entry.get("python"))
        marker = _python_marker(python) if python else None
        if marker:
            markers.append(marker)
        if markers:
            text += "; " + " and ".join(f"({m})" if len(markers) > 1 else m for m in markers)
        try:
            Requirement(text)
        except InvalidRequirement:
            continue
        out.append(text)
    return out


def poetry_table_requirements(table: Any) -> list[str]:
    """PEP 508 strings for every dependency of a Poetry dependency table."""
    return [req for name, spec in as_dict(table).items() for req in poetry_requirements(name, spec)]
