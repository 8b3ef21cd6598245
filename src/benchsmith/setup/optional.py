"""Optional dependencies the tests skip without: a project's extras name them, pytest's skip
reasons name them again ("requires ephem", "could not import 'numba'").

SWE-bench's specs install many projects with every extra; the rules install the test extras
only. When a dataset's own tests are skipped for want of a package one of the project's extras
declares (or a conda environment file of its CI lists: xarray's ``sparse``), that package is
what their environment lacked (`prepare`: a published PASS_TO_PASS test that ran where it was
produced). Only packages the project itself declares are ever added, so a skip reason cannot
bring in an arbitrary package.
"""

from __future__ import annotations

import re
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from benchsmith.core import Plan
from benchsmith.setup.context_model import RepoContext

# pytest -rap's summary: "SKIPPED [2] tests/test_x.py:12: requires ephem"
_SKIP = re.compile(r"^SKIPPED \[\d+\] (?P<path>\S+?):(?P<line>\d+): (?P<reason>.+?)\s*$", re.MULTILINE)
# a skip decorator named for what the test needs: xarray's `@requires_pint_0_15(...)`
_REQUIRES = re.compile(r"^\s*@(?:\w+\.)*requires_(?P<what>\w+)")


def skip_reasons(outputs: list[str], repo: Path | None = None) -> list[str]:
    """The distinct skip reasons of pytest's summaries in `outputs`; with the checkout `repo`,
    also "requires X" for each `@requires_X...` decorator of a skipped test, whose own reason
    may not name it (xarray: `@requires_pint_0_15(reason="Need __dask_tokenize__")`)."""
    reasons: list[str] = []
    for out in outputs:
        for found in _SKIP.finditer(out):
            reasons.append(found["reason"])
            if repo is not None:
                reasons += _decorators(repo, found["path"], int(found["line"]))
    return list(dict.fromkeys(reasons))


def _decorators(repo: Path, path: str, line: int) -> list[str]:
    """"requires X Y" for the `@requires_X_Y_1_0` decorators of the function that starts at
    `line` of `path` (its first decorator's line, or its def's), version parts left out."""
    file: Path | None = repo / path
    if Path(path).is_absolute():  # the shortest tail of it that is in the checkout
        parts = Path(path).parts
        tails = (repo.joinpath(*parts[i:]) for i in range(len(parts) - 1, 0, -1))
        file = next((tail for tail in tails if tail.is_file()), None)
    try:
        lines = file.read_text(errors="replace").splitlines() if file else []
    except OSError:
        return []
    start = line - 1
    if not 0 <= start < len(lines) or not lines[start].lstrip().startswith(("@", "def ", "async def ")):
        return []  # a skip at module level (`pytest.importorskip`), not of one function
    while 0 < start < len(lines) and lines[start - 1].lstrip().startswith("@"):
        start -= 1  # the reported line was the def: its decorators are above it
    wanted: list[str] = []
    for text in lines[start:start + 12]:
        if text.lstrip().startswith(("def ", "async def ", "class ")):
            break
        if found := _REQUIRES.match(text):
            words = [w for w in found["what"].split("_") if w and not w.isdigit()]
            wanted.append(" ".join(["requires", *words]))
    return wanted


def _name(requirement: str) -> str | None:
    try:
        return Requirement(requirement).name
    except InvalidRequirement:
        return None


def optional_requirements(reasons: list[str], context: RepoContext, plan: Plan) -> list[str]:
    """Requirements of the project's extras and its CI's conda environment files (not
    installed by `plan`) that a skip reason names as a whole word (``netCDF4`` for
    ``netcdf4``, ``python-dateutil`` as ``python_dateutil``)."""
    if not reasons:
        return []
    extras = {**context.extras, "": context.conda_packages}  # "": no extra of that name
    have = {canonicalize_name(n) for n in map(_name, plan.packages) if n}
    text = "\n".join(reasons)
    wanted: dict[str, str] = {}
    for extra, requirements in extras.items():
        if extra in plan.extras:
            continue
        for requirement in requirements:
            name = _name(requirement)
            if not name or canonicalize_name(name) in have | wanted.keys():
                continue
            spelled = "[-_.]".join(re.escape(part) for part in re.split(r"[-_.]", name))
            if re.search(rf"(?<![\w.-]){spelled}(?![\w-])", text, re.IGNORECASE):
                wanted[canonicalize_name(name)] = requirement.split(";")[0].strip()
    return list(wanted.values())
