"""Options shared by several commands, declared once and added by decorators.

``@sandbox_options`` adds where commands run (``--backend`` and the Docker knobs) and hands the
command a checked ``sandbox: SandboxConfig``; ``@engine_options`` adds the setup engine's knobs
as well and hands it ``options: SetupOptions``.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchsmith.cli.app import fail, say, warn
from benchsmith.core import BenchsmithError

if TYPE_CHECKING:
    from benchsmith.executor import Executor, ExecutorConfig
    from benchsmith.harness.jsonl import Resume
    from benchsmith.sandbox.config import SandboxConfig

TIMEOUT_S = 1800.0  # --timeout of every command that runs tests
STALL_TIMEOUT_S = 300.0  # --stall-timeout of every command that runs tests
TIMEOUT_HELP = "Seconds per test command (and per install step)."
STALL_HELP = ("Seconds a test run may go without output before the running test counts as hung "
              "(failing) and the rest runs without it.")
RUNS_HELP = ("Test runs per side (before/after the gold patch); a test whose outcome changes "
             "between runs is flaky: recorded with its counts, never a label.")

_SANDBOX: dict[str, tuple[Any, Any]] = {
    "backend": (Annotated[str, typer.Option("--backend", help="Where commands run: local or docker.")], "local"),
    "network": (Annotated[str, typer.Option("--network", help="Docker: container network (bridge, host, or a network's name).")], "bridge"),
    "ca_bundle": (Annotated[str | None, typer.Option("--ca-bundle", help="Docker: CA bundle made available in containers (default: the host's).")], None),
    "cpus": (Annotated[float, typer.Option("--cpus", min=0.1, help="Docker: CPU limit per container.")], 2.0),
    "memory": (Annotated[str, typer.Option("--memory", help="Docker: memory limit per container, e.g. 4g.")], "4g"),
    "pids_limit": (Annotated[int, typer.Option("--pids-limit", help="Docker: processes and threads per container (a fork bomb stops there).")], 16384),
    "disk": (Annotated[str, typer.Option("--disk", help="Docker: disk space one command may use, e.g. 10g (0: no limit).")], "10g"),
    "system_packages": (Annotated[bool, typer.Option("--system-packages", help="Local: install the Debian packages and services the setup needs on this host with apt-get (root on Debian only; Docker always installs them in its containers).")], False),
}
_ENGINE: dict[str, tuple[Any, Any]] = {
    "max_iterations": (Annotated[int, typer.Option("--max-iterations", min=0, help="Repair rounds after the first attempt.")], 4),
    "threshold": (Annotated[float, typer.Option("--threshold", min=0.0, max=1.0, help="Share of tests that must pass.")], 0.95),
    "refdb": (Annotated[str | None, typer.Option("--refdb", help="Reference database file (SQLite).")], None),
    "no_refdb": (Annotated[bool, typer.Option("--no-refdb", help="Neither read nor write the reference database.")], False),
    "timeout": (Annotated[float, typer.Option("--timeout", min=1, help=TIMEOUT_HELP)], TIMEOUT_S),
    "test_timeout": (Annotated[float | None, typer.Option("--test-timeout", min=1, hidden=True)], None),
    "stall_timeout": (Annotated[float, typer.Option("--stall-timeout", min=1, help=STALL_HELP)], STALL_TIMEOUT_S),
    "test_network": (Annotated[bool, typer.Option("--test-network", help="Docker: keep the network for the tests (default: installs only).")], False),
    "model": (Annotated[str | None, typer.Option("--model", help="PROVIDER:MODEL asked for a change to the plan where no rule repairs (off by default; see `generate --help`).")], None),
    "base_url": (Annotated[str | None, typer.Option("--base-url", help="With --model: the provider's URL.")], None),
    "ecosystem": (Annotated[str | None, typer.Option("--ecosystem", help="Set repositories up as projects of this ecosystem (python, node); default: the one their files and CI say.")], None),
}

_EXECUTOR: dict[str, tuple[Any, Any]] = {
    "executor_name": (Annotated[str, typer.Option("--executor", help="Where tasks run: local (threads, --jobs) or ray (a Ray cluster).")], "local"),
    "ray_address": (Annotated[str | None, typer.Option("--ray-address", envvar="RAY_ADDRESS", help="Ray: the cluster's HOST:PORT (default: the cluster on this machine).")], None),
    "max_retries": (Annotated[int, typer.Option("--max-retries", min=0, help="Ray: re-runs of a task whose worker or node died.")], 2),
    "task_timeout": (Annotated[float | None, typer.Option("--task-timeout", min=1, help="Wall-clock seconds per task (a repository, an instance); a task past it is cancelled and recorded as an error.")], None),
}

RevOpt = Annotated[str | None, typer.Option("--rev", help="Commit, tag or branch to set up.")]
DateOpt = Annotated[str | None, typer.Option(
    "--date", help="YYYY-MM-DD: pin dependencies to this date (and, without --rev, use the last commit before it).")]
MirrorsOpt = Annotated[str | None, typer.Option("--mirrors", help="Directory of local clones of owner/name repositories (DIR/owner+name/repo or DIR/owner/name).")]
TimeoutOpt = Annotated[float, typer.Option("--timeout", min=1, help=TIMEOUT_HELP)]
StallTimeoutOpt = Annotated[float, typer.Option("--stall-timeout", min=1, help=STALL_HELP)]
RunsOpt = Annotated[int, typer.Option("--runs", min=1, help=RUNS_HELP)]

JobsOpt = Annotated[int, typer.Option("--jobs", min=1, help="Tasks run in parallel (repositories, instances or predictions: what the command works through).")]

RetryFailedOpt = Annotated[bool, typer.Option("--retry-failed", help=(
    "Resuming from --out: also redo what ended in a failure there (an error, a failed setup, "
    "an unsuccessful task), not only what is missing; infrastructure errors are always redone."))]

SourceOpt = Annotated[list[str] | None, typer.Option("--source", help="owner/name=PATH of a clone (repeatable).")]
InstanceIdsOpt = Annotated[list[str] | None, typer.Option(
    "--instance-ids", "--id", help="Only these instances (repeatable, or separated by commas or spaces).")]


def instance_ids(ids: list[str] | None) -> set[str] | None:
    """The IDs of `--instance-ids` values (repeated, or separated by commas or spaces)."""
    if not ids:
        return None
    return {i for value in ids for i in re.split(r"[,\s]+", value) if i}


def only_instances(ids: list[str] | None, available: Iterable[str]) -> set[str] | None:
    """The instance IDs `--instance-ids` asks for (None: all); each one not among `available`
    is a warning line."""
    wanted = instance_ids(ids)
    if wanted is None:
        return None
    for missing in sorted(wanted - set(available)):
        warn(f"no instance {missing}: skipped")
    return wanted


def resume(retry_failed: bool) -> Resume:
    """How a command resumes from its output file; its one "skipped N already done" line goes
    to stderr."""
    from benchsmith.harness.jsonl import Resume

    return Resume(retry_failed=retry_failed, announce=say)


def sandbox_config(backend: str, network: str, ca_bundle: str | None, cpus: float,
                   memory: str, pids_limit: int = 16384, disk: str = "10g",
                   system_packages: bool = False) -> SandboxConfig:
    """The checked configuration of the chosen backend; one error line when it cannot run."""
    from pydantic import ValidationError

    from benchsmith.sandbox import DockerSandboxConfig, LocalSandboxConfig
    from benchsmith.sandbox.config import check_backend, parse_backend

    try:
        parse_backend(backend)
        if ca_bundle and not Path(ca_bundle).is_file():
            raise BenchsmithError(f"CA bundle not found: {ca_bundle}")
        config: SandboxConfig = LocalSandboxConfig(
            system_packages=system_packages) if backend == "local" else DockerSandboxConfig(
            network_mode=network, ca_bundle=ca_bundle, cpus=cpus, memory=memory,
            pids_limit=pids_limit, disk=None if disk.strip() in ("0", "") else disk)
        if removed := check_backend(config):
            say(f"removed what {len(removed)} interrupted run(s) left behind: "
                + ", ".join(removed[:5]) + (" ..." if len(removed) > 5 else ""))
    except BenchsmithError as exc:
        fail(str(exc))
    except ValidationError as exc:  # a limit that makes no sense
        fail(str(exc.errors()[0]["msg"]).removeprefix("Value error, "))
    return config


def _evaluated(annotation: Any, namespace: dict[str, Any]) -> Any:
    """A string annotation's type; one that exists only for type checkers stays a string (it is
    the target of another of these decorators, which takes it out of the signature)."""
    if not isinstance(annotation, str):
        return annotation
    try:
        return eval(annotation, namespace)  # noqa: S307
    except NameError:
        return annotation


def _inject(func: Callable[..., Any], added: dict[str, tuple[Any, Any]], target: str,
            build: Callable[..., Any]) -> Callable[..., Any]:
    signature = inspect.signature(func)
    # Annotations are strings (postponed evaluation); the target's type may exist only for
    # type checkers, so only the kept parameters are evaluated, in the command's module.
    kept = [p.replace(annotation=_evaluated(p.annotation, func.__globals__))
            for p in signature.parameters.values() if p.name != target]
    extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                               annotation=annotation) for name, (annotation, default) in added.items()]

    @functools.wraps(func)
    def command(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name) for name in added}
        kwargs[target] = build(**values)
        return func(*args, **kwargs)

    parameters = kept + extra
    command.__signature__ = signature.replace(parameters=parameters, return_annotation=None)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    return command


def sandbox_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add the shared sandbox options; the command receives `sandbox: SandboxConfig`."""
    return _inject(func, _SANDBOX, "sandbox", sandbox_config)


