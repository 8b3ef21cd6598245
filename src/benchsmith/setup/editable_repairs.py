"""Editable installs where the build backend of the date has no PEP 660 hooks: the levers,
tried in a fixed order, each a round of its own.

1. a newer build backend (uv's per-package date), next to the project's own build
   requirements or, where those pin an old one, without build isolation;
2. a regular install with the checkout first on the path, so the tests import the checkout
   (and a patch reaches them) rather than the copy in site-packages;
3. the legacy ``setup.py develop``, which also builds C extensions next to their sources.
"""

from __future__ import annotations

from packaging.specifiers import SpecifierSet

from benchsmith.core import Diagnosis, Plan
from benchsmith.sandbox.pythons import version_key
from benchsmith.setup.build_repairs import requirement_key
from benchsmith.setup.context_model import RepoContext
from benchsmith.setup.date_rules import BUILD_TOOL_FLOOR, allow_build_tool, backend_distribution
from benchsmith.setup.pyversion import allows_python
from benchsmith.setup.releases import earliest_satisfying_upload, pin_after
from benchsmith.setup.test_environment import relaxed_by_warnings

# what uv builds a source distribution without a build-system table with
UV_LEGACY_SETUPTOOLS = ">=40.8.0"
# plan.sources key: the Python a plan left for 3.7, only so that its install could be editable
MOVED_FOR_EDITABLE = "python_for_editable"
# Marks a plan on the second lever (a note of the plan, so a reused plan keeps it).
SOURCES_ON_PATH = "no editable install at that date: installed without -e, the checkout first on the path"


def _newer_backend(plan: Plan, context: RepoContext) -> str | None:
    """Lever 1: a build backend up to the floor date, isolated, or beside an old pinned one."""
    backend = backend_distribution(context)
    if backend not in plan.exclude_newer_packages and plan.build_isolation:
        allow_build_tool(plan, backend, f"{BUILD_TOOL_FLOOR}T00:00:00Z")
        return f"allow {backend} up to {BUILD_TOOL_FLOOR} (editable builds)"
    if plan.build_isolation:
        others = [r for r in context.build_requires if r and requirement_key(r) != backend]
        allow_build_tool(plan, backend, f"{BUILD_TOOL_FLOOR}T00:00:00Z")
        wheel = [] if "wheel" in {requirement_key(r) for r in others} else ["wheel"]
        plan.build_requirements = [backend, *wheel, *others]
        plan.build_isolation = False
        return (f"build without isolation next to {backend} up to "
                f"{plan.exclude_newer_packages[backend][:10]} (the project pins an older one)")
    return None


def _sources_on_path(plan: Plan, context: RepoContext) -> str:
    """Lever 2: a wheel built in isolation, as the project's build requirements say, and the
    checkout first on the path. A package an earlier round found the build needs beyond
    those (numpy, imported by astropy's setup.py and declared nowhere) is still installed
    first, and the build then stays without isolation."""
    declared = {requirement_key(r) for r in context.build_requires if r}
    tools = {backend_distribution(context), "setuptools", "wheel"}
    learned = [r for r in plan.build_requirements if requirement_key(r) not in declared | tools]
    if not learned:
        plan.build_isolation, plan.build_requirements = True, []
    plan.editable = False
    _backend_of_the_date(plan, context)
    path = "src" if "src" in context.root_dirs else "."
    plan.env["PYTHONPATH"] = path
    plan.notes.append(SOURCES_ON_PATH)
    plan.sources.setdefault("install", []).append("no PEP 660 editable hooks at the date")
    built = ("built in isolation as its build requirements say" if not learned else
             f"built without isolation after installing {', '.join(learned)}")
    return f"install the project without -e, {built}, with PYTHONPATH={path} so the tests import the checkout"


def _backend_of_the_date(plan: Plan, context: RepoContext) -> None:
    """The newer backend was for PEP 660 only: the dependencies' sources of that date build with
    the setuptools of the date again (a 2017 setup.py imports its `Feature`, gone in 46), but
    not older than the 40.8.0 uv asks for a source without a build-system table."""
    backend = backend_distribution(context)
    if not plan.exclude_newer_packages.get(backend, "").startswith(BUILD_TOOL_FLOOR):
        return
    for tool in (backend, "wheel"):
        if plan.exclude_newer_packages.get(tool, "").startswith(BUILD_TOOL_FLOOR):
            del plan.exclude_newer_packages[tool]
    if backend != "setuptools":
        return
    uploaded = earliest_satisfying_upload("setuptools", SpecifierSet(UV_LEGACY_SETUPTOOLS))
    floor = pin_after(uploaded) if uploaded else f"{BUILD_TOOL_FLOOR}T00:00:00Z"
    if floor > plan.exclude_newer:
        allow_build_tool(plan, "setuptools", floor)


def _into_develop(plan: Plan) -> None:
    """The project installed by `setup.py develop`, linked in place: not editable, and no
    longer the second lever's checkout on the path."""
    plan.develop, plan.editable = True, False
    plan.env.pop("PYTHONPATH", None)
    plan.notes = [n for n in plan.notes if n != SOURCES_ON_PATH]


def _develop(plan: Plan, context: RepoContext) -> str | None:
    """Lever 3: `setup.py develop` with the project's own build requirements of that date."""
    if "setup.py" not in context.root_files or plan.develop:
        return None
    # the dependencies' metadata is still built in isolation (by a backend that has the hooks
    # uv calls); the project's own build requirements of that date drive `develop`
    _into_develop(plan)
    wanted = [r for r in context.build_requires if r] or ["setuptools"]
    keys = {requirement_key(r) for r in wanted}
    plan.build_requirements = wanted + [r for r in ("setuptools", "wheel") if r not in keys]
    return "install the project with the legacy `setup.py develop` (linked in place, extensions built)"


