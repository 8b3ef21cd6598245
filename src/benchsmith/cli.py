"""The `benchsmith` command line."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from benchsmith.core import BenchsmithError

if TYPE_CHECKING:
    from benchsmith.mining.models import PullRequest
    from benchsmith.setup.batch import BatchItem, BatchSummary
    from benchsmith.setup.engine import SetupEngine
    from benchsmith.setup.record import SetupRecord

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_show_locals=False,
                  help="Turn Python repositories into validated, historically accurate test environments.")
err = Console(stderr=True)
out = Console()

RevOpt = Annotated[str | None, typer.Option("--rev", help="Commit, tag or branch to set up.")]
DateOpt = Annotated[str | None, typer.Option(
    "--date", help="YYYY-MM-DD: pin dependencies to this date (and, without --rev, use the last commit before it).")]
BackendOpt = Annotated[str, typer.Option("--backend", help="Where commands run: local or docker.")]
IterOpt = Annotated[int, typer.Option("--max-iterations", min=0, help="Repair rounds after the first attempt.")]
ThresholdOpt = Annotated[float, typer.Option("--threshold", min=0.0, max=1.0, help="Share of tests that must pass.")]
RefdbOpt = Annotated[str | None, typer.Option("--refdb", help="Reference database file (SQLite).")]
NoRefdbOpt = Annotated[bool, typer.Option("--no-refdb", help="Neither read nor write the reference database.")]
TimeoutOpt = Annotated[float, typer.Option("--test-timeout", help="Seconds allowed for the test command.")]
NetworkOpt = Annotated[str, typer.Option("--network", help="Docker: container network mode.")]
CaOpt = Annotated[str | None, typer.Option("--ca-bundle", help="Docker: CA bundle made available in containers (default: the host's).")]
CpusOpt = Annotated[float, typer.Option("--cpus", min=0.1, help="Docker: CPU limit per container.")]
MemoryOpt = Annotated[str, typer.Option("--memory", help="Docker: memory limit per container, e.g. 4g.")]


class DockerFlags:
    """The Docker-only options of setup and setup-batch."""

    def __init__(self, network: str, ca_bundle: str | None, cpus: float, memory: str) -> None:
        self.network, self.ca_bundle, self.cpus, self.memory = network, ca_bundle, cpus, memory


def _fail(message: str, code: int = 2) -> None:
    err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def _engine(backend: str, max_iterations: int, threshold: float, refdb: str | None,
            no_refdb: bool, test_timeout: float, docker: DockerFlags, quiet: bool = False) -> SetupEngine:
    from benchsmith.sandbox import BACKENDS, DockerSandboxConfig, LocalSandboxConfig
    from benchsmith.setup.engine import SetupEngine, SetupOptions

    if backend not in BACKENDS:
        _fail(f"unknown backend {backend!r}: available backends are: {', '.join(BACKENDS)}")
    if docker.ca_bundle and not Path(docker.ca_bundle).is_file():
        _fail(f"CA bundle not found: {docker.ca_bundle}")
    sandbox = LocalSandboxConfig() if backend == "local" else DockerSandboxConfig(
        network_mode=docker.network, ca_bundle=docker.ca_bundle, cpus=docker.cpus,
        memory=docker.memory)
    if backend == "docker":
        from benchsmith.sandbox.docker_base import docker_client

        try:
            docker_client()
        except BenchsmithError as exc:
            _fail(str(exc))
    options = SetupOptions(max_iterations=max_iterations, threshold=threshold, refdb=refdb,
                           use_refdb=not no_refdb, test_timeout_s=test_timeout, sandbox=sandbox)
    progress = None if quiet else (lambda message: err.print(f"[dim]{message}[/]", highlight=False))
    return SetupEngine(options, progress=progress)


@app.command()
def setup(
    source: Annotated[str, typer.Argument(help="Path (git clone, bare or not, or a plain directory) or git URL.")],
    rev: RevOpt = None,
    date: DateOpt = None,
    backend: BackendOpt = "local",
    max_iterations: IterOpt = 4,
    threshold: ThresholdOpt = 0.95,
    out_path: Annotated[Path, typer.Option("--out", help="Where to write the record.")] = Path("setup.json"),
    repo_name: Annotated[str | None, typer.Option("--repo-name", help="owner/name to file the result under.")] = None,
    refdb: RefdbOpt = None,
    no_refdb: NoRefdbOpt = False,
    test_timeout: TimeoutOpt = 1800,
    network: NetworkOpt = "host",
    ca_bundle: CaOpt = None,
    cpus: CpusOpt = 2.0,
    memory: MemoryOpt = "4g",
) -> None:
    """Set up one repository at a commit or date and validate it by running its tests."""
    engine = _engine(backend, max_iterations, threshold, refdb, no_refdb, test_timeout,
                     DockerFlags(network, ca_bundle, cpus, memory))
    try:
        record = engine.setup(source, rev=rev, on_date=date, repo=repo_name)
    except BenchsmithError as exc:
        _fail(str(exc))
        return
    except KeyboardInterrupt:
        _fail("interrupted: the sandbox was removed, nothing was written", 130)
        return
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(record.model_dump_json(indent=2) + "\n", encoding="utf-8")
    rate = f"{record.pass_rate:.1%}" if record.pass_rate is not None else "n/a"
    line = (f"{record.status}: {record.repo} @ {(record.commit or '')[:12]} python {record.python} "
            f"pass rate {rate} in {len(record.iterations)} round(s), {record.duration_s:.0f}s -> {out_path}")
    if record.status == "validated":
        out.print(f"[green]{line}[/]", highlight=False)
        return
    if record.status == "error":
        _fail(f"{record.failure_reason} (record written to {out_path})")
    out.print(f"[red]{line}[/]", highlight=False)
    err.print(f"reason ({record.failure_category}): {record.failure_reason}", highlight=False)
    raise typer.Exit(1)


@app.command("setup-batch")
def setup_batch(
    list_file: Annotated[Path, typer.Argument(help="One 'SOURCE [REV_OR_DATE]' per line; # comments.")],
    out_path: Annotated[Path, typer.Option("--out", help="JSONL results; re-runs skip lines already in it.")],
    date: DateOpt = None,
    jobs: Annotated[int, typer.Option("--jobs", min=1, help="Repositories set up in parallel.")] = 1,
    mirrors: Annotated[str | None, typer.Option("--mirrors", help="Directory of local clones for owner/name lines.")] = None,
    backend: BackendOpt = "local",
    max_iterations: IterOpt = 4,
    threshold: ThresholdOpt = 0.95,
    refdb: RefdbOpt = None,
    no_refdb: NoRefdbOpt = False,
    test_timeout: TimeoutOpt = 1800,
    network: NetworkOpt = "host",
    ca_bundle: CaOpt = None,
    cpus: CpusOpt = 2.0,
    memory: MemoryOpt = "4g",
) -> None:
    """Set up every repository of a list file, appending one JSON line per repository."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from benchsmith.setup.batch import read_list, read_records, run_batch, summarize

    if date:
        _check_date(date)
    try:
        items = read_list(list_file, date)
    except BenchsmithError as exc:
        _fail(str(exc))
        return
    engine = _engine(backend, max_iterations, threshold, refdb, no_refdb, test_timeout,
                     DockerFlags(network, ca_bundle, cpus, memory), quiet=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=False) as progress:
        task = progress.add_task("setup-batch", total=len(items))
        from benchsmith.setup.batch import load_finished

        progress.update(task, completed=len(load_finished(out_path) & {i.key for i in items}))

        def on_record(item: BatchItem, record: SetupRecord) -> None:
            colour = "green" if record.status == "validated" else "red"
            detail = "" if record.status == "validated" else f" ({record.failure_category}: {record.failure_reason})"
            progress.console.print(f"[{colour}]{record.status:9}[/] {item.key} "
                                   f"{record.duration_s:.0f}s{detail}", highlight=False)
            progress.advance(task)

        try:
            run_batch(items, engine, out_path, jobs, mirrors=mirrors, on_record=on_record)
        except KeyboardInterrupt:
            _fail(f"interrupted: finished records are kept in {out_path}; "
                  "re-run the same command to resume", 130)
    keys = {i.key for i in items}
    records = [r for r in read_records(out_path) if r.input in keys]
    _print_summary(summarize(records), str(out_path))


