"""Render plans and test specs into the shell commands that are run and recorded: here, once.

A :class:`~benchsmith.core.Plan` gives the install commands and the whole-suite test command;
:func:`plan_spec` keeps its test part as a structured :class:`~benchsmith.instance.TestSpec`,
and :func:`render_spec` runs that spec on any set of test files.
"""

from __future__ import annotations

import re
import shlex

from benchsmith.core import SCRIPT_RUNNERS, Plan, TestScript
from benchsmith.harness import services as svc
from benchsmith.harness import stand_ins
from benchsmith.harness.dependency_metadata import metadata_config
from benchsmith.harness.node_render import heap_env, render_build_commands, render_test_command
from benchsmith.harness.release_files import release_files_command
from benchsmith.instance import TaskInstance, TestSpec
from benchsmith.sandbox.pythons import version_key

# pytest options whose value is the next word.
PYTEST_VALUE_OPTIONS = {
    "-k", "-m", "-p", "-c", "-o", "-W", "-n", "-r", "--ignore", "--deselect", "--rootdir",
    "--confcutdir", "--basetemp", "--tb", "--durations", "--maxfail", "--cov-report",
    "--cov-config", "--junitxml", "--junit-xml", "--log-level", "--import-mode", "--timeout",
    "--dist", "--reruns", "--ignore-glob", "--override-ini", "--color", "--numprocesses",
    "--cov-fail-under", "--benchmark-columns", "--benchmark-sort", "--benchmark-group-by",
    "--html", "--doctest-glob", "--capture", "--pyargs-root", "--ds", "--reruns-delay",
    "--hypothesis-profile", "--hypothesis-seed", "--randomly-seed", "--count",
}


# The legacy in-place install; its dependencies come from the pinned resolution before it.
DEVELOP = ["python", "setup.py", "develop", "--no-deps"]


def uses_pip(python: str) -> bool:
    """Environments of this Python are installed with pip (uv installs into 3.x only); the
    date pin then comes from the index the install environment names (`install_env`)."""
    return version_key(python) < (3, 0)


def _installer(plan: Plan) -> list[str]:
    if uses_pip(plan.python):
        return ["python", "-m", "pip", "install"]
    return ["uv", "pip", "install", *_pin_flags(plan)]


def _pin_flags(plan: Plan) -> list[str]:
    flags = ["--exclude-newer", plan.exclude_newer]
    for name, stamp in sorted(plan.exclude_newer_packages.items()):
        flags += ["--exclude-newer-package", f"{name}={stamp}"]
    return flags


def _env_words(env: dict[str, str]) -> list[str]:
    """`env K=V ...` in front of a command (nothing when `env` is empty)."""
    return ["env", *(f"{k}={v}" for k, v in sorted(env.items()))] if env else []


def _join(words: list[str]) -> str:
    return " ".join(shlex.quote(w) for w in words)


def system_packages(plan: Plan, apt: bool = True) -> list[str]:
    """The Debian packages `plan` installs (its own and its services'); none without `apt`."""
    return sorted(set(plan.apt_packages) | set(svc.debian_packages(plan.services))) if apt else []


def apt_install_command(packages: list[str]) -> str:
    """The command that installs the Debian `packages` (non-interactive, no recommends)."""
    return ("apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "
            "--no-install-recommends " + _join(packages))


def render_install(plan: Plan, apt: bool = True) -> list[str]:
    """The install commands: Debian packages (and the services' start script), build tools,
    one uv resolution for everything, then the steps the tests ask for (`plan.prepare`).
    `apt=False`: no system packages and no services."""
    commands: list[str] = []
    if system := system_packages(plan, apt):
        commands.append(apt_install_command(system))
    if apt and plan.services:
        commands.append(svc.install_command(plan.services))
    commands += stand_ins.install_commands(plan.stand_ins)
    if plan.release_files:
        commands.append(release_files_command(plan.release_files))
    base = _env_words(plan.build_env) + _installer(plan)
    pip = uses_pip(plan.python)
    if (not plan.build_isolation or plan.develop) and plan.build_requirements:
        commands.append(_join(base + sorted(set(plan.build_requirements))))
    flags = ([] if plan.build_isolation else ["--no-build-isolation"]) + (
        (["--pre"] if pip else ["--prerelease", "allow"]) if plan.prerelease else []) + (
        _config_flags(plan))
    targets: list[str] = []
    if plan.install_project and plan.develop and not plan.develop_declared:
        # its dependencies here, the project below
        targets += ["-r", "setup.py", *(w for extra in plan.extras for w in ("--extra", extra))]
    elif plan.install_project and not plan.develop:
        target = "." + (f"[{','.join(plan.extras)}]" if plan.extras else "")
        targets += ["-e", target] if plan.editable else [target]
    for path in plan.requirement_files:
        targets += ["-r", path]
    for group in [] if pip else plan.groups:  # dependency groups came after Python 2
        targets += ["--group", group]
    targets += list(dict.fromkeys(plan.packages)) + plan.vendored
    config = None if pip else metadata_config(plan.dependency_metadata)
    if targets and config:  # releases whose own metadata uv cannot read get the plan's
        commands.append(f"{config[0]} && {_join(base + flags + config[1] + targets)}")
    elif targets:
        commands.append(_join(base + flags + targets))
    if plan.install_project and plan.develop:
        commands.append(_join(_env_words(plan.build_env) + DEVELOP))
    commands += [_env_prefix(plan.env) + command for command in plan.prepare]
    return commands


