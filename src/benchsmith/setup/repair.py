"""The rule-based repairer: one diagnosis in, a changed plan (and what changed) out."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from benchsmith.core import Diagnosis, DiagnosisKind, ExecResult, Plan
from benchsmith.sandbox.pythons import version_key
from benchsmith.setup.build_repairs import (
    repair_build_dependency,
    repair_declared_requirements,
    repair_pure_python,
    repair_release_files,
    requirement_key,
    submodule_sources_missing,
)
from benchsmith.setup.commands import PYTEST_VALUE_OPTIONS, positional_args
from benchsmith.setup.context_model import RepoContext
from benchsmith.setup.diagnose import diagnose_install, diagnose_tests
from benchsmith.setup.editable_repairs import (
    repair_back_from_editable_move,
    repair_develop,
    repair_develop_as_script,
    repair_editable,
    repair_newer_backend_build,
    repair_warnings_after_editable_move,
)
from benchsmith.setup.extra_imports import extra_for_import
from benchsmith.setup.extra_repairs import (
    extra_build_failure,
    import_extras,
    record_import_extra,
    repair_extra_dependency,
)
from benchsmith.setup.knowledge import (
    ASYNC_TEST_PLUGIN,
    PYTEST_FIXTURE_PLUGINS,
    PYTEST_INI_KEY_PLUGINS,
    PYTEST_MARKER_PLUGINS,
    STDLIB_REMOVED,
    distribution_for_import,
    plugin_for_option,
)
from benchsmith.setup.metadata_repairs import repair_invalid_metadata
from benchsmith.setup.pyversion import LEFT_NEWER
from benchsmith.setup.releases import earliest_satisfying_upload, pin_after
from benchsmith.setup.requirement_repairs import (
    repair_direct_url,
    repair_invalid_requirement,
    repair_own_dependents,
    repair_own_prerelease,
    repair_yanked,
)
from benchsmith.setup.suite_repairs import (
    repair_collection_errors,
    repair_crashing_plugin,
    repair_prepare_step,
)
from benchsmith.setup.system_repairs import (
    repair_programs,
    repair_services,
    repair_stand_ins,
    repair_system_packages,
)
from benchsmith.setup.test_environment import repair_test_environment

Rule = Callable[[Plan, Diagnosis, RepoContext], str | None]


def _has_package(plan: Plan, name: str) -> bool:
    wanted = canonicalize_name(name)
    return any(requirement_key(r) == wanted for r in plan.packages + plan.build_requirements)


def _add_packages(plan: Plan, names: list[str]) -> list[str]:
    added = [n for n in dict.fromkeys(names) if n and not _has_package(plan, n)]
    plan.packages += added
    return added


def _older_python(plan: Plan, newest: str | None = None) -> str | None:
    """Switch to the newest fallback version (not newer than `newest`); return it."""
    for candidate in plan.python_fallbacks:
        if newest and version_key(candidate) > version_key(newest):
            continue
        if version_key(candidate) >= version_key(plan.python):
            continue
        plan.python_fallbacks = [v for v in plan.python_fallbacks if v != candidate]
        previous, plan.python = plan.python, candidate
        plan.sources[LEFT_NEWER] = [*plan.sources.get(LEFT_NEWER, []), previous]
        return f"switch Python {previous} -> {candidate}"
    return None


def repair_python(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """Wrong interpreter: use the next older available version (within any stated maximum)."""
    newest = next(iter(diagnosis.facts.get("max_python", [])), None)
    specifier = (diagnosis.facts.get("specifier") or [""])[0]
    if specifier.startswith(">"):
        return None  # a newer Python is wanted; the first choice already was the newest allowed
    return _older_python(plan, newest)


def repair_python_if_tests_ran(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """Tests ran and too many failed, for no reason a rule knows: code often predates the newest
    Python. Not when no test ran at all: nothing then says the interpreter is at fault."""
    if diagnosis.facts.get("tests", ["1"]) == ["0"]:
        return None
    return repair_python(plan, diagnosis, context)


def repair_modules(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """Missing imports: install the project's extra providing each, else the distribution
    providing it, or change Python for stdlib removals."""
    wanted: list[str] = []
    chosen: dict[str, str] = {}  # extra -> the module it provides
    for module in diagnosis.facts.get("modules", []):
        top = module.split(".")[0]
        if top in STDLIB_REMOVED:
            removed_in, replacement = STDLIB_REMOVED[top]
            if version_key(plan.python) >= version_key(removed_in):
                if replacement:
                    wanted.append(replacement)
                    continue
                older = f"3.{version_key(removed_in)[1] - 1}"
                return _older_python(plan, older)
        tried = plan.extras + list(chosen) + [e.extra for e in import_extras(plan)]
        found = extra_for_import(module, context.extras, tried)
        if found and plan.install_project:
            chosen.setdefault(found[0], module)
            record_import_extra(plan, found[0], module, found[1])
            plan.notes.append(f"the extra {found[0]} ({found[1]}) provides {module}, which the "
                              "tests import")
        else:  # the project is not installed: the extra's requirement alone, constraints kept
            wanted.append(found[1] if found else distribution_for_import(module))
    if chosen:
        plan.extras += list(chosen)
        plan.sources.setdefault("extras", []).append("test imports")
    added = _add_packages(plan, wanted)
    actions = [f"install the extra {extra} (it provides {module})" for extra, module in chosen.items()]
    actions += [f"install {', '.join(added)} (imported by the tests)"] if added else []
    return "; ".join(actions) or None


def repair_conflicting_extra(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """A package benchsmith added (tox/CI deps, a guess) is part of the conflict: drop it."""
    required = {requirement_key(r) for r in diagnosis.facts.get("required", [])}
    dropped = [p for p in plan.packages if requirement_key(p) in required and requirement_key(p) != "pytest"]
    if not dropped:
        return None
    plan.packages = [p for p in plan.packages if p not in dropped]
    return f"drop {', '.join(dropped)} (conflicts with the other requirements at that date)"


def repair_unsatisfiable(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """Relaxation: a requirement has no version before the date, so its pin alone moves to the
    day after the first release that satisfies it (today only when the index cannot tell)."""
    relaxed = []
    own = canonicalize_name(context.project_name or "")
    wanted = {canonicalize_name(r.name): r.specifier
              for r in (_requirement(t) for t in diagnosis.facts.get("requirements", [])) if r}
    for package in diagnosis.facts.get("packages", []):
        name = canonicalize_name(package)
        if name in plan.exclude_newer_packages or (name == own and plan.install_project):
            continue  # the project is installed from its checkout, never from the index
        specifier = wanted.get(name)
        upload = earliest_satisfying_upload(name, specifier) if specifier else None
        if upload is not None:
            plan.exclude_newer_packages[name] = pin_after(upload)
            relaxed.append(f"{name} to {plan.exclude_newer_packages[name][:10]} "
                           f"(first release with {name}{specifier})")
        else:
            plan.exclude_newer_packages[name] = datetime.now(timezone.utc).strftime(
                "%Y-%m-%dT00:00:00Z")
            relaxed.append(f"{name} to today (no release date found)")
    return f"relax the date pin for {', '.join(relaxed)}" if relaxed else None


def _requirement(text: str) -> Requirement | None:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


def repair_not_in_registry(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """A package benchsmith guessed does not exist: drop it."""
    missing = {canonicalize_name(p) for p in diagnosis.facts.get("packages", [])}
    before = list(plan.packages)
    plan.packages = [p for p in plan.packages if requirement_key(p) not in missing]
    return f"drop {', '.join(sorted(missing))}" if plan.packages != before else None


def repair_requirement_file(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """A requirement file named in the plan does not exist: drop it."""
    missing = set(diagnosis.facts.get("files", []))
    kept = [f for f in plan.requirement_files if f not in missing]
    if kept == plan.requirement_files:
        return None
    plan.requirement_files = kept
    return f"drop requirement file {', '.join(sorted(missing))}"


def _drop_option(plan: Plan, option: str, context: RepoContext) -> str | None:
    name = option.split("=", 1)[0]
    for index, word in enumerate(plan.test_args):
        if word.split("=", 1)[0] == name:
            width = 2 if name in PYTEST_VALUE_OPTIONS and "=" not in word else 1
            del plan.test_args[index: index + width]
            return f"drop {name} from the test command"
    addopts = plan.ini_overrides.get("addopts", context.pytest_addopts or "")
    words = shlex.split(addopts)
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word.split("=", 1)[0] == name:
            skip = name in PYTEST_VALUE_OPTIONS and "=" not in word
            continue
        kept.append(word)
    if kept != words:
        plan.ini_overrides["addopts"] = " ".join(shlex.quote(w) for w in kept)
        return f"drop {name} from the configured addopts"
    return None


def repair_options(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """Unknown pytest options: install the plugin that owns them, else drop them."""
    actions = []
    for option in diagnosis.facts.get("options", []):
        plugin = plugin_for_option(option)
        if plugin and _add_packages(plan, [plugin]):
            actions.append(f"install {plugin} for {option.split('=')[0]}")
        elif dropped := _drop_option(plan, option, context):
            actions.append(dropped)
    return "; ".join(actions) or None


def repair_plugins(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """Unknown markers, fixtures, ini keys or async tests: install the owning plugins."""
    wanted: list[str] = []
    unknown_markers = []
    for marker in diagnosis.facts.get("markers", []):
        plugin = PYTEST_MARKER_PLUGINS.get(marker)
        (wanted.append(plugin) if plugin else unknown_markers.append(marker))
    actions = []
    for fixture in diagnosis.facts.get("fixtures", []):
        plugin = PYTEST_FIXTURE_PLUGINS.get(fixture)
        if plugin and plugin.startswith("-p "):
            name = plugin.split()[1]
            if name not in plan.test_args:
                plan.test_args += ["-p", name]
                actions.append(f"enable pytest's {name} plugin")
        elif plugin:
            wanted.append(plugin)
    wanted += [p for k in diagnosis.facts.get("ini_keys", []) if (p := PYTEST_INI_KEY_PLUGINS.get(k))]
    if diagnosis.facts.get("async"):
        if _has_package(plan, ASYNC_TEST_PLUGIN):
            if plan.ini_overrides.get("asyncio_mode") != "auto":
                plan.ini_overrides["asyncio_mode"] = "auto"
                actions.append("set asyncio_mode=auto")
        else:
            wanted.append(ASYNC_TEST_PLUGIN)
    if added := _add_packages(plan, wanted):
        actions.append(f"install {', '.join(added)}")
    if unknown_markers and not actions:
        for strict in ("--strict-markers", "--strict"):
            if dropped := _drop_option(plan, strict, context):
                actions.append(dropped)
    return "; ".join(actions) or None


def repair_paths(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """Test paths that do not exist: drop them."""
    missing = set(diagnosis.facts.get("paths", []))
    positional = set(positional_args(plan.test_args))
    kept = [a for i, a in enumerate(plan.test_args) if i not in positional or a not in missing]
    if kept == plan.test_args:
        return None
    plan.test_args = kept
    return f"drop missing test paths {', '.join(sorted(missing))}"


def repair_no_tests(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """Nothing collected: switch runner, or let pytest discover from the root."""
    if plan.runner == "unittest":
        plan.runner, plan.test_args = "pytest", []
        _add_packages(plan, ["pytest"])
        return "run the tests with pytest instead of unittest"
    positional = set(positional_args(plan.test_args))
    if positional:  # options keep their values ("-m 'not slow'")
        plan.test_args = [a for i, a in enumerate(plan.test_args) if i not in positional]
        return "let pytest discover tests from the repository root"
    return None


def repair_warnings(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """Warnings turned into errors by newer dependencies: ignore deprecation warnings."""
    flags = ["-W", "ignore::DeprecationWarning", "-W", "ignore::PendingDeprecationWarning"]
    if "ignore::DeprecationWarning" in plan.test_args:
        return None
    plan.test_args += flags
    return "ignore deprecation warnings raised as errors"


def repair_importable(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """The project's own package cannot be imported: put its source directory on PYTHONPATH."""
    path = "src" if "src" in context.root_dirs else "."
    if plan.env.get("PYTHONPATH") == path:
        return None
    plan.env["PYTHONPATH"] = path
    return f"set PYTHONPATH={path}"


