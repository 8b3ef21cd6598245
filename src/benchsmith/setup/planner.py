"""The rule-based planner: the first install and test plan from a repository's own files."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from benchsmith.core import Plan
from benchsmith.setup.commands import (
    positional_args,
    pytest_args_from_command,
    split_install_command,
)
from benchsmith.setup.context_model import Hint, RepoContext
from benchsmith.setup.date_rules import apply_date_rules
from benchsmith.setup.editable_repairs import compat_editable
from benchsmith.setup.hosted import add_hosted
from benchsmith.setup.knowledge import (
    PYTEST_INI_KEY_PLUGINS,
    plugin_for_option,
)
from benchsmith.setup.legacy_discovery import apply_legacy_discovery
from benchsmith.setup.pyversion import PythonChoice
from benchsmith.setup.requirements_tidy import tidy_requirements

TEST_EXTRAS = ("test", "tests", "testing", "unittest", "pytest")
DEV_EXTRAS = ("dev", "develop", "development", "ci")
_SKIP_REQ_WORDS = ("doc", "lint", "mypy", "typing", "type", "style", "release", "deploy",
                   "publish", "bench", "format", "pre-commit", "precommit", "build", "wheel")
_TEST_REQ_WORDS = ("test", "dev", "ci")
# A command that leaves network tests out ("-m 'not network'", "--skip-internet", "--offline")
# beats one that does not; one that turns them on (astropy's "--remote-data") comes last.
_SKIPS_NETWORK = re.compile(r"not\s+(?:\w+\s+and\s+not\s+)*(?:internet|network|online|remote)|"
                            r"--(?:skip|no|disable)[\w-]*(?:internet|network|online|remote)|--offline",
                            re.IGNORECASE)
_ENABLES_NETWORK = re.compile(r"--(?:remote-data|run-network|run-online|online|run-internet)\b",
                              re.IGNORECASE)
_SOURCE_RANK = ("tox", "nox", ".github", ".travis", ".circleci", "azure", "Makefile", "README",
                "CONTRIBUTING", "docs")


def _rank(hint: Hint) -> int:
    for index, prefix in enumerate(_SOURCE_RANK):
        if prefix.lower() in hint.source.lower():
            return index
    return len(_SOURCE_RANK)


def _testish_requirement_file(path: str) -> bool:
    name = path.lower().rsplit("/", 1)[-1]
    if any(word in name for word in _SKIP_REQ_WORDS):
        return False
    if "/" in path and any(w in path.lower().split("/")[0] for w in ("test", "ci")):
        return True
    return any(word in name for word in _TEST_REQ_WORDS)


def _requirement_name(text: str) -> str | None:
    try:
        return Requirement(text).name
    except InvalidRequirement:
        return None


class RulePlanner:
    """Turns a :class:`RepoContext` into a :class:`Plan` with deterministic rules.

    Requirement files whose path names one of `skipped` are not installed (a test environment
    needs neither the docs' nor the benchmarks' dependencies; a whole setup may want the latter).
    """

    def __init__(self, skipped: tuple[str, ...] = ("doc", "lint", "mypy", "typing", "bench")) -> None:
        self.skipped = skipped

    def plan(self, context: RepoContext, python: PythonChoice, exclude_newer: str) -> Plan:
        """Build the first plan; every choice records the files it came from."""
        plan = Plan(python=python.version, python_fallbacks=python.fallbacks,
                    exclude_newer=exclude_newer)
        plan.notes.append(f"python {python.version}: {python.reason}")
        self._project(context, plan)
        self._requirements(context, plan)
        add_hosted(context, plan)
        self._test_command(context, plan)
        apply_legacy_discovery(context, plan)
        self._plugins(context, plan)
        neutralise_configured_options(plan, context)
        self._services(context, plan)
        if context.repo_root:
            tidy_requirements(plan, Path(context.repo_root), context.project_name)
        apply_date_rules(plan, context)
        return plan

    @staticmethod
    def without_services(context: RepoContext, plan: Plan) -> Plan:
        """`plan` without the servers the CI starts and the variables that point the tests at
        them: where no server can be started (the local backend), the project's own defaults
        (often SQLite) are the way its tests still run."""
        variant = plan.model_copy(deep=True)
        variant.services = []
        for key in {h.value.partition("=")[0] for h in context.service_env}:
            variant.env.pop(key, None)
        variant.sources.pop("services", None)
        variant.notes.append("the CI's services left out (none can be started here): "
                             "the project's own defaults")
        return variant

    def alternatives(self, context: RepoContext, python: PythonChoice, exclude_newer: str,
                     first: Plan) -> list[tuple[str, Plan]]:
        """Install sets to try, in order, when the first plan (the union of every source) cannot
        be repaired: each requirement file alone, then the project with its extras alone."""
        variants: list[tuple[str, RepoContext]] = []
        if len(first.requirement_files) > 1 or (first.requirement_files and context.tox_deps):
            for path in first.requirement_files:
                variants.append((f"{path} alone", _only_requirement_file(context, path)))
        if first.requirement_files or first.groups or len(first.packages) > 3:
            variants.append(("the project and its extras alone", _only_requirement_file(context, None)))
        plans: list[tuple[str, Plan]] = []
        seen = [_install_set(first)]
        for name, variant in variants:
            plan = self.plan(variant, python, exclude_newer)
            if _install_set(plan) not in seen:
                seen.append(_install_set(plan))
                plan.notes.append(f"alternative install set: {name}")
                plans.append((f"rules, {name}", plan))
        return plans

    @staticmethod
    def _services(context: RepoContext, plan: Plan) -> None:
        """Servers the CI starts for the tests, and the variables that point the tests at them."""
        plan.services = [s.model_copy() for s in context.services]
        for hint in context.service_env:
            key, _, value = hint.value.partition("=")
            plan.env.setdefault(key, value)
        if plan.services:
            plan.sources["services"] = sorted({s.source for s in plan.services}
                                              | {h.source for h in context.service_env})
            plan.notes.append("services: " + ", ".join(s.kind for s in plan.services))
        plan.stand_ins = [h.value for h in context.stand_ins]
        if plan.stand_ins:
            plan.sources["stand_ins"] = sorted({h.source for h in context.stand_ins})
            plan.notes.append("local stand-ins for: " + ", ".join(plan.stand_ins))

    # -- install ----------------------------------------------------------------------
    def _project(self, context: RepoContext, plan: Plan) -> None:
        buildable = any(f in context.root_files for f in ("setup.py", "pyproject.toml", "setup.cfg"))
        plan.install_project = buildable and context.has_python_project
        if not plan.install_project:
            return
        command_extras: list[str] = []
        sources: list[str] = []
        for hint in sorted(context.install_commands, key=_rank):
            for token in split_install_command(hint.value).editable_extras:
                if token not in command_extras:
                    command_extras.append(token)
                    sources.append(hint.source)
        for hint in context.tox_extras:
            for token in re.split(r"[,\s]+", hint.value):
                if token and token not in command_extras:
                    command_extras.insert(0, token)
                    sources.insert(0, hint.source)
        known = set(context.extras)
        chosen = [e for e in command_extras if (not known or e in known)
                  and not any(w in e for w in ("doc", "lint", "type", "mypy"))]
        if not chosen and known:
            chosen = [e for e in TEST_EXTRAS if e in known] or [e for e in DEV_EXTRAS if e in known][:1]
            sources = ["packaging metadata"] * len(chosen)
        plan.extras = list(dict.fromkeys(chosen))
        if plan.extras:
            plan.sources["extras"] = sorted(set(sources))
        compat_editable(context, plan)
        if "__tests_require__" in context.extras:
            plan.packages += context.extras["__tests_require__"]
            plan.sources.setdefault("packages", []).append("tests_require")

    def _requirements(self, context: RepoContext, plan: Plan) -> None:
        files: list[str] = []
        sources: list[str] = []
        existing = set(context.requirement_files)
        mentioned = [(_requirement_path(f), h.source) for h in sorted(context.install_commands, key=_rank)
                     for f in split_install_command(h.value).requirement_files]
        mentioned += [(_requirement_path(d.value.removeprefix("-r")), d.source)
                      for d in context.tox_deps if d.value.startswith("-r")]
        for path, source in mentioned:
            if path in existing and path not in files and not any(
                    w in path.lower() for w in self.skipped):
                files.append(path)
                sources.append(source)
        if not files:
            files = [f for f in context.requirement_files if _testish_requirement_file(f)][:2]
            sources = ["file name"] * len(files)
        if not plan.install_project and "requirements.txt" in existing and "requirements.txt" not in files:
            files.insert(0, "requirements.txt")
            sources.insert(0, "requirements.txt")
        plan.requirement_files = files
        if files:
            plan.sources["requirement_files"] = sorted(set(sources))
        packages: list[str] = []
        for dep in context.tox_deps:
            value = dep.value.strip()
            if value.startswith("-") or "{" in value or not _requirement_name(value):
                continue
            packages.append(value)
        for group in ("test", "tests", "testing", "dev"):
            if group in context.dependency_groups:
                plan.groups.append(group)
                plan.sources.setdefault("groups", []).append("pyproject.toml")
                break
        if not plan.groups:
            packages += context.poetry_dev_dependencies + context.hatch_test_dependencies
        if packages:
            plan.packages += packages
            plan.sources.setdefault("packages", []).append("tox/poetry/hatch dependencies")

    # -- test ---------------------------------------------------------------------------
    def _test_command(self, context: RepoContext, plan: Plan) -> None:
        if context.test_script is not None and context.test_script_runner is not None:
            # the project's own runner script: what its maintainers (and its published tasks) run
            plan.runner, plan.script = context.test_script_runner, context.test_script
            plan.sources["test"] = [context.test_script.path]
            plan.notes.append(f"runner {plan.runner}: {context.test_script.rule}")
            return
        value_options = frozenset(context.pytest_value_options)
        pytest_hints = [h for h in sorted(context.test_commands, key=_rank)
                        if pytest_args_from_command(h.value, value_options) is not None]
        # Sandboxes reach package indexes only: a command that skips network tests wins.
        pytest_hints.sort(key=lambda h: (bool(_ENABLES_NETWORK.search(h.value)),
                                         not _SKIPS_NETWORK.search(h.value)))
        settings = _settings(context)
        django = next(((h, args) for h in sorted(context.test_commands, key=_rank)
                       if (args := django_test_args(h.value)) is not None), None)
        if django and not pytest_hints and not context.pytest_config_file:
            hint, args = django
            plan.runner, plan.entry = "unittest", ["django", "test", "--verbosity=2"]
            for word in args:
                if word.startswith("--settings="):
                    settings["DJANGO_SETTINGS_MODULE"] = word.split("=", 1)[1]
            plan.test_args = [a for a in args if not a.startswith("--settings=")]
            plan.sources["test"] = [hint.source]
        if settings and (django or "DJANGO_SETTINGS_MODULE" not in context.pytest_ini_keys):
            # Django's runner and pytest-django (below its ini setting) read them from the environment
            plan.env.update({k: v for k, v in settings.items() if k not in plan.env})
            plan.sources["settings"] = sorted({h.source for h in context.settings_env})
        if plan.entry:
            return
        unittest_hint = next((h for h in context.test_commands if "unittest" in h.value), None)
        if context.uses_unittest and not pytest_hints and not context.pytest_config_file:
            plan.runner = "unittest"
            args = ["discover"]
            if unittest_hint:
                words = shlex.split(unittest_hint.value, comments=True) if unittest_hint else []
                tail = words[words.index("unittest") + 1:] if "unittest" in words else []
                args = [w for w in tail if w not in ("-v", "--verbose", "-q")] or args
                plan.sources["test"] = [unittest_hint.source]
            elif "tests" in context.test_dirs or "test" in context.test_dirs:
                start = "tests" if "tests" in context.test_dirs else "test"
                args = ["discover", "-s", start, "-t", "."]
            plan.test_args = args
            return
        plan.runner = "pytest"
        plan.packages.insert(0, "pytest")
        for hint in pytest_hints:
            args = pytest_args_from_command(hint.value, value_options) or []
            plan.test_args = drop_missing_paths(args, context)
            plan.sources["test"] = [hint.source]
            break
        if not pytest_hints and not context.pytest_testpaths:
            for candidate in ("tests", "test", "testing"):
                if candidate in context.test_dirs:
                    plan.test_args = [candidate]
                    plan.sources["test"] = [f"{candidate}/ directory"]
                    break

    def _plugins(self, context: RepoContext, plan: Plan) -> None:
        options = shlex.split(context.pytest_addopts or "", comments=True) + plan.test_args
        wanted = [plugin_for_option(option) for option in options if option.startswith("-")]
        wanted += [PYTEST_INI_KEY_PLUGINS.get(key) for key in context.pytest_ini_keys]
        plugins = [p for p in dict.fromkeys(wanted) if p and not p.startswith("-p ")]
        if plan.runner == "pytest" and plugins:
            plan.packages += plugins
            plan.sources["plugins"] = [context.pytest_config_file or "test command"]


def _requirement_path(reference: str) -> str:
    """A requirement file as CI, tox or pip name it (`./x`, `{toxinidir}/x`), repository-relative."""
    return reference.strip().removeprefix("./").replace("{toxinidir}/", "")


def _install_set(plan: Plan) -> tuple[object, ...]:
    return (sorted(plan.requirement_files), sorted(plan.packages), sorted(plan.groups),
            sorted(plan.extras))


def _only_requirement_file(context: RepoContext, path: str | None) -> RepoContext:
    """`context` as if the repository installed its test dependencies from `path` alone
    (None: from no requirement file, tox deps or dev-dependency table at all)."""
    def keeps(line: str) -> bool:
        files = split_install_command(line).requirement_files
        return not files or (path is not None and all(_requirement_path(f) == path for f in files))

    return context.model_copy(update={
        "install_commands": [h for h in context.install_commands if keeps(h.value)],
        "tox_deps": [d for d in context.tox_deps if d.value.startswith("-r")
                     and _requirement_path(d.value.removeprefix("-r")) == path],
        "requirement_files": [path] if path else [],
        "poetry_dev_dependencies": [], "hatch_test_dependencies": [],
    })


def drop_missing_paths(args: list[str], context: RepoContext) -> list[str]:
    """Remove positional path arguments whose first component the checkout does not have."""
    missing = set()
    for index in positional_args(args):
        head = args[index].split("::", 1)[0].strip("/").split("/", 1)[0]
        if head not in context.root_files and head not in context.root_dirs:
            missing.add(index)
    return [a for i, a in enumerate(args) if i not in missing]


def neutralise_configured_options(plan: Plan, context: RepoContext) -> None:
    """Cancel what the project's configured `addopts` would do to a graded run, by options the
    test command adds after them (later options win): a coverage threshold or report fails or
    slows the run without a failing test (`--no-cov`), `-x`/`--maxfail` stop it at the first
    failures (`--maxfail=0`), `-q` hides the test names that name a hung test (`-v`). The
    command the project's CI runs is cleaned already (:mod:`benchsmith.setup.commands`)."""
    if plan.runner != "pytest":
        return
    words = shlex.split(context.pytest_addopts or "", comments=True)
    where = f"{context.pytest_config_file or 'configured'} addopts"
    cancels = [
        ([w for w in words if w.startswith("--cov")], "--no-cov"),
        ([w for w in words if w in ("-x", "--exitfirst")
          or (w.startswith("--maxfail") and w != "--maxfail=0")], "--maxfail=0"),
        ([w for w in words if w in ("-q", "--quiet", "-qq")], "-v"),
    ]
    for found, option in cancels:
        if found and option not in plan.test_args:
            plan.test_args.append(option)
            plan.neutralised.append(f"{' '.join(found)} ({where}): {option}")