def render_reinstall(plan: Plan | None) -> str | None:
    """The command that reinstalls the project alone (another commit, same dependencies);
    None when the plan does not install the project. A Node plan's project is its checkout:
    only the build steps its tests need run again."""
    if plan is None:
        return "uv pip install --no-deps --reinstall -e ."
    if plan.node is not None:
        return " && ".join(render_build_commands(plan.node.build)) or None
    if not plan.install_project:
        return None
    if plan.develop:
        return _join(_env_words(plan.build_env) + DEVELOP)
    # built the way the plan's install built it: the same per-package pins, the same isolation
    isolation = [] if plan.build_isolation else ["--no-build-isolation"]
    again = ["--force-reinstall"] if uses_pip(plan.python) else ["--reinstall"]
    words = [*_env_words(plan.build_env), *_installer(plan), *isolation, *_config_flags(plan)]
    alone = _join([*words, "--no-deps", *again, *(["-e", "."] if plan.editable else ["."])])
    if not plan.editable or uses_pip(plan.python):
        return alone
    # uv builds an editable project again each time, and adds what the commit declares that
    # the environment lacks (a dependency an older commit had), keeping every installed one
    # that still fits: as an install at that commit would. Alone where that cannot resolve.
    return f"{_join([*words, '-e', '.'])} || {alone}"


def _config_flags(plan: Plan) -> list[str]:
    """uv's per-package build settings (pip, for Python 2.7, has none to give)."""
    if uses_pip(plan.python):
        return []
    return [word for key, value in sorted(plan.config_settings.items())
            for word in ("--config-settings-package", f"{key}={value}")]


def _env_prefix(env: dict[str, str]) -> str:
    # PYTEST_ADDOPTS keeps what the harness passes in (its report path) after the plan's options.
    return "".join(f"{k}={shlex.quote(v)}" + ('"${PYTEST_ADDOPTS:+ $PYTEST_ADDOPTS}" '
                                               if k == "PYTEST_ADDOPTS" else " ")
                   for k, v in sorted(env.items()))


def _prefix(env: dict[str, str], services: list[str], hosts: list[str]) -> str:
    """Start the services and the stand-ins for `hosts` (if any), then set the environment:
    what precedes a test command."""
    start = f"{svc.START_COMMAND} && " if services else ""
    return start + stand_ins.start_prefix(hosts) + _env_prefix(env)


def test_env(plan: Plan) -> dict[str, str]:
    """The test environment: where the services are (started by us or already running on the
    machine), then the plan's own variables."""
    heap = heap_env(plan.node) if plan.node is not None else {}
    return {**svc.service_env(plan.services), **heap, **plan.env}


# Every outcome in pytest's short summary, passes included ("a" and "p"), but not -rA's "P":
# its PASSES section scans every report once per passed test after the last one, silently
# (pytest's summary_passes: 19 s of 28 for 8,000 trivial tests here, more under load), so
# it is slow, and the stall watchdog may stop a run whose tests all ended.
REPORT_ALL = "-rap"


def render_test(plan: Plan, apt: bool = True) -> list[str]:
    """The whole-suite test command, asking the runner for per-test results (-rap, -v);
    where services are started (`apt`), it starts them first."""
    prefix = _prefix(runner_env(plan.runner) | test_env(plan),
                     [s.kind for s in plan.services] if apt else [], plan.stand_ins)
    if plan.runner in SCRIPT_RUNNERS and plan.script is not None:  # the whole suite: no labels
        return [prefix + _join(script_words(plan.runner, plan.script, []))]
    if plan.runner == "unittest" and plan.entry:
        return [prefix + _join(["python", "-m", *plan.entry, *plan.test_args])]
    if plan.runner == "unittest":
        words = ["python", "-m", "unittest", *(plan.test_args or ["discover"])]
        if "-v" not in words:
            words.append("-v")
        return [prefix + _join(words)]
    return [prefix + _join(_pytest_words(plan.disabled_plugins, plan.ini_overrides, plan.test_args,
                                         plan.deselect))]


