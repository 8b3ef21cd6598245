"""`benchsmith setupbench run|check|report|new`: the setup-agent benchmark."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchsmith.cli.aliases import renamed
from benchsmith.cli.app import WorkflowGroup, app, fail, out, say, warn
from benchsmith.cli.options import (
    InstanceIdsOpt,
    JobsOpt,
    MirrorsOpt,
    RetryFailedOpt,
    instance_ids,
    resume,
)
from benchsmith.core import BenchsmithError

if TYPE_CHECKING:
    from benchsmith.setupbench import SetupTask, TaskProblem

setupbench_app = typer.Typer(no_args_is_help=True, cls=WorkflowGroup, help=(
    "Setup-agent benchmark (SetupBench-style): run agents on tasks in fresh containers, "
    "check tasks, report results, author tasks."))
app.add_typer(setupbench_app, name="setupbench")

TasksArg = Annotated[Path | None, typer.Argument(help="Tasks file (SetupBench JSONL).")]
BuiltinOpt = Annotated[bool, typer.Option("--builtin", help="Use benchsmith's own task set.")]
FixturesOpt = Annotated[Path | None, typer.Option("--fixtures", help="Root of the fixture folders (default: fixtures/ next to the tasks file).")]
SuccessTimeoutOpt = Annotated[float, typer.Option("--success-timeout", min=1, help="Limit of the success command (some run a whole test suite), in seconds.")]
AgentTimeoutOpt = Annotated[float, typer.Option("--agent-timeout", min=1, help="Wall-clock limit of the agent per task, in seconds.")]
NetworkOpt = Annotated[str, typer.Option("--network", help="Container network (bridge, host, none, a network's name).")]
CpusOpt = Annotated[float, typer.Option("--cpus", min=0.1, help="CPU limit per container.")]
MemoryOpt = Annotated[str, typer.Option("--memory", help="Memory limit per container, e.g. 4g.")]
CaOpt = Annotated[str | None, typer.Option("--ca-bundle", help="CA bundle made available in containers (default: the host's).")]


def _tasks(tasks: Path | None, builtin: bool, ids: list[str] | None) -> list[SetupTask | TaskProblem]:
    from benchsmith.setupbench import builtin_tasks_file, load_tasks

    if builtin == (tasks is not None):
        fail("give a tasks file or --builtin (one of them)")
    path = builtin_tasks_file() if builtin else tasks
    assert path is not None
    try:
        items = load_tasks(path)
    except BenchsmithError as exc:
        fail(str(exc))
    wanted = instance_ids(ids)
    if wanted is not None:
        unknown = sorted(wanted - {item.instance_id for item in items})
        if unknown:
            fail(f"--instance-ids names no task of {path}: {', '.join(unknown)}")
        items = [item for item in items if item.instance_id in wanted]
    problems = [item for item in items if not hasattr(item, "success_command")]
    if items and len(problems) == len(items):
        fail(f"no usable task in {path} ({problems[0].instance_id}: "
             f"{getattr(problems[0], 'problem', '')})")
    if not items:
        fail(f"no task in {path}: it is empty")
    for item in problems:
        warn(f"{item.instance_id}: {getattr(item, 'problem', '')} (an error result is recorded)")
    return items


def _sandbox(network: str, ca_bundle: str | None, cpus: float, memory: str) -> Any:
    from benchsmith.cli.options import sandbox_config

    return sandbox_config("docker", network, ca_bundle, cpus, memory)


@setupbench_app.command("run")
@renamed("--only", "--instance-ids", "ids")
@renamed("--timeout", "--agent-timeout", "timeout")
def run_command(
    tasks: TasksArg = None,
    agent: Annotated[str, typer.Option("--agent", help="noop, oracle, benchsmith, or a command run inside each task's container.")] = "noop",
    results: Annotated[Path, typer.Option("--out", help="Results file (JSONL; resumed when it exists).")] = Path("setupbench-results.jsonl"),
    builtin: BuiltinOpt = False, fixtures: FixturesOpt = None, mirrors: MirrorsOpt = None,
    timeout: AgentTimeoutOpt = 7200.0, success_timeout: SuccessTimeoutOpt = 1800.0, jobs: JobsOpt = 1,
    ids: InstanceIdsOpt = None, network: NetworkOpt = "bridge", cpus: CpusOpt = 2.0,
    memory: MemoryOpt = "4g", ca_bundle: CaOpt = None, retry_failed: RetryFailedOpt = False,
) -> None:
    """Run an agent on every task, each in a fresh container; one result line per task."""
    from benchsmith.setupbench import (
        RunOptions,
        make_agent,
        read_results,
        run_tasks,
        summarize,
        table_lines,
    )

    items = _tasks(tasks, builtin, ids)
    if fixtures is not None and not fixtures.is_dir():
        fail(f"fixtures folder not found: {fixtures}")
    if mirrors is not None and not Path(mirrors).is_dir():
        fail(f"mirrors folder not found: {mirrors}")
    try:
        make_agent(agent)
    except BenchsmithError as exc:
        fail(str(exc))
    config = _sandbox(network, ca_bundle, cpus, memory)
    options = RunOptions(agent=agent, timeout_s=timeout, success_timeout_s=success_timeout,
                         mirrors=mirrors, fixtures=str(fixtures) if fixtures else None)
    run_tasks(items, options, config, results, jobs=jobs, progress=say,
              resume=resume(retry_failed))
    for line in table_lines(summarize(read_results(results))):
        out.print(line, highlight=False)
    out.print(f"results: {results}", highlight=False)


@setupbench_app.command("check")
@renamed("--only", "--instance-ids", "ids")
@renamed("--timeout", "--agent-timeout", "timeout")
def check_command(
    tasks: TasksArg = None, builtin: BuiltinOpt = False, fixtures: FixturesOpt = None,
    mirrors: MirrorsOpt = None, runs: Annotated[int, typer.Option("--runs", min=1, help="Repetitions.")] = 3,
    timeout: AgentTimeoutOpt = 1800.0, jobs: JobsOpt = 1, ids: InstanceIdsOpt = None,
    results: Annotated[Path, typer.Option("--out", help="Where every run's result is appended.")] = Path("setupbench-check.jsonl"),
    network: NetworkOpt = "bridge", cpus: CpusOpt = 2.0, memory: MemoryOpt = "4g",
    ca_bundle: CaOpt = None,
) -> None:
    """Prove tasks deterministic: the oracle passes and noop fails, every run, in fresh containers."""
    from benchsmith.setupbench import RunOptions, check_tasks

    items = _tasks(tasks, builtin, ids)
    config = _sandbox(network, ca_bundle, cpus, memory)
    options = RunOptions(agent="oracle", timeout_s=timeout, mirrors=mirrors,
                         fixtures=str(fixtures) if fixtures else None)
    outcomes = check_tasks(items, options, config, results, runs=runs, jobs=jobs, progress=say)
    for outcome in outcomes:
        status = "ok" if outcome.ok else "NOT DETERMINISTIC"
        detail = f": {'; '.join(outcome.reasons)}" if outcome.reasons else ""
        out.print(f"{outcome.instance_id}: {status} (oracle {'/'.join(outcome.oracle)}, "
                  f"noop {'/'.join(outcome.noop)}){detail}", highlight=False)
    good = sum(outcome.ok for outcome in outcomes)
    out.print(f"{good}/{len(outcomes)} task(s) pass check ({runs} run(s) each)", highlight=False)
    if good != len(outcomes):
        raise typer.Exit(1)


@setupbench_app.command("report")
def report_command(
    results: Annotated[Path, typer.Argument(help="Results file written by `setupbench run`.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    html: Annotated[Path | None, typer.Option("--html", help="Also write a small HTML page here.")] = None,
) -> None:
    """Success rate per task type and overall (errors counted apart)."""
    from benchsmith.setupbench import html_page, read_results, summarize, table_lines

    try:
        found = read_results(results)
    except BenchsmithError as exc:
        fail(str(exc))
    rows = summarize(found)
    if as_json:
        out.print(json.dumps([row.model_dump() for row in rows], indent=2), highlight=False)
    else:
        for line in table_lines(rows):
            out.print(line, highlight=False)
    if html is not None:
        html.write_text(html_page(rows, found, f"setupbench: {results.name}"), encoding="utf-8")
        say(f"wrote {html}")


@setupbench_app.command("new")
def new_command(
    instance_id: Annotated[str, typer.Argument(help="The new task's instance_id.")],
    task_type: Annotated[str, typer.Option("--type", help="reposetup, dependency_resolution, dbsetup or bgsetup (SetupBench's names).")] = "dbsetup",
    folder: Annotated[Path, typer.Option("--dir", help="Task-set folder (tasks.jsonl, fixtures/, solutions/).")] = Path("."),
    repo_url: Annotated[str | None, typer.Option("--repo-url", help="reposetup: the repository's URL.")] = None,
    base_commit: Annotated[str | None, typer.Option("--base-commit", help="reposetup: the commit to set up.")] = None,
) -> None:
    """Scaffold a task: its JSONL line, fixture folder, reference solution and success command."""
    from benchsmith.setupbench import scaffold_task

    try:
        written = scaffold_task(folder, instance_id, task_type, repo_url, base_commit)
    except BenchsmithError as exc:
        fail(str(exc))
    for path in written:
        out.print(f"wrote {path}", highlight=False)
    out.print(f"next: edit them, then `benchsmith setupbench check {folder / 'tasks.jsonl'} "
              f"--instance-ids {instance_id}`", highlight=False)


@setupbench_app.command("mine-conflicts")
def mine_conflicts_command(
    repos: Annotated[list[str], typer.Argument(help="Repositories: local paths, or owner/name with --mirrors.")],
    from_git: Annotated[bool, typer.Option("--from-git", help="Mine commits that fix a resolver conflict in a requirements file.")] = False,
    mirrors: MirrorsOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Candidates per repository.")] = 20,
    verify: Annotated[bool, typer.Option("--verify/--no-verify", help="Keep only tasks whose conflict reproduces in a fresh container.")] = True,
    results: Annotated[Path, typer.Option("--out", help="Tasks file to write (JSONL).")] = Path("conflict-tasks.jsonl"),
    network: NetworkOpt = "bridge", cpus: CpusOpt = 2.0, memory: MemoryOpt = "4g",
    ca_bundle: CaOpt = None,
) -> None:
    """Dependency-conflict tasks from repository history (from git history, --from-git; the GitHub API is not supported)."""
    from benchsmith.harness.checkout import resolve_source
    from benchsmith.setupbench.conflicts import check_repo, find_conflict_fixes, verify_conflicts

    if not from_git:
        fail("only --from-git is implemented: pass --from-git")
    found = []
    for repo in repos:
        source = resolve_source(repo, mirrors)
        if "://" in source:
            fail(f"{repo}: no local clone (give a path, or --mirrors with owner+name/repo)")
        try:
            git_dir = check_repo(source)
        except BenchsmithError as exc:
            fail(str(exc))
        url = f"https://github.com/{repo}" if "/" in repo and not Path(repo).exists() else source
        candidates = find_conflict_fixes(git_dir, url, limit)
        say(f"{repo}: {len(candidates)} candidate commit(s)")
        found += candidates
    if verify and found:
        config = _sandbox(network, ca_bundle, cpus, memory)
        found = [task for task, kept, _ in verify_conflicts(found, config, mirrors, say) if kept]
    results.write_text("".join(json.dumps(task.published()) + "\n" for task in found),
                       encoding="utf-8")
    out.print(f"{len(found)} task(s) written to {results}", highlight=False)
