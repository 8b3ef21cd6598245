"""Choose the CPython minor version for a repository at a date."""

from __future__ import annotations

from datetime import date

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version
from pydantic import BaseModel, Field

from benchsmith.core import BenchsmithError
from benchsmith.sandbox.pythons import version_key
from benchsmith.setup.context_model import RepoContext

# First final release of each CPython minor version.
RELEASE_DATES: dict[str, date] = {
    "2.7": date(2010, 7, 3),
    "3.5": date(2015, 9, 13),
    "3.6": date(2016, 12, 23),
    "3.7": date(2018, 6, 27),
    "3.8": date(2019, 10, 14),
    "3.9": date(2020, 10, 5),
    "3.10": date(2021, 10, 4),
    "3.11": date(2022, 10, 24),
    "3.12": date(2023, 10, 2),
    "3.13": date(2024, 10, 7),
    "3.14": date(2025, 10, 7),
    "3.15": date(2026, 10, 1),
}

# plan.sources key: the newer Pythons a plan left after they failed it (a repair's choice, which a
# reused plan keeps; a Python the date's rules chose gives way to the new date's choice)
LEFT_NEWER = "python_left_after_failure"


class PythonChoice(BaseModel):
    """The chosen version, the ordered fallbacks, and why."""

    version: str
    fallbacks: list[str] = Field(default_factory=list)  # next best, newest first
    reason: str


def _specifier(text: str) -> SpecifierSet | None:
    cleaned = text.strip().strip("'\"").replace(" ", "")
    if not cleaned or cleaned == "*":
        return None
    try:
        return SpecifierSet(cleaned)
    except InvalidSpecifier:
        return None


def _allowed(minor: str, specs: list[SpecifierSet]) -> bool:
    # A minor is allowed when some patch release of it satisfies every specifier
    # (">=3.7.2" admits 3.7; "!=3.8.*" excludes 3.8).
    candidates = [Version(f"{minor}.{patch}") for patch in (0, 5, 10, 99)]
    return any(all(c in spec for spec in specs) for c in candidates)


def allows_python(context: RepoContext, minor: str) -> bool:
    """True when the project's Python constraints admit `minor`."""
    return _allowed(minor, [s for s in (_specifier(h.value) for h in context.requires_python) if s])


def choose_python(context: RepoContext, on: date, available: dict[str, str]) -> PythonChoice:
    """Newest available minor that satisfies the project's constraints and existed on `on`.

    Versions the project names itself (classifiers, CI matrix, tox envs) are preferred;
    without any, the newest allowed version is used.
    """
    specs = [s for s in (_specifier(h.value) for h in context.requires_python) if s]
    python2 = "2.7" if "2.7" in available and names_python2(context, specs) else None
    if python2_only(context, specs):
        if "2.7" not in available:
            raise BenchsmithError("the project supports Python 2 only, and this backend has no "
                                  "Python 2.7 (the local backend makes 2.7 virtualenvs)")
        return PythonChoice(version="2.7", reason="the project supports Python 2 only ("
                            "requires-python or classifiers); a virtualenv with pip")
    available = {v: p for v, p in available.items() if version_key(v) >= (3, 0)}
    released = [v for v in available if RELEASE_DATES.get(v, date.max) <= on]
    allowed = sorted((v for v in released if _allowed(v, specs)), key=version_key, reverse=True)
    if not allowed:
        # Nothing this old is on the machine: the oldest one that fits comes closest to the
        # date (what SWE-bench's own specs do for old repositories); recorded as a fallback.
        later = sorted((v for v in available if _allowed(v, specs) and version_key(v) >= (3, 0)),
                       key=version_key)
        if later:
            # the project's Python 2 comes last: a runner of the date may not run on any of them
            return PythonChoice(version=later[0], fallbacks=later[1:4] + ([python2] if python2 else []), reason=(
                f"fallback: no available Python fitting the project existed on {on}; "
                f"the oldest available one that fits ({later[0]}) is used"))
        wanted = ", ".join(h.value for h in context.requires_python) or "any"
        raise BenchsmithError(
            f"no available Python fits requires-python {wanted} at {on}: "
            f"available {', '.join(available) or 'none'}, released by then {', '.join(released) or 'none'}"
        )
    named = set(context.classifier_pythons) | {h.value for h in context.matrix_pythons}
    preferred = [v for v in allowed if v in named]
    if preferred:
        order = preferred + [v for v in allowed if v not in preferred]
        reason = f"newest version the project names ({', '.join(sorted(named, key=_key))})"
    else:
        order = allowed
        reason = "newest version released by the date"
    if specs:
        reason += f", within requires-python {'; '.join(str(s) for s in specs)}"
    return PythonChoice(version=order[0], fallbacks=order[1:], reason=reason)


def python2_only(context: RepoContext, specs: list[SpecifierSet]) -> bool:
    """The project says it runs on Python 2 alone: its requires-python admits 2.7 and no 3.x,
    or its classifiers name Python 2 versions and no Python 3 one."""
    if specs:
        return _allowed("2.7", specs) and not any(_allowed(f"3.{m}", specs) for m in range(16))
    named = set(context.classifier_pythons)
    return bool(named) and all(v.startswith("2") for v in named)


def names_python2(context: RepoContext, specs: list[SpecifierSet]) -> bool:
    """The project names a Python 2 version (classifiers, CI matrix, tox envs) and its
    requires-python admits 2.7."""
    named = set(context.classifier_pythons) | {h.value for h in context.matrix_pythons}
    return any(v.startswith("2") for v in named) and _allowed("2.7", specs)


def _key(minor: str) -> tuple[int, int]:
    try:
        return version_key(minor)
    except ValueError:
        return (0, 0)
