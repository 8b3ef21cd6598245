"""Make a plan's requirement set installable as one resolution.

Projects' requirement files were written for pip of their day and for one job at a time; put
together they break a modern resolver in a few recurring ways. A file with such a line is
*inlined*: its lines go into the plan's packages, each one tidied, and the file leaves the
plan. Every change is noted in the plan:

- the project's own name (``click==8.1.3`` inside click) is dropped: ``-e .`` provides it;
- specifiers old pip accepted (``PyYAML>=5.1.*``) are normalised (``PyYAML>=5.1``);
- VCS and archive requirements (``-e git+https://...#egg=name``, ``name @ git+https://...``)
  become the package's release on the index at the pinned date, when a name can be told;
- a package pinned differently by two sources keeps the first pin (the chosen job's files
  come first) and the later one is dropped.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from benchsmith.core import Plan

_LEGACY_WILDCARD = re.compile(r"(>=|<=|>|<|~=)\s*([0-9][0-9A-Za-z.]*?)\.\*")
_EGG = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")
_NAMED_URL = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?)\s*@\s*\S+")
_URL = re.compile(r"(?:git|hg|svn|bzr)\+|://")
# The repository name of a forge URL (github.com/owner/repo...): usually the distribution's.
_ARCHIVE_REPO = re.compile(r"://(?:www\.)?(?:github\.com|gitlab\.com|bitbucket\.org)/[^/]+/"
                           r"([A-Za-z0-9._-]+?)(?:\.git)?(?:/|@|#|$)")


def _parse(text: str) -> Requirement | None:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


def _name_of_url(line: str) -> str | None:
    """The distribution a VCS/archive line installs: ``#egg=``, ``name @ url``, the repo name."""
    if egg := _EGG.search(line):
        return egg.group(1)
    if named := _NAMED_URL.match(line):
        return named.group(1)
    if repo := _ARCHIVE_REPO.search(line):
        return repo.group(1)
    return None


def tidy_line(line: str, project: str | None,
              convert_urls: bool = False) -> tuple[str | None, str | None]:
    """(the requirement to install or None, a note on what was changed or None).

    Editable VCS lines (which uv never installs) always become their package from the index;
    other URL requirements only with `convert_urls` (their host is known to be unreachable).
    """
    text = line.strip()
    editable = text.startswith(("-e ", "--editable "))
    if editable:
        text = text.split(None, 1)[1].strip()
        if not _URL.search(text):
            return None, f"drop local editable {text}"  # a path: the project itself, mostly
    if _URL.search(text) and (editable or convert_urls):
        name = _name_of_url(text)
        requirement = _parse(name) if name else None
        if name is None or requirement is None:
            return None, f"drop {text}: no package name can be told"
        if project and canonicalize_name(requirement.name) == canonicalize_name(project):
            return None, f"drop {text}: the project itself"
        return name, f"install {name} from the index instead of {text}"
    requirement = _parse(text)
    note = None
    if requirement is None:
        fixed = _LEGACY_WILDCARD.sub(r"\1\2", text)
        requirement = _parse(fixed)
        if requirement is None:
            return None, f"drop {text}: not a requirement"
        text, note = fixed, f"normalise {line.strip()} -> {fixed}"
    if project and canonicalize_name(requirement.name) == canonicalize_name(project):
        return None, f"drop {text}: the project itself (installed from the checkout)"
    return text, note