RULES: dict[DiagnosisKind, list[Rule]] = {
    "collection_errors": [repair_collection_errors],
    "prepare_step": [repair_prepare_step],
    "system_packages": [repair_system_packages],
    "needs_service": [repair_services],
    "needs_network": [repair_stand_ins],
    "direct_url_unreachable": [repair_direct_url],
    "invalid_requirement": [repair_invalid_requirement],
    "yanked": [repair_yanked],
    "python_incompatible": [repair_python],
    "dependency_build_failed": [repair_back_from_editable_move, repair_python],
    "extra_dependency_build_failed": [repair_extra_dependency],
    "removed_api": [repair_back_from_editable_move, repair_python],
    "syntax_error_in_dependency": [repair_back_from_editable_move, repair_python],
    "pytest_internal_error": [repair_crashing_plugin, repair_python],
    "missing_modules": [repair_modules],
    "missing_programs": [repair_programs],
    "build_dependency_missing": [repair_declared_requirements, repair_build_dependency],
    "no_pep660": [repair_editable],
    "build_needs_network": [repair_release_files],
    "project_build_failed": [repair_develop_as_script, repair_pure_python, repair_newer_backend_build,
                             repair_release_files],
    "unsatisfiable": [repair_own_prerelease, repair_own_dependents, repair_conflicting_extra,
                      repair_unsatisfiable],
    "not_in_registry": [repair_not_in_registry],
    "invalid_metadata": [repair_invalid_metadata],
    "missing_requirement_file": [repair_requirement_file],
    "unknown_options": [repair_options],
    "missing_plugins": [repair_plugins],
    "missing_path": [repair_paths],
    "no_tests": [repair_no_tests],
    "warnings_as_errors": [repair_warnings, repair_back_from_editable_move, repair_python],
    "project_not_importable": [repair_develop, repair_importable],
    # Last resort when nothing explains the failures: code often predates the newest Python
    # (first the Python taken only for an editable install: 3.7 warns where 3.6 did not).
    "tests_failing": [repair_back_from_editable_move, repair_python_if_tests_ran],
    "test_environment": [repair_warnings_after_editable_move, repair_test_environment,
                         repair_python_if_tests_ran],
}


class RuleRepairer:
    """Diagnoses with regular expressions and repairs with the rules in :data:`RULES`.

    `apt` says whether the sandbox may install Debian packages (Docker yes, local no).
    """

    def __init__(self, apt: bool = False) -> None:
        self.apt = apt

    def diagnose(self, plan: Plan, failed: ExecResult, phase: str, context: RepoContext) -> Diagnosis:
        """Classify the failure of an install or test command."""
        packages = context.top_level_packages
        if phase == "install":
            found = diagnose_install(failed, [context.project_name or ""] + packages)
            found = extra_build_failure(found, plan, failed.output, context.project_name)
            return submodule_sources_missing(found, context)
        local = frozenset(Path(name).stem for name in context.root_dirs + context.root_files)
        return diagnose_tests(failed, packages, plan.runner, local)

    def repair(self, plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> tuple[Plan, str] | None:
        """Apply the first rule for the diagnosis that changes the plan."""
        if diagnosis.kind in ("system_packages", "needs_service") and not self.apt:
            return None
        for rule in RULES.get(diagnosis.kind, []):
            candidate = plan.model_copy(deep=True)
            if description := rule(candidate, diagnosis, context):
                return candidate, description
        return None