def repair_develop_as_script(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """The build backend ran setup.py, setup.py imported the project's own package, and the
    package failed there: it tells its own setup.py apart by ``__main__`` being setup.py
    (astropy 3.0 otherwise rebuilds its extensions on import). Run setup.py as a script:
    `setup.py develop` with the setuptools of the date, the dependencies the project declares
    statically installed beforehand (its metadata cannot be built apart from the script)."""
    if (not diagnosis.facts.get("own_import") or "setup.py" not in context.root_files
            or plan.develop_declared):
        return None
    _into_develop(plan)
    plan.develop_declared = True
    declared = [h.value for h in context.install_requires]
    declared += [r for extra in plan.extras for r in context.extras.get(extra, [])]
    plan.packages = list(dict.fromkeys([*plan.packages, *declared]))
    plan.extras = []
    _backend_of_the_date(plan, context)
    keys = {requirement_key(r) for r in plan.build_requirements}
    plan.build_requirements += [r for r in dict.fromkeys(
        [*(r for r in context.build_requires if r), "setuptools", "wheel"]) if requirement_key(r) not in keys]
    return (f"setup.py imports {diagnosis.facts['own_import'][0]}, which fails outside setup.py "
            "run as a script: install the declared dependencies, then `setup.py develop`")


def repair_editable(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """No PEP 660 hooks at the date: the next lever (a newer backend; a regular install with
    the checkout on the path; `setup.py develop`).

    uv builds editables through PEP 660 only, and no setuptools that runs on Python 3.6 or
    older has it (64 needs 3.7): there, the first step is Python 3.7, if the project allows it."""
    if plan.editable and (3, 0) <= version_key(plan.python) < (3, 7) and allows_python(context, "3.7"):
        previous, plan.python = plan.python, "3.7"
        plan.sources[MOVED_FOR_EDITABLE] = [previous]
        # 3.6 and older would meet the same setuptools; Python 2.7 installs with pip instead
        plan.python_fallbacks = [v for v in plan.python_fallbacks if version_key(v) < (3, 0)]
        return (f"switch Python {previous} -> 3.7 (editable installs need setuptools 64, "
                f"which needs Python 3.7)")
    if plan.editable and (newer := _newer_backend(plan, context)):
        return newer
    if plan.editable:
        return _sources_on_path(plan, context)
    return None


def repair_back_from_editable_move(plan: Plan, diagnosis: Diagnosis, context: RepoContext
                                   ) -> str | None:
    """Python 3.7, taken only so that the install could be editable, is too new for the code or
    a dependency of that date (a C extension against an older C API, a removed behaviour, the
    tests failing with nothing named, as sympy 1.0's on the ``collections`` ABC warnings 3.7
    added): back to the Python before it, and the second lever there, the install without -e
    with the checkout first on the path."""
    previous = (plan.sources.get(MOVED_FOR_EDITABLE) or [""])[0]
    newest = next(iter(diagnosis.facts.get("max_python") or []), None)
    if not previous or plan.python != "3.7" or (
            newest and version_key(previous) > version_key(newest)):
        return None
    plan.python = previous
    del plan.sources[MOVED_FOR_EDITABLE]
    return (f"back to Python {previous} (3.7, taken for the editable install, is too new for the "
            f"code of that date); " + _sources_on_path(plan, context))


def repair_warnings_after_editable_move(plan: Plan, diagnosis: Diagnosis, context: RepoContext
                                        ) -> str | None:
    """Tests turn warnings into errors on the 3.7 taken only for the editable install (3.7 added
    some, as the ``collections`` ABC aliases'), none from a dependency whose pin was relaxed: back
    to the Python before it first. Silencing them with -W may not reach a runner of the date
    that sets its own warning filters, and a repair that changes nothing ends the diagnosis."""
    if not diagnosis.facts.get("warnings") or relaxed_by_warnings(plan, diagnosis):
        return None
    return repair_back_from_editable_move(plan, diagnosis, context)


def repair_newer_backend_build(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """The project's build failed under the newer backend that editable installs were given
    (a setup.py the newer setuptools rejects): the second lever, with the backend of the date."""
    backend = backend_distribution(context)
    if not plan.editable or not plan.exclude_newer_packages.get(backend, "").startswith(BUILD_TOOL_FLOOR):
        return None
    return _sources_on_path(plan, context)


def repair_develop(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """The checkout on the path cannot be imported as it is (its C extensions were built into
    site-packages only): the third lever, `setup.py develop`."""
    if SOURCES_ON_PATH not in plan.notes:
        return None
    return _develop(plan, context)


def compat_editable(context: RepoContext, plan: Plan) -> None:
    """An editable setuptools project goes onto sys.path as a path, as `setup.py develop` put
    it, not behind the import hook of setuptools >= 64 (its lenient mode): tests that find the
    project's modules by file path (a linter loading its own checkers) fail behind the hook."""
    backend = context.build_backend or "setuptools"
    if not plan.editable or not context.project_name or not backend.startswith("setuptools"):
        return
    plan.config_settings[f"{context.project_name}:editable_mode"] = "compat"
    plan.sources.setdefault("config_settings", []).append("setuptools editable_mode=compat")