def _file_lines(root: Path, path: str, seen: set[str] | None = None) -> list[str]:
    """Requirement lines of `path`, nested ``-r`` files included (each once)."""
    seen = seen if seen is not None else set()
    if path in seen:
        return []
    seen.add(path)
    try:
        text = (root / path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    lines: list[str] = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r", "--requirement")):
            nested = line.split(None, 1)[1] if " " in line else line[2:]
            lines += _file_lines(root, str(PurePosixPath(path).parent / nested.strip()), seen)
        elif line.startswith("-") and not line.startswith(("-e ", "--editable ")):
            continue  # index options, constraints, hashes: not requirements
        else:
            lines.append(line)
    return lines


def _needs_tidying(line: str, project: str | None) -> bool:
    if line.startswith(("-e ", "--editable ")) and not _URL.search(line):
        return False  # a local editable path installs fine from its file
    tidied, note = tidy_line(line, project)
    return note is not None or tidied is None


def inline_requirement_file(plan: Plan, path: str, root: Path, project: str | None,
                            convert_urls: bool = False) -> list[str]:
    """Replace `path` in the plan by its tidied lines; return the notes (empty: nothing to do)."""
    if path not in plan.requirement_files:
        return []
    notes: list[str] = []
    added: list[str] = []
    for line in _file_lines(root, path):
        if line.startswith(("-e ", "--editable ")) and not _URL.search(line):
            if not plan.install_project:  # the file was what installed the project
                plan.install_project, plan.editable = True, True
                notes.append(f"install the project (from {line} in {path})")
            continue
        tidied, note = tidy_line(line, project, convert_urls)
        if note:
            notes.append(note)
        if tidied:
            added.append(tidied)
    plan.requirement_files = [f for f in plan.requirement_files if f != path]
    plan.packages += [p for p in added if p not in plan.packages]
    notes.insert(0, f"install {path} line by line ({len(added)} requirements)")
    plan.notes += notes
    plan.sources.setdefault("packages", []).append(path)
    return notes


def tidy_requirements(plan: Plan, root: Path, project: str | None) -> list[str]:
    """Inline every requirement file that needs tidying or pins a package differently from an
    earlier source, then keep one pin per package; return the notes."""
    notes: list[str] = []
    pins: dict[str, str] = {}  # canonical name -> the first requirement text seen

    def conflicts(lines: list[str]) -> bool:
        for line in lines:
            requirement = _parse(line)
            if requirement is None:
                continue
            first = pins.get(canonicalize_name(requirement.name))
            if first is not None and _parse(first) != requirement:
                return True
        return False

    def remember(lines: list[str]) -> None:
        for line in lines:
            if (requirement := _parse(line)) is not None:
                pins.setdefault(canonicalize_name(requirement.name), line)

    for path in list(plan.requirement_files):
        lines = _file_lines(root, path)
        if any(_needs_tidying(line, project) for line in lines) or conflicts(lines):
            notes += inline_requirement_file(plan, path, root, project)
        else:
            remember(lines)
    kept: list[str] = []
    for package in plan.packages:
        tidied, note = tidy_line(package, project)
        if note:
            notes.append(note)
        requirement = _parse(tidied) if tidied else None
        if tidied is None or requirement is None:
            continue
        name = canonicalize_name(requirement.name)
        first = pins.get(name)
        if first is not None:  # an earlier source provides it
            if _parse(first) != requirement and requirement.specifier:
                notes.append(f"drop {tidied}: {first} comes first")
            continue
        pins.setdefault(name, tidied)
        kept.append(tidied)
    if kept != plan.packages:
        plan.packages = kept
    plan.notes += [n for n in notes if n not in plan.notes]
    return notes


def drop_requirement(plan: Plan, names: list[str], root: Path, project: str | None) -> list[str]:
    """Leave packages `names` out of the plan (from its packages and, by installing them line
    by line, from its requirement files); return the notes."""
    drop = {canonicalize_name(n) for n in names}

    def named(line: str) -> bool:
        tidied, _ = tidy_line(line, project)
        requirement = _parse(tidied) if tidied else None
        return requirement is not None and canonicalize_name(requirement.name) in drop

    notes: list[str] = []
    for path in list(plan.requirement_files):
        if any(named(line) for line in _file_lines(root, path)):
            notes += inline_requirement_file(plan, path, root, project)
    kept = [p for p in plan.packages if not named(p)]
    if kept != plan.packages:
        notes.append(f"leave out {', '.join(sorted(drop))} (cannot be installed at the date)")
        plan.packages = kept
        plan.notes.append(notes[-1])
    return notes