def _settings(context: RepoContext) -> dict[str, str]:
    """Settings variables the tests run with; the first source that names one wins."""
    found: dict[str, str] = {}
    for hint in context.settings_env:
        key, _, value = hint.value.partition("=")
        found.setdefault(key, value)
    return found


_DJANGO_DROP = re.compile(r"^(-v\d|--verbosity=\d|--parallel(=\S+)?|--failfast|--keepdb|--noinput"
                          r"|--no-input|--timing|--durations=\d+|--buffer|-b)$")
_DJANGO_VALUE = {"-v", "--verbosity", "--parallel", "--durations"}  # dropped with their value


def django_test_args(command: str) -> list[str] | None:
    """What follows `test` in a Django test command (``python -m django test``, ``django-admin
    test``, ``manage.py test``, also under ``coverage run``), with verbosity, parallelism and
    fail-fast options dropped and ``--settings X`` as ``--settings=X``; None when the command
    is not one."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return None
    for index, word in enumerate(words[:-1]):
        program = word.rsplit("/", 1)[-1]
        runs_django = (program == "django" and index and words[index - 1] == "-m") or program in (
            "django-admin", "django-admin.py", "manage.py")
        if runs_django and words[index + 1] == "test":
            rest = words[index + 2:]
            break
    else:
        return None
    args: list[str] = []
    pending = ""
    for word in rest:
        if word in ("&&", "||", ";", "|"):
            break
        if pending:
            if pending == "--settings":
                args.append(f"--settings={word}")
            pending = ""
        elif word in _DJANGO_VALUE or word == "--settings":
            pending = word
        elif not _DJANGO_DROP.match(word):
            # ${TEST_ARGS:-tests} (make) and {posargs:tests} (tox, resolved already): the default
            word = re.sub(r"^\$\{\w+:-(.*)\}$", r"\1", word)
            if word and not word.startswith("$"):
                args.append(word)
    return args