@app.command()
def nearby(
    results: Annotated[Path, typer.Argument(help="A setup-batch JSONL file.")],
    back: Annotated[int, typer.Option("--back", min=1, help="First-parent commits to go back.")] = 20,
) -> None:
    """Print a list file of older commits of the validated repositories (to test refdb reuse)."""
    from benchsmith.setup.batch import nearby_lines, read_records

    if not results.is_file():
        _fail(f"results file not found: {results}")
    for line in nearby_lines(read_records(results), back):
        out.print(line, highlight=False, soft_wrap=True)


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
        _fail(str(exc))
        return
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
    repos_file: Annotated[Path, typer.Argument(help="owner/name (or 'PATH [owner/name]' with --from-git) per line.")],
    out_path: Annotated[Path, typer.Option("--out", help="prs.jsonl to append valid PRs to.")] = Path("prs.jsonl"),
    github: Annotated[bool, typer.Option("--github", help="Use the GitHub REST API (needs GITHUB_TOKEN).")] = False,
    from_git: Annotated[bool, typer.Option("--from-git", help="Mine local clones with full history, offline.")] = False,
    max_prs: Annotated[int | None, typer.Option("--max-prs", min=1, help="Valid PRs per repository at most.")] = None,
    mirrors: Annotated[str | None, typer.Option("--mirrors", help="Directory of local clones for owner/name lines.")] = None,
    issues: Annotated[Path | None, typer.Option("--issues", help="--from-git: JSONL of issues (number, title, body, comments).")] = None,
) -> None:
    """Find merged PRs that resolve an issue and change tests; split them into patch and test patch."""
    from benchsmith.mining.mine import mine_repos, read_repos

    if github and from_git:
        _fail("choose one of --github and --from-git")
    if issues is not None and not issues.is_file():
        _fail(f"issues file not found: {issues}")
    try:
        entries = read_repos(repos_file)
        results = mine_repos(entries, "git" if from_git else "github", out_path, max_prs,
                             mirrors=mirrors, issues_file=issues,
                             progress=lambda m: err.print(f"[dim]{m}[/]", highlight=False))
    except BenchsmithError as exc:
        _fail(str(exc))
        return
    table = Table(title=f"mined: {out_path}")
    for column in ("repository", "examined", "valid PRs", "main skip reasons / error"):
        table.add_column(column)
    for result in results:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(result.skipped.items(), key=lambda kv: -kv[1])[:3])
        table.add_row(result.repo, str(result.examined), str(result.kept), result.error or reasons)
    out.print(table)


