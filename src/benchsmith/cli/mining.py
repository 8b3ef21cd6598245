"""`benchsmith candidates`, `mine`, `build` and `verify`: from repositories to task instances."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from benchsmith.cli.aliases import instances_option
from benchsmith.cli.app import app, fail, invalid, out, read_input, say, warn
from benchsmith.cli.options import (
    STALL_TIMEOUT_S,
    TIMEOUT_S,
    InstanceIdsOpt,
    JobsOpt,
    MirrorsOpt,
    RetryFailedOpt,
    RunsOpt,
    SourceOpt,
    StallTimeoutOpt,
    TimeoutOpt,
    check_date,
    engine_options,
    executor_options,
    only_instances,
    open_executor,
    parse_sources,
    resume,
    sandbox_options,
)
from benchsmith.core import BenchsmithError

if TYPE_CHECKING:
    from benchsmith.executor import ExecutorConfig
    from benchsmith.harness.worktree import Worktree
    from benchsmith.instance import FlakyTest, TaskInstance
    from benchsmith.mining.build import InstanceBuilder
    from benchsmith.mining.models import PullRequest
    from benchsmith.sandbox.config import SandboxConfig
    from benchsmith.setup.engine import SetupOptions

GITHUB_HELP = "Mine with the GitHub REST API (needs GITHUB_TOKEN) instead of git history."
FROM_GIT_HELP = ("Mine git history (the default): owner/name is cloned, or found in --mirrors; "
                 "offline only with --mirrors or PATH lines.")


@app.command()
def candidates(
    from_pypi_top: Annotated[int | None, typer.Option("--from-pypi-top", min=1, help="Take the N most downloaded PyPI projects.")] = None,
    repos: Annotated[Path | None, typer.Option("--repos", help="File of PyPI names, owner/name lines or GitHub URLs.")] = None,
    out_path: Annotated[Path, typer.Option("--out", help="repos.txt to write (plus repos.txt.report.json).")] = Path("repos.txt"),
    index_url: Annotated[str | None, typer.Option("--index-url", help="PyPI JSON API base (default https://pypi.org).")] = None,
    top_url: Annotated[str | None, typer.Option("--top-url", help="Top-PyPI list (URL or file).")] = None,
) -> None:
    """Resolve PyPI projects to GitHub repositories and keep permissively licensed ones."""
    from benchsmith.mining.candidates import candidates_main

    try:
        report = candidates_main(from_pypi_top, repos, out_path, index_url, top_url)
    except BenchsmithError as exc:
        fail(str(exc))
    table = Table(title=f"candidates: {out_path}")
    table.add_column("stage")
    table.add_column("count", justify="right")
    for stage, count in report.counts.items():
        table.add_row(stage, str(count))
    if report.infra_failures:
        table.add_row("index failures (not counted as drops)", str(report.infra_failures))
    out.print(table)


@app.command()
def mine(
    repos_file: Annotated[Path, typer.Argument(metavar="REPOS_FILE", help="One repository per line: owner/name, or (from git) 'PATH \\[owner/name]'; # comments.")],
    out_path: Annotated[Path, typer.Option("--out", help="prs.jsonl to append valid PRs to; a re-run skips repositories done (see --retry-failed).")] = Path("prs.jsonl"),
    github: Annotated[bool, typer.Option("--github", help=GITHUB_HELP)] = False,
    from_git: Annotated[bool, typer.Option("--from-git", help=FROM_GIT_HELP)] = False,
    max_prs: Annotated[int | None, typer.Option("--max-prs", min=1, help="Valid PRs per repository at most.")] = None,
    mirrors: MirrorsOpt = None,
    issues: Annotated[Path | None, typer.Option("--issues", help="--from-git: JSONL of issues (number, title, body, comments).")] = None,
    retry_failed: RetryFailedOpt = False,
) -> None:
    """Find merged PRs that resolve an issue and change tests; split them into patch and test patch."""
    from benchsmith.mining.mine import mine_repos, read_repos

    if github and from_git:
        fail("choose one of --github and --from-git")
    if issues is not None and not issues.is_file():
        fail(f"issues file not found: {issues}")
    try:
        entries = read_repos(repos_file)
        if not entries:
            fail(f"no repository in {repos_file}")
        results = mine_repos(entries, "github" if github else "git", out_path, max_prs,
                             mirrors=mirrors, issues_file=issues, progress=say,
                             resume=resume(retry_failed), warn=warn)
    except BenchsmithError as exc:
        fail(str(exc))
    if not results:
        out.print(f"every repository of {repos_file} is already in {out_path}",
                  highlight=False, soft_wrap=True)
        return
    table = Table(title=f"mined: {out_path}")
    for column in ("repository", "examined", "valid PRs", "main skip reasons / error"):
        table.add_column(column)
    for result in results:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(result.skipped.items(), key=lambda kv: -kv[1])[:3])
        table.add_row(result.repo, str(result.examined), str(result.kept), result.error or reasons)
    out.print(table)
    if all(result.error for result in results):
        fail(f"no repository could be mined ({results[0].repo}: {results[0].error}); "
             "a re-run with --retry-failed tries them again", 1)


def _builder(options: SetupOptions, per_repo: int | None, runs: int, quality: str,
             out_path: Path) -> InstanceBuilder:
    """The instance builder of `build` and `refresh`: gold patches re-graded by evaluation's own
    fix-mode function, logs next to `out_path`."""
    from benchsmith.evaluation.fix import gold_verdict
    from benchsmith.mining.build import InstanceBuilder
    from benchsmith.setup.engine import SetupEngine

    if quality not in ("strict", "default", "off"):
        fail(f"--quality must be strict, default or off, not {quality!r}")
    logs = out_path.with_suffix(".logs")
    test_timeout, stall_timeout = options.test_timeout_s, options.stall_timeout_s

    def regrade(instance: TaskInstance, worktree: Worktree) -> str | None:
        return gold_verdict(worktree, instance, test_timeout, logs / instance.instance_id,
                            stall_timeout=stall_timeout)

    return InstanceBuilder(SetupEngine(options), per_repo=per_repo, runs=runs, progress=say,
                           quality=quality, regrade=regrade)  # type: ignore[arg-type]


@app.command()
@engine_options
@executor_options
def refresh(
    dataset_dir: Annotated[Path, typer.Argument(help="The dataset folder (dataset.json, dated splits).")],
    since: Annotated[str, typer.Option("--since", help="'last' (the last split's cut-off) or YYYY-MM-DD: mine PRs merged after it.")] = "last",
    until: Annotated[str | None, typer.Option("--until", help="YYYY-MM-DD cut-off of the new split (default: now).")] = None,
    repos: Annotated[Path | None, typer.Option("--repos", help="Create the dataset from this repos file (the `mine` format).")] = None,
    github: Annotated[bool, typer.Option("--github", help=GITHUB_HELP)] = False,
    from_git: Annotated[bool, typer.Option("--from-git", help=FROM_GIT_HELP)] = False,
    mirrors: MirrorsOpt = None,
    max_prs: Annotated[int | None, typer.Option("--max-prs", min=1, help="Valid PRs per repository at most.")] = None,
    per_repo: Annotated[int | None, typer.Option("--per-repo", min=1, help="Valid instances per repository at most.")] = None,
    runs: RunsOpt = 2,
    quality: Annotated[str, typer.Option("--quality", help="strict, default or off (see `build`).")] = "default",
    jobs: JobsOpt = 1,
    retry_failed: RetryFailedOpt = False,
    *,
    options: SetupOptions,
    executor: ExecutorConfig,
) -> None:
    """Add a dated split of new instances to a dataset: PRs merged since the last run, built."""
    from datetime import datetime, time, timezone

    from benchsmith.mining import refresh as datasets

    if github and from_git:
        fail("choose one of --github and --from-git")
    from benchsmith.mining.mine import read_repos

    try:
        listed = repos if repos is not None else dataset_dir / "repos.txt"
        if listed.is_file() and not read_repos(listed):
            fail(f"no repository in {listed}: nothing to refresh (the cut-off is not used up)")
        if repos is not None:
            datasets.create(dataset_dir, repos, "github" if github else "git", mirrors)
        manifest = datasets.load_manifest(dataset_dir)
        start = datasets.parse_since(since, manifest)
    except BenchsmithError as exc:
        fail(str(exc))
    if until is None:
        cut = datetime.now(timezone.utc).replace(microsecond=0)
    else:
        check_date(until)
        cut = datetime.combine(datetime.fromisoformat(until).date(), time.min, timezone.utc)
    if start is not None and datetime.fromisoformat(start) >= cut:
        fail(f"--since {since} is not before the cut-off {cut.date()}")
    if options.use_refdb and options.refdb is None:  # every run reuses the dataset's plans
        options = options.model_copy(update={"refdb": str(dataset_dir / "reference.sqlite")})
    runner = open_executor(executor, jobs, options.sandbox)

    def build_split(prs: list[PullRequest], instances: Path) -> None:
        builder = _builder(options, per_repo, runs, quality, instances)
        builder.build(prs, instances, instances.with_suffix(".log.jsonl"), jobs=jobs,
                      executor=runner, resume=resume(retry_failed))

    try:
        split = datasets.refresh(dataset_dir, start, cut, max_prs, build_split, mirrors=mirrors,
                                 progress=say)
    except BenchsmithError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        fail(f"interrupted: the split in progress is kept in {dataset_dir}/.pending; "
             "re-run to resume", 130)
    finally:
        runner.close()
    table = Table(title=f"dataset: {dataset_dir}")
    for column in ("split", "merged after", "up to", "PRs", "instances"):
        table.add_column(column)
    for row in datasets.load_manifest(dataset_dir).splits:
        table.add_row(row.name, row.since or "-", row.until, str(row.prs), str(row.instances))
    out.print(table)
    out.print(f"new split {split.name}: {split.instances} instance(s)", highlight=False)


def _read_prs(path: Path) -> list[PullRequest]:
    from benchsmith.mining.models import PullRequest

    if not path.is_file():
        fail(f"PR file not found: {path}")
    prs = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            prs.append(PullRequest.model_validate_json(line))
        except ValueError as exc:
            fail(f"{path}:{number}: {invalid(exc)} (expected a pull request from `benchsmith mine`)")
    if not prs:
        fail(f"no pull request in {path}: it is empty (mine some with `benchsmith mine`)")
    return prs


@app.command()
@engine_options
@executor_options
def build(
    prs_file: Annotated[Path, typer.Argument(help="prs.jsonl from `benchsmith mine`.")],
    out_path: Annotated[Path, typer.Option("--out", help="instances.jsonl (SWE-bench format + benchsmith fields).")] = Path("instances.jsonl"),
    per_repo: Annotated[int | None, typer.Option("--per-repo", min=1, help="Valid instances per repository at most.")] = None,
    quality: Annotated[str, typer.Option("--quality", help="strict: drop every flagged instance; default: drop link-only and solution-leaking statements, flag the rest; off: keep all.")] = "default",
    runs: RunsOpt = 2,
    jobs: JobsOpt = 1,
    candidates_report: Annotated[Path | None, typer.Option("--candidates-report", help="repos.txt.report.json for the first funnel rows.")] = None,
    retry_failed: RetryFailedOpt = False,
    *,
    options: SetupOptions,
    executor: ExecutorConfig,
) -> None:
    """Set up each PR's base commit, run its tests before and after the fix, keep FAIL_TO_PASS ones."""
    import json

    from benchsmith.mining.build import read_outcomes
    from benchsmith.mining.funnel import build_funnel

    prs = _read_prs(prs_file)
    report = None
    if candidates_report is not None:
        try:
            report = json.loads(candidates_report.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            fail(f"cannot read candidates report {candidates_report}: {exc}")
    log_path = out_path.with_suffix(".log.jsonl")
    builder = _builder(options, per_repo, runs, quality, out_path)
    runner = open_executor(executor, jobs, options.sandbox)
    try:
        builder.build(prs, out_path, log_path, jobs=jobs, executor=runner,
                      resume=resume(retry_failed))
    except KeyboardInterrupt:
        fail(f"interrupted: finished instances are kept in {out_path}; re-run to resume", 130)
    finally:
        runner.close()
    outcomes = read_outcomes(log_path)
    funnel = build_funnel(prs, outcomes, report, per_repo=per_repo)
    funnel_path = out_path.with_suffix(".funnel.json")
    funnel_path.write_text(funnel.model_dump_json(indent=2) + "\n", encoding="utf-8")
    table = Table(title=f"funnel: {out_path}")
    table.add_column("stage")
    table.add_column("count", justify="right")
    for stage, count in funnel.repo_stages.items():
        table.add_row(f"repositories: {stage}", "-" if count is None else str(count))
    for stage, count in funnel.pr_stages.items():
        table.add_row(f"PRs: {stage}", str(count))
    for stage, count in funnel.terminal.items():
        table.add_row(f"PRs ending at: {stage}", str(count))
    out.print(table)
    for flag, count in funnel.flags.items():
        out.print(f"quality flag {flag}: {count} instance(s)", highlight=False)
    for reason, count in list(funnel.error_reasons.items())[:5]:
        out.print(f"PRs ending in an error ({count}): {reason}", highlight=False, soft_wrap=True)
    out.print(_flaky_line([o.flaky for o in outcomes], "PR(s)"), highlight=False, soft_wrap=True)
    if funnel.setup_by_year:
        years = Table(title="base commits set up, by year of the PR")
        for column in ("year", "tried", "set up", "setup failed", "share", "errors"):
            years.add_column(column, justify="left" if column == "year" else "right")
        for year, counts in funnel.setup_by_year.items():
            years.add_row(year, str(counts.tried), str(counts.set_up), str(counts.setup_failed),
                          "-" if counts.share is None else f"{counts.share:.0%}", str(counts.errors))
        out.print(years)
    per = Table(title="per repository")
    for column in ("repository", "valid PRs", "setup ok", "errors", "instances", "not kept"):
        per.add_column(column)
    for row in funnel.rows:
        per.add_row(row.repo, str(row.valid_prs), str(row.setup_ok), str(row.errors), str(row.instances),
                    ", ".join(f"{k} {v}" for k, v in sorted(row.reasons.items())))
    out.print(per)


@app.command()
@instances_option("instances_file")
@sandbox_options
def verify(
    instances_file: Annotated[Path | None, typer.Argument(metavar="INSTANCES", help="instances.jsonl from `benchsmith build` (or --instances FILE).", show_default=False)] = None,
    source: SourceOpt = None,
    mirrors: MirrorsOpt = None,
    timeout: TimeoutOpt = TIMEOUT_S,
    stall_timeout: StallTimeoutOpt = STALL_TIMEOUT_S,
    runs: RunsOpt = 1,
    ids: InstanceIdsOpt = None,
    *,
    sandbox: SandboxConfig,
) -> None:
    """Re-run every instance from a fresh environment: gold patch turns FAIL_TO_PASS from fail to pass."""
    from benchsmith.evaluation.inputs import load_instances
    from benchsmith.harness.checkout import resolve_source
    from benchsmith.mining.verify import verify_instance

    assert instances_file is not None
    sources = parse_sources(source)
    instances = read_input(load_instances, instances_file)
    wanted = only_instances(ids, instances)
    instances = {k: v for k, v in instances.items() if wanted is None or k in wanted}
    if not instances:
        fail(f"no usable instance in {instances_file}")
    statuses: dict[str, int] = {"ok": 0, "failed": 0, "flaky": 0}
    flaky: list[list[FlakyTest]] = []
    for instance in instances.values():
        where = sources.get(instance.repo) or resolve_source(instance.repo, mirrors)
        verdict = verify_instance(instance, where, sandbox, timeout_s=timeout,
                                 stall_timeout_s=stall_timeout, runs=runs)
        statuses[verdict.status] += 1
        flaky.append(verdict.flaky)
        colour = {"ok": "green", "flaky": "yellow"}.get(verdict.status, "red")
        label = "ok" if verdict.ok else verdict.status.upper()
        out.print(f"[{colour}]{label:6}[/] {instance.instance_id} {verdict.duration_s:.0f}s "
                  f"{escape(verdict.reason)}", highlight=False, soft_wrap=True)
        for test in verdict.flaky:
            out.print(f"       flaky: {escape(test.name)} ({test.counts()})", highlight=False,
                      soft_wrap=True)
    out.print(f"verify summary: {len(instances)} instance(s), {runs} run(s) per side: "
              f"{statuses['ok']} hold, {statuses['failed']} failed, {statuses['flaky']} with a "
              f"flaky label; " + _flaky_line(flaky, "instance(s)"), highlight=False, soft_wrap=True)
    if statuses["failed"] or statuses["flaky"]:
        raise typer.Exit(1)


def _flaky_line(found: list[list[FlakyTest]], where: str) -> str:
    """How many tests were flaky (left out of the labels), and in how many PRs or instances."""
    return (f"flaky tests: {sum(len(tests) for tests in found)} in "
            f"{sum(1 for tests in found if tests)} {where}")