def _pytest_words(disabled_plugins: list[str], ini_overrides: dict[str, str],
                  args: list[str], deselect: list[str],
                  launcher: tuple[str, ...] = ("python", "-m")) -> list[str]:
    # -v names each test as it starts, so a hung one can be named; -rap summarises every result.
    words = [*launcher, "pytest", REPORT_ALL, "-v", "-p", "no:cacheprovider"]
    for plugin in disabled_plugins:
        words += ["-p", f"no:{plugin}"]
    for key, value in sorted(ini_overrides.items()):
        words += ["-o", f"{key}={value}"]
    words += args
    for test in deselect:
        # a module whose collection hung is never imported again; a test is left out by ID
        words += [f"--ignore={test}"] if "::" not in test and test.endswith(".py") else ["--deselect", test]
    return words


def plan_spec(plan: Plan, files: list[str], services: bool = True) -> TestSpec:
    """The plan's test command as a structured spec for `files` (the plan's own test paths
    are left out: the spec runs the files it is given). `services`: whether the backend the
    plan was validated on starts services (apt)."""
    if plan.node is not None:  # the Node runner's own options stay in its run
        return TestSpec(runner="node", node=plan.node.tests, env=node_test_env(plan),
                        files=list(files), stand_ins=list(plan.stand_ins),
                        services=[s.kind for s in svc.unique(plan.services)] if services else [])
    positional = set(positional_args(plan.test_args))
    # --pyargs reads the plan's paths as package names; the spec runs files.
    options = [a for i, a in enumerate(plan.test_args) if i not in positional and a != "--pyargs"]
    if plan.runner == "unittest":  # options only: the spec names its own modules
        options = [a for a in plan.entry and plan.test_args if a.startswith("-")]
    if plan.runner in SCRIPT_RUNNERS:  # the script's options come from `script`
        options = []
    return TestSpec(runner=plan.runner, entry=list(plan.entry), script=plan.script, args=options,
                    env=test_env(plan),
                    deselect=list(plan.deselect), ini_overrides=dict(plan.ini_overrides),
                    disabled_plugins=list(plan.disabled_plugins), files=list(files),
                    neutralised=list(plan.neutralised),
                    services=[s.kind for s in svc.unique(plan.services)] if services else [],
                    stand_ins=list(plan.stand_ins))


def leaving_out(spec: TestSpec, tests: list[str]) -> TestSpec:
    """`spec` with `tests` left out too (hung tests, rerun without them)."""
    return spec.model_copy(update={"deselect": [*spec.deselect, *tests]})


def render_spec(spec: TestSpec, files: list[str] | None = None,
                launcher: tuple[str, ...] = ("python", "-m"), pytest_extra: tuple[str, ...] = (),
                keywords: tuple[str, ...] = ()) -> str:
    """The command that runs `files` (default: the spec's own) the way the spec says.

    `launcher` runs the test runner module (e.g. under ``coverage run ... -m``); `pytest_extra`
    is appended to a pytest command (options that neutralise plugins for such a run);
    `keywords` narrow a bin/test run to the functions they name (its ``-k``).
    """
    files = spec.files if files is None else files
    prefix = _prefix(runner_env(spec.runner) | spec.env, spec.services, spec.stand_ins)
    if spec.runner == "node" and spec.node is not None:
        return prefix + render_test_command(spec.node, files).command
    if spec.runner in SCRIPT_RUNNERS and spec.script is not None:
        launch = [*launcher[:-1]] if launcher[-1:] == ("-m",) else [*launcher]
        return prefix + _join(script_words(spec.runner, spec.script, files, launch, keywords))
    if spec.runner == "unittest":
        modules = [f.removesuffix(".py").replace("/", ".") for f in files]
        entry = [*spec.entry, *spec.args] if spec.entry else ["unittest", "-v"]
        return prefix + _join([*launcher, *entry, *modules])
    words = _pytest_words(spec.disabled_plugins, spec.ini_overrides, spec.args + files,
                          spec.deselect, launcher)
    return prefix + _join(words + list(pytest_extra))


def report_format(spec: TestSpec) -> str | None:
    """Where a run of `spec` reports its tests, for :func:`~benchsmith.harness.testrun.run_tests`:
    a Node runner's report format, None for the runners read from their output."""
    if spec.runner == "node" and spec.node is not None:
        return render_test_command(spec.node).report_format
    return None