def _setup_options(**values: Any) -> Any:
    from benchsmith.setup.engine import SetupOptions

    sandbox = sandbox_config(**{name: values.pop(name) for name in _SANDBOX})
    if values["model"] is not None:  # the only way into the LLM layer from the setup engine
        from benchsmith.setup.model_repair import load_llm

        try:
            load_llm(values["model"], values["base_url"])  # checked now: one line, not one per repository
        except BenchsmithError as exc:
            fail(str(exc))
    elif values["base_url"] is not None:
        fail("--base-url needs --model")
    if values["ecosystem"] is not None:
        from benchsmith.setup.ecosystems import ecosystems

        if values["ecosystem"] not in ecosystems():
            fail(f"unknown ecosystem {values['ecosystem']!r} (known: {', '.join(ecosystems())})")
    return SetupOptions(max_iterations=values["max_iterations"], threshold=values["threshold"],
                        refdb=values["refdb"], use_refdb=not values["no_refdb"],
                        test_timeout_s=_renamed(values, "test_timeout", "timeout"),
                        stall_timeout_s=values["stall_timeout"],
                        offline_tests=not values["test_network"], sandbox=sandbox,
                        model=values["model"], base_url=values["base_url"],
                        ecosystem=values["ecosystem"])


def _renamed(values: dict[str, Any], old: str, new: str) -> Any:
    """The value of option `new`, or of its deprecated spelling `old` (with a warning line)."""
    from benchsmith.cli.aliases import deprecated

    if values[old] is None:
        return values[new]
    deprecated("--" + old.replace("_", "-"), "--" + new.replace("_", "-"))
    return values[old]


