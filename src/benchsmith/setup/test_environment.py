"""Environmental causes of failing tests, read from groups of failures by error: a locale the
tests need, the time zone their project runs them in, a warning a newer dependency raises."""

from __future__ import annotations

import re
from pathlib import Path

from packaging.utils import canonicalize_name

from benchsmith.core import Diagnosis, Plan
from benchsmith.parsing.failure_groups import FailureGroup
from benchsmith.setup.context_model import RepoContext
from benchsmith.setup.knowledge.imports import IMPORT_TO_DISTRIBUTION

_LOCALE = re.compile(r"^(?:UnicodeEncodeError|UnicodeDecodeError): '(?:ascii|latin-1|charmap)' codec|"
                     r"^(?:locale\.)?Error: unsupported locale setting|Python was configured to use "
                     r"ASCII as encoding")
_UNKNOWN_ZONE = re.compile(r"^(?:zoneinfo\.)?(?:_common\.)?ZoneInfoNotFoundError|UnknownTimeZoneError")
_TIME_WORDS = re.compile(r"time|date|zone|tz|clock|utc|dst|epoch|strftime", re.IGNORECASE)
_WARNING = re.compile(r"^(?:\w+\.)*(?P<kind>(?:Pending)?DeprecationWarning|FutureWarning): ")
# TZ as a project sets it for its tests: tox setenv, a CI job's env, pytest-env, a Makefile.
_PROJECT_TZ = re.compile(r"""^\s*(?:-\s*|export\s+)?["']?TZ["']?\s*[:=]\s*["']?(?P<zone>[A-Za-z][\w+-]*(?:/[\w+-]+)*)""",
                         re.MULTILINE)
_TZ_FILES = ("tox.ini", "setup.cfg", "pytest.ini", "pyproject.toml", "Makefile", ".travis.yml",
             "noxfile.py", ".github/workflows/*.yml", ".github/workflows/*.yaml")


def project_time_zone(root: Path) -> tuple[str, str] | None:
    """(zone, file) the project's own configuration runs its tests in, other than UTC."""
    for pattern in _TZ_FILES:
        for path in sorted(root.glob(pattern)):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for match in _PROJECT_TZ.finditer(text):
                if match["zone"].upper() not in ("UTC", "GMT", "ETC/UTC"):
                    return match["zone"], str(path.relative_to(root))
    return None


def _import_names(distribution: str) -> set[str]:
    """The names a warning may call `distribution` by: its own, and its modules' (the table)."""
    wanted = canonicalize_name(distribution)
    return {distribution, wanted.replace("-", "_")} | {
        module.split(".")[0] for module, dist in IMPORT_TO_DISTRIBUTION.items()
        if canonicalize_name(dist) == wanted}


def environment_causes(groups: list[FailureGroup]) -> dict[str, list[str]]:
    """Known environmental causes among the groups: "locale", "time" (failures in time-related
    tests or messages), "unknown_zone", and the warnings raised as errors."""
    causes: dict[str, list[str]] = {}
    for group in groups:
        if _LOCALE.search(group.error):
            causes.setdefault("locale", []).append(group.error)
        elif _UNKNOWN_ZONE.search(group.error):
            causes.setdefault("unknown_zone", []).append(group.error)
        elif warning := _WARNING.match(group.error):
            causes.setdefault("warnings", []).append(group.error)
            causes.setdefault("warning_kinds", []).append(warning["kind"])
        elif _TIME_WORDS.search(group.example.split("::", 1)[-1]) or _TIME_WORDS.search(group.error):
            causes.setdefault("time", []).append(group.error)
    return causes


def relaxed_by_warnings(plan: Plan, diagnosis: Diagnosis) -> list[str]:
    """The dependencies whose date pin was relaxed that the warnings raised as errors name."""
    warnings = "\n".join(diagnosis.facts.get("warnings", []))
    if not warnings:
        return []
    return [name for name in plan.exclude_newer_packages
            if any(re.search(rf"\b{re.escape(n)}\b", warnings, re.IGNORECASE)
                   for n in _import_names(name))]


def repair_test_environment(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """Set what a group of failures says the tests need of their environment: a UTF-8 locale,
    the project's time zone, zone data, warnings left as warnings (or a dependency the date
    pin was relaxed for, pinned back to the date when a warning names it)."""
    facts = diagnosis.facts
    actions: list[str] = []
    if facts.get("locale"):
        wanted = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8"}
        if any(plan.env.get(k) != v for k, v in wanted.items()):
            plan.env.update(wanted)
            actions.append("set a UTF-8 locale (LANG, LC_ALL C.UTF-8; PYTHONIOENCODING utf-8)")
    if facts.get("unknown_zone") and "tzdata" not in plan.packages:
        plan.packages.append("tzdata")
        actions.append("install tzdata (the tests name time zones the system does not have)")
    zone = project_time_zone(Path(context.repo_root)) if context.repo_root else None
    if facts.get("time") and zone and plan.env.get("TZ") != zone[0]:
        plan.env["TZ"] = zone[0]
        plan.sources.setdefault("env", []).append(zone[1])
        actions.append(f"run the tests in time zone {zone[0]}, as {zone[1]} does")
    relaxed = relaxed_by_warnings(plan, diagnosis)
    warnings = facts.get("warnings")
    if relaxed:
        for name in relaxed:
            del plan.exclude_newer_packages[name]
        actions.append(f"pin {', '.join(relaxed)} back to the date (a newer release raises "
                       "the warnings the tests turn into errors)")
    elif warnings:
        for kind in dict.fromkeys(facts.get("warning_kinds", [])):
            if f"ignore::{kind}" not in plan.test_args:
                plan.test_args += ["-W", f"ignore::{kind}"]
                actions.append(f"leave {kind} a warning (a newer dependency raises it)")
    if actions:
        plan.notes.append("test environment: " + "; ".join(actions))
    return "; ".join(actions) or None