def node_test_env(plan: Plan) -> dict[str, str]:
    """The test environment of a Node plan: :func:`test_env`, and the heap a repair gave it."""
    env = test_env(plan)
    if plan.node is not None and plan.node.memory_mb:
        env["NODE_OPTIONS"] = f"--max-old-space-size={plan.node.memory_mb}"
    return env


# What SWE-bench runs a bin/test runner with: warnings some versions print on every import
# would otherwise be read as the tests' output.
BINTEST_ENV = {"PYTHONWARNINGS": "ignore::UserWarning,ignore::SyntaxWarning"}


def runner_env(runner: str) -> dict[str, str]:
    """The environment a runner kind always runs under (before the plan's own variables)."""
    return dict(BINTEST_ENV) if runner == "bintest" else {}


def script_labels(script: TestScript, files: list[str]) -> list[str]:
    """Test labels of `files` for a runtests script: the path below the script's directory,
    dotted and without ``.py`` (``tests/foo/tests.py`` -> ``foo.tests``)."""
    folder = script.path.rpartition("/")[0]
    prefix = f"{folder}/" if folder else ""
    return [f.removeprefix(prefix).removesuffix(".py").replace("/", ".") for f in files]


def script_words(runner: str, script: TestScript, files: list[str],
                 launcher: list[str] | None = None, keywords: tuple[str, ...] = ()) -> list[str]:
    """The words that run `files` (none: the whole suite) with a repository's own test script,
    for a deterministic per-test run: one process and verbose per-test lines (runtests, with its
    settings), or no cache, verbose lines and a fixed seed (bintest, under :data:`BINTEST_ENV`)."""
    declared = set(script.options)
    words = [*(launcher or ["python"]), script.path]
    if runner == "runtests":
        words += [f"--settings={script.settings}"] if script.settings else []
        words += ["--parallel", "1"] if "--parallel" in declared else []
        words += ["--verbosity" if "--verbosity" in declared else "-v", "2"]
        return words + script_labels(script, files)
    words += [next((o for o in ("-C", "--no-cache") if o in declared), "")]
    # a script that runs another runner unless asked for its own (`--use-<name>-runner`)
    words += [o for o in script.options if re.fullmatch(r"--use-[\w-]*runner", o)]
    words += ["--verbose" if "--verbose" in declared or "-v" not in declared else "-v"]
    words += ["--seed", str(script.seed)] if script.seed is not None else []
    # the files before -k: a script's -k may take every word up to the next option (sympy's)
    return [w for w in words if w] + files + (["-k", *keywords] if keywords else [])


def instance_spec(instance: TaskInstance) -> TestSpec:
    """How `instance`'s tests run: its recorded spec, or for instances written before specs were
    recorded (benchsmith 0.1.0), the spec read once from its rendered command."""
    if instance.test_spec is not None:
        return instance.test_spec
    return spec_from_command(instance.test[0] if instance.test else "", instance.test_runner,
                             instance.test_files)


def spec_from_command(command: str, runner: str, files: list[str]) -> TestSpec:
    """The spec of a command rendered by benchsmith 0.1.0 (only :func:`instance_spec` calls it,
    for old files; nothing else reads a command back)."""
    words = shlex.split(command) if command else []
    env: dict[str, str] = {}
    while words and "=" in words[0] and not words[0].startswith("-"):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    spec = TestSpec(runner="unittest" if runner == "unittest" else "pytest", env=env, files=files)
    if "pytest" not in words:
        return spec
    args = words[words.index("pytest") + 1:]
    positional = set(positional_args(args))
    args = [a for i, a in enumerate(args) if i not in positional]
    index = 0
    while index < len(args):  # what _pytest_words adds by itself
        if args[index] in (REPORT_ALL, "-rA", "-v"):  # -rA: what older specs asked for
            index += 1
        elif args[index] == "-p" and index + 1 < len(args) and args[index + 1] == "no:cacheprovider":
            index += 2
        else:
            spec.args.append(args[index])
            index += 1
    return spec


def render(plan: Plan, apt: bool = True) -> tuple[list[str], list[str]]:
    """Install and test commands for `plan` (`apt=False` where system packages are off-limits)."""
    return render_install(plan, apt), render_test(plan, apt)


def positional_args(args: list[str]) -> list[int]:
    """Indexes of the positional (path-like) arguments in a pytest argument list."""
    found: list[int] = []
    index = 0
    while index < len(args):
        word = args[index]
        if word.startswith("-"):
            takes_value = word in PYTEST_VALUE_OPTIONS
            index += 2 if takes_value else 1
            continue
        found.append(index)
        index += 1
    return found