def _read_prs(path: Path) -> list[PullRequest]:
    from benchsmith.mining.models import PullRequest

    if not path.is_file():
        _fail(f"PR file not found: {path}")
    prs = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            prs.append(PullRequest.model_validate_json(line))
        except ValueError as exc:
            _fail(f"{path}:{number}: not a pull request record ({str(exc).splitlines()[0]})")
    return prs


@app.command()
def build(
    prs_file: Annotated[Path, typer.Argument(help="prs.jsonl from `benchsmith mine`.")],
    out_path: Annotated[Path, typer.Option("--out", help="instances.jsonl (SWE-bench format + benchsmith fields).")] = Path("instances.jsonl"),
    per_repo: Annotated[int | None, typer.Option("--per-repo", min=1, help="Valid instances per repository at most.")] = None,
    runs: Annotated[int, typer.Option("--runs", min=1, help="Runs before and after the fix (flaky tests are dropped).")] = 2,
    jobs: Annotated[int, typer.Option("--jobs", min=1, help="Repositories built in parallel.")] = 1,
    candidates_report: Annotated[Path | None, typer.Option("--candidates-report", help="repos.txt.report.json for the first funnel rows.")] = None,
    backend: BackendOpt = "local",
    max_iterations: IterOpt = 4,
    threshold: ThresholdOpt = 0.95,
    refdb: RefdbOpt = None,
    test_timeout: TimeoutOpt = 1800,
    network: NetworkOpt = "host",
    ca_bundle: CaOpt = None,
    cpus: CpusOpt = 2.0,
    memory: MemoryOpt = "4g",
) -> None:
    """Set up each PR's base commit, run its tests before and after the fix, keep FAIL_TO_PASS ones."""
    import json

    from benchsmith.mining.build import InstanceBuilder
    from benchsmith.mining.funnel import build_funnel

    prs = _read_prs(prs_file)
    report = None
    if candidates_report is not None:
        try:
            report = json.loads(candidates_report.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            _fail(f"cannot read candidates report {candidates_report}: {exc}")
    engine = _engine(backend, max_iterations, threshold, refdb, False, test_timeout,
                     DockerFlags(network, ca_bundle, cpus, memory), quiet=True)
    log_path = out_path.with_suffix(".log.jsonl")
    builder = InstanceBuilder(engine, per_repo=per_repo, runs=runs,
                              progress=lambda m: err.print(f"[dim]{m}[/]", highlight=False))
    try:
        builder.build(prs, out_path, log_path, jobs=jobs)
    except KeyboardInterrupt:
        _fail(f"interrupted: finished instances are kept in {out_path}; re-run to resume", 130)
    outcomes = [json.loads(line) for line in log_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    funnel = build_funnel(prs, outcomes, report)
    funnel_path = out_path.with_suffix(".funnel.json")
    funnel_path.write_text(funnel.model_dump_json(indent=2) + "\n", encoding="utf-8")
    table = Table(title=f"funnel: {out_path}")
    table.add_column("stage")
    table.add_column("count", justify="right")
    for stage, count in funnel.repo_stages.items():
        table.add_row(f"repositories: {stage}", "-" if count is None else str(count))
    for stage, count in funnel.pr_stages.items():
        table.add_row(f"PRs: {stage}", str(count))
    out.print(table)
    per = Table(title="per repository")
    for column in ("repository", "valid PRs", "setup ok", "instances", "not kept"):
        per.add_column(column)
    for row in funnel.rows:
        per.add_row(row.repo, str(row.valid_prs), str(row.setup_ok), str(row.instances),
                    ", ".join(f"{k} {v}" for k, v in sorted(row.reasons.items())))
    out.print(per)


@app.command()
def verify(
    instances_file: Annotated[Path, typer.Argument(help="instances.jsonl from `benchsmith build`.")],
    source: Annotated[list[str] | None, typer.Option("--source", help="owner/name=PATH of a clone (repeatable).")] = None,
    mirrors: Annotated[str | None, typer.Option("--mirrors", help="Directory of local clones.")] = None,
    backend: BackendOpt = "local",
    timeout: Annotated[float, typer.Option("--timeout", min=1, help="Seconds per test or install command.")] = 1800,
) -> None:
    """Re-run every instance from a fresh environment: gold patch turns FAIL_TO_PASS from fail to pass."""
    from benchsmith.mining.build import TaskInstance
    from benchsmith.mining.verify import verify_instance
    from benchsmith.sandbox import DockerSandboxConfig, LocalSandboxConfig
    from benchsmith.setup.batch import resolve_source

    if not instances_file.is_file():
        _fail(f"instances file not found: {instances_file}")
    sources = dict(s.split("=", 1) for s in source or [] if "=" in s)
    config = DockerSandboxConfig() if backend == "docker" else LocalSandboxConfig()
    failures = 0
    for line in instances_file.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        instance = TaskInstance.model_validate_json(line)
        where = sources.get(instance.repo) or resolve_source(instance.repo, mirrors)
        verdict = verify_instance(instance, where, config, timeout_s=timeout)
        failures += not verdict.ok
        colour = "green" if verdict.ok else "red"
        out.print(f"[{colour}]{'ok' if verdict.ok else 'FAILED':6}[/] {instance.instance_id} "
                  f"{verdict.duration_s:.0f}s {verdict.reason}", highlight=False)
    if failures:
        raise typer.Exit(1)


docker_app = typer.Typer(no_args_is_help=True, help="Docker backend: base images and leftovers.")
app.add_typer(docker_app, name="docker")


@docker_app.command("base")
def docker_base(
    python: Annotated[str, typer.Option("--python", help="Python minor version, e.g. 3.11.")],
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Build again even if it exists.")] = False,
) -> None:
    """Pull or build the base image for one Python version, and say which way it went."""
    from benchsmith.sandbox.docker_base import docker_client, ensure_base_image

    try:
        result = ensure_base_image(docker_client(), python, rebuild=rebuild,
                                   progress=lambda m: err.print(f"[dim]{m}[/]", highlight=False))
    except BenchsmithError as exc:
        _fail(str(exc))
        return
    out.print(f"{result.name}: {result.how} ({result.detail})", highlight=False)


@docker_app.command("clean")
def docker_clean(
    include_cache: Annotated[bool, typer.Option("--include-cache", help="Also remove the shared uv cache volume.")] = False,
) -> None:
    """Remove containers and volumes benchsmith left behind (labelled benchsmith=1)."""
    from benchsmith.sandbox.docker import clean_leftovers
    from benchsmith.sandbox.docker_base import docker_client

    try:
        removed = clean_leftovers(docker_client(), include_cache=include_cache)
    except BenchsmithError as exc:
        _fail(str(exc))
        return
    out.print(f"removed {len(removed)} object(s)" + (": " + ", ".join(removed) if removed else ""),
              highlight=False)


@docker_app.command("build-env")
def docker_build_env(
    record_path: Annotated[Path, typer.Argument(help="A setup.json written with --backend docker.")],
) -> None:
    """Rebuild a validated environment image from its generated Dockerfile and validate it again."""
    import shutil
    import tempfile

    from benchsmith.setup.checkout import materialize, resolve
    from benchsmith.setup.images import build_env_image, validate_image
    from benchsmith.setup.record import SetupRecord

    try:
        record = SetupRecord.model_validate_json(record_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        _fail(f"cannot read setup record {record_path}: {str(exc).splitlines()[0]}")
        return
    if record.status != "validated" or not record.commit:
        _fail(f"{record_path} is not a validated setup (status {record.status})")
        return
    workspace = Path(tempfile.mkdtemp(prefix="benchsmith-src-"))
    try:
        checkout = resolve(record.source, rev=None if record.commit == "worktree" else record.commit,
                           on_date=record.date if record.commit == "worktree" else None,
                           repo=record.repo)
        repo_dir = materialize(checkout, workspace / "repo", portable=True)
        err.print(f"[dim]building {record.repo} @ {record.commit[:12]} from its Dockerfile[/]")
        image = build_env_image(record, repo_dir)
        ok, rate, count = validate_image(image, record, record.threshold)
    except BenchsmithError as exc:
        _fail(str(exc))
        return
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    shown = f"{rate:.1%}" if rate is not None else "n/a"
    line = f"{image}: {'validated' if ok else 'NOT validated'} ({count} tests, pass rate {shown})"
    out.print(line, highlight=False)
    if not ok:
        raise typer.Exit(1)


def _check_date(value: str) -> None:
    from datetime import date as _date

    try:
        _date.fromisoformat(value)
    except ValueError:
        _fail(f"invalid date {value!r}: expected YYYY-MM-DD")


def _print_summary(summary: BatchSummary, title: str) -> None:
    table = Table(title=f"setup summary: {title}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_row("repositories", str(summary.total))
    table.add_row("validated", f"{summary.validated} ({summary.rate:.1%})")
    table.add_row("median time", f"{summary.median_duration_s or 0:.0f}s")
    table.add_row("total time", f"{summary.total_duration_s:.0f}s")
    if summary.median_overhead is not None:
        table.add_row("median duration/clean run", f"{summary.median_overhead:.2f}")
    table.add_row("validated in one round", str(summary.one_round))
    for category, count in sorted(summary.failures.items()):
        table.add_row(f"not validated: {category}", str(count))
    out.print(table)


# Commands defined in their own modules register themselves on `app`.
from benchsmith import cli_evaluate as _cli_evaluate  # noqa: E402,F401


def _on_sigterm(signum: int, frame: object) -> None:
    # Handled like Ctrl-C, so every `finally` removes its sandbox and temporary checkout.
    raise KeyboardInterrupt


def main() -> None:
    """Entry point: run the app, turning stray bad-input errors into one line."""
    # Sandboxes (temp dirs, process groups) are removed on SIGTERM too, not only on Ctrl-C.
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        app()
    except BenchsmithError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        sys.exit(2)


if __name__ == "__main__":
    # Run the importable module's app: the commands of other modules registered on that one.
    from benchsmith.cli import main as _main

    _main()