def engine_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add the setup engine's options and the sandbox options; the command receives
    `options: SetupOptions`."""
    return _inject(func, {**_ENGINE, **_SANDBOX}, "options", _setup_options)


def _executor_config(executor_name: str, ray_address: str | None, max_retries: int,
                     task_timeout: float | None) -> ExecutorConfig:
    from benchsmith.executor import ExecutorConfig, parse_executor

    try:
        kind = parse_executor(executor_name)
    except BenchsmithError as exc:
        fail(str(exc))
    return ExecutorConfig(type=kind, address=ray_address, max_retries=max_retries,
                          task_timeout_s=task_timeout)


def executor_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add where a batch's tasks run (``--executor``, ``--ray-address``, retries, limits); the
    command receives `executor: ExecutorConfig` (its `jobs` is the command's to set)."""
    return _inject(func, _EXECUTOR, "executor", _executor_config)


def open_executor(config: ExecutorConfig, jobs: int, sandbox: SandboxConfig) -> Executor:
    """The executor for `config` with `jobs` local threads, able to run `sandbox`'s tasks; one
    error line when Ray is missing, its cluster cannot be joined or offers no such node."""
    from benchsmith.executor import Resources, make_executor

    try:
        executor = make_executor(config.model_copy(update={"jobs": jobs}))
        executor.require(Resources(custom=sandbox.node_resources))
    except BenchsmithError as exc:
        fail(str(exc))
    return executor


def check_date(value: str | None) -> None:
    """Exit with one line unless `value` is None or a YYYY-MM-DD date."""
    from datetime import date

    if value is None:
        return
    try:
        date.fromisoformat(value)
    except ValueError:
        fail(f"invalid date {value!r}: expected YYYY-MM-DD")


def parse_sources(values: list[str] | None) -> dict[str, str]:
    """``owner/name=PATH`` options as a mapping; a malformed one is a one-line error."""
    sources: dict[str, str] = {}
    for value in values or []:
        repo, sep, path = value.partition("=")
        if not sep or not repo or not path:
            fail(f"invalid --source {value!r}: expected owner/name=PATH")
        sources[repo] = path
    return sources
