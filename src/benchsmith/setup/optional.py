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

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from benchsmith.core import Plan
from benchsmith.setup.context_model import RepoContext

# pytest -rap's summary: "SKIPPED [2] tests/test_x.py:12: requires ephem"
_SKIP = re.compile(r"^SKIPPED \[\d+\] \S+?:\d+: (?P<reason>.+?)\s*$", re.MULTILINE)


def skip_reasons(outputs: list[str]) -> list[str]:
    """The distinct skip reasons of pytest's summaries in `outputs`."""
    return list(dict.fromkeys(m["reason"] for out in outputs for m in _SKIP.finditer(out)))


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
