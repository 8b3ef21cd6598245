"""Releases whose metadata today's installers refuse: requirements written before the version
rules of PEP 440 (``pytz (>=2011k)``, in every pandas before 0.25). uv stops on them ("Metadata
for `pandas` (v0.20.3) could not be parsed"), so no project of that time that needs the package
installs. Repair: the release's own requirements, read from the index and mended the least
possible (``>=2011k`` -> ``>=2011``), are handed to uv as that release's metadata (its
``dependency-metadata`` setting); the release itself is installed unchanged, at the date."""

from __future__ import annotations

import re
from email.parser import Parser

import httpx
from packaging.requirements import InvalidRequirement, Requirement

from benchsmith.core import Diagnosis, Plan
from benchsmith.setup.context_model import RepoContext
from benchsmith.setup.releases import index_base

__all__ = ["diagnose_invalid_metadata", "lenient_requirement", "repair_invalid_metadata",
           "requires_dist"]

_UNPARSED = re.compile(r"Metadata for `(?P<name>[^`]+)` \(v(?P<version>[^)\s]+)\) could not be parsed")
# a version with letters after its number, as setuptools once allowed: "2011k", "1.2b"
_LETTERED = re.compile(r"(?<=\d)[A-Za-z]+(?=\s*(?:[,)\];]|$))")
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def diagnose_invalid_metadata(out: str) -> Diagnosis | None:
    """uv could not read the metadata of a release the resolution needs."""
    found = list(dict.fromkeys((m["name"], m["version"]) for m in _UNPARSED.finditer(out)))
    if not found:
        return None
    start = out.rfind("\n", 0, _UNPARSED.search(out).start()) + 1  # type: ignore[union-attr]
    names = ", ".join(f"{name} {version}" for name, version in found)
    return Diagnosis(category="installation", kind="invalid_metadata",
                     reason=f"the installer cannot read the requirements of {names} (written "
                            "before today's version rules)",
                     facts={"packages": [name for name, _ in found],
                            "versions": [version for _, version in found]},
                     evidence=out[start:start + 400].strip())


def lenient_requirement(text: str) -> str | None:
    """`text` as a valid requirement: unchanged when it is one, else with the letters after a
    version number dropped, else its name alone; None when not even a name can be read."""
    for candidate in (text, _LETTERED.sub("", text)):
        try:
            return str(Requirement(candidate))
        except InvalidRequirement:
            continue
    name = _NAME.match(text)
    marker = text.split(";", 1)[1].strip() if ";" in text else ""
    for candidate in ([f"{name[1]}; {marker}"] if name and marker else []) + (
            [name[1]] if name else []):
        try:
            return str(Requirement(candidate))
        except InvalidRequirement:
            continue
    return None


def requires_dist(name: str, version: str, index_url: str | None = None,
                  timeout: float = 30) -> list[str] | None:
    """The requirements release `version` of `name` declares: the Requires-Dist lines of one of
    its wheels' metadata file (PEP 658, which PyPI serves for every wheel), found through the
    index's JSON pages (PEP 691); None when the index cannot tell."""
    base = index_base(index_url)
    headers = {"User-Agent": "benchsmith (release metadata)",
               "Accept": "application/vnd.pypi.simple.v1+json"}
    try:
        page = httpx.get(f"{base}/simple/{name}/", timeout=timeout, follow_redirects=True,
                         headers=headers)
        page.raise_for_status()
        files = page.json().get("files") or []
        wheels = [f for f in files if isinstance(f, dict) and _is_wheel_of(f, version)]
        for wheel in sorted(wheels, key=lambda f: f.get("size") or 0):
            url = str(page.url.join(wheel["url"])) + ".metadata"
            found = httpx.get(url, timeout=timeout, follow_redirects=True, headers=headers)
            if found.status_code == 200:
                metadata = Parser().parsestr(found.text, headersonly=True)
                return [str(line) for line in metadata.get_all("Requires-Dist") or []]
    except (httpx.HTTPError, ValueError, AttributeError, KeyError):
        return None
    return None


def _is_wheel_of(file: dict[str, object], version: str) -> bool:
    filename = str(file.get("filename") or "")
    parts = filename[:-len(".whl")].split("-") if filename.endswith(".whl") else []
    return len(parts) >= 5 and parts[1] == version and isinstance(file.get("url"), str)


def repair_invalid_metadata(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """Give uv each named release's requirements, mended, as its metadata (once per release)."""
    mended: list[str] = []
    for name, version in zip(diagnosis.facts.get("packages", []),
                             diagnosis.facts.get("versions", []), strict=False):
        key = f"{name}=={version}"
        if key in plan.dependency_metadata:
            continue
        declared = requires_dist(name, version)
        if declared is None:
            continue
        fixed = [r for r in (lenient_requirement(line) for line in declared) if r]
        plan.dependency_metadata[key] = fixed
        changed = [f"{a} -> {b}" for a, b in zip(declared, fixed, strict=False) if a != b]
        plan.notes.append(f"{key}: its requirements as uv reads them: {', '.join(fixed) or 'none'}"
                          + (f" (mended: {'; '.join(changed)})" if changed else ""))
        mended.append(key)
    if not mended:
        return None
    plan.sources.setdefault("dependency_metadata", []).append(f"repair: {diagnosis.reason}")
    return f"give uv the mended requirements of {', '.join(mended)} as their metadata"
