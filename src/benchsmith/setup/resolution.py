"""Why the resolver found no set of versions: nothing at the date pin (uv's and pip's words),
a name the index does not have, every allowed release withdrawn."""

from __future__ import annotations

import re

from benchsmith.core import Diagnosis
from benchsmith.setup.test_signals import log_tail

__all__ = ["diagnose_resolution", "line_with"]

# Every release a requirement allows was withdrawn: "because foo==0.1.3 was yanked (...)".
_YANKED = re.compile(r"[Bb]ecause ([A-Za-z0-9_.\-]+)[<>=!~]=?[^\s]* was yanked")
_UNSAT = re.compile(
    r"Because (?:there is no version of|there are no versions of|only the following versions of|only) "
    r"([A-Za-z0-9_.\-]+)"
)
_REQUIRED = re.compile(r"you require ([A-Za-z0-9_.\-]+)")
# "hint: `atomicwrites` was filtered by `exclude-newer` to only include packages uploaded before"
_FILTERED = re.compile(r"hint: `([A-Za-z0-9_.\-]+)` was filtered by `exclude-newer`")
# "pytest>=3.10.0 depends on atomicwrites>=1.0": a dependency's requirement, with its specifier
_DEPENDS_SPEC = re.compile(r"depends on ([A-Za-z0-9_.\-]+(?:[<>=!~]=?[^\s,]+(?:,[<>=!~]=?[^\s,]+)*)?)")
# "you require attrs>=23.1,<24, we can conclude ...": the requirement with its specifier
_REQUIRED_SPEC = re.compile(r"you require ([A-Za-z0-9_.\-]+(?:\[[^\]]*\])?"
                            r"(?:[<>=!~]=?[^\s,]+(?:,[<>=!~]=?[^\s,]+)*)?)")
# pip: "No matching distribution found for atomicwrites>=1.0 (from pytest)"
_PIP_NO_MATCH = re.compile(r"No matching distribution found for (?P<name>[A-Za-z0-9_.\-]+)"
                           r"(?:\[[^\]]*\])?(?P<spec>(?:[<>=!~]=?[^\s,]+(?:,[<>=!~]=?[^\s,]+)*)?)")
_NOT_FOUND = re.compile(r"Because ([A-Za-z0-9_.\-]+) was not found in the package registry")


def line_with(text: str, match: re.Match[str]) -> str:
    """The whole line of `text` that `match` is in."""
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    return text[start:end if end != -1 else None].strip()


def _spec_name(spec: str) -> str:
    return re.split(r"[<>=!~\[]", spec, maxsplit=1)[0].lower()


def diagnose_resolution(out: str) -> Diagnosis | None:
    """The resolver's failure in an install's output, if that is what failed."""
    if pip := _PIP_NO_MATCH.search(out):  # pip (Python 2 environments): nothing at the date
        return Diagnosis(category="installation", kind="unsatisfiable",
                         reason=f"no version of {pip['name']} fits the date pin and the other "
                                "requirements",
                         facts={"packages": [pip["name"]], "required": [],
                                "requirements": [f"{pip['name']}{pip['spec'] or ''}"]},
                         evidence=line_with(out, pip))
    if not_found := _NOT_FOUND.search(out):
        return Diagnosis(category="installation", kind="not_in_registry",
                         reason=f"{not_found.group(1)} is not on the package index",
                         facts={"packages": [not_found.group(1)]}, evidence=line_with(out, not_found))
    yanked = list(dict.fromkeys(_YANKED.findall(out)))
    required_names = set(_REQUIRED.findall(out))
    if "No solution found" in out and yanked and set(yanked) & required_names:
        names = [n for n in yanked if n in required_names]
        return Diagnosis(category="installation", kind="yanked",
                         reason=f"every release of {', '.join(names)} allowed at the date was "
                                "withdrawn (yanked) from the index",
                         facts={"packages": names}, evidence=log_tail(out, 8))
    if "No solution found" in out and (unsat := _UNSAT.search(out)):
        required = list(dict.fromkeys(_REQUIRED.findall(out)))
        # uv names the package the date pin filtered out in a hint: that one, not the first
        # package of its explanation (often the project, "only geopy[dev-test]==1.18.1 is
        # available", when the culprit is a dependency of a dependency)
        packages = list(dict.fromkeys(_FILTERED.findall(out))) or [unsat.group(1)]
        wanted = {name.lower() for name in packages}
        specs = [spec for spec in _DEPENDS_SPEC.findall(out) if _spec_name(spec) in wanted]
        return Diagnosis(category="installation", kind="unsatisfiable",
                         reason=f"no version of {', '.join(packages)} fits the date pin and the "
                                "other requirements",
                         facts={"packages": packages, "required": required,
                                "requirements": list(dict.fromkeys(
                                    _REQUIRED_SPEC.findall(out) + specs))},
                         evidence=line_with(out, unsat))
    return None
