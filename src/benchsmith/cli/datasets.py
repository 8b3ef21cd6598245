"""`benchsmith prepare` (environments for published SWE-bench-format datasets) and
`benchsmith analyze` (their characteristics, side by side)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from benchsmith.cli.aliases import instances_option
from benchsmith.cli.app import app, err, error_line, fail, out, read_input, say, warn
from benchsmith.cli.options import (
    InstanceIdsOpt,
    JobsOpt,
    MirrorsOpt,
    RetryFailedOpt,
    RunsOpt,
    engine_options,
    only_instances,
    resume,
)
from benchsmith.sandbox.tools import scratch_prefix

if TYPE_CHECKING:
    from benchsmith.datasets.prepare import Published, Verdict
    from benchsmith.datasets.prepare_summary import PrepareSummary
    from benchsmith.setup.engine import SetupOptions


@app.command()
@instances_option("instances", split=True)
@engine_options
def prepare(
    out_path: Annotated[Path | None, typer.Option("--out", help="JSONL of prepared instances; re-runs skip unchanged ones (needed unless --dry-run).")] = None,
    instances: Annotated[Path | None, typer.Argument(metavar="INSTANCES", show_default=False, help="Published instances: JSONL, a JSON list or object, Parquet, a Hugging Face dataset name (owner/name[:split], from the local cache) or a dataset saved to disk (or --instances FILE).")] = None,
    mirrors: MirrorsOpt = None,
    jobs: JobsOpt = 1,
    runs: RunsOpt = 1,
    retry_failed: RetryFailedOpt = False,
    ids: InstanceIdsOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only read and convert the instances (SWE-bench or Multi-SWE-bench format): one line each with its format, language, base commit and test files; nothing is set up.")] = False,
    *,
    options: SetupOptions,
) -> None:
    """Set up each group of instances once, run every instance's tests before and after its
    gold patch, and check the published FAIL_TO_PASS / PASS_TO_PASS labels."""
    from benchsmith.datasets.prepare import Preparer, read_published
    from benchsmith.datasets.prepare_summary import summarize
    from benchsmith.harness.jsonl import records_by_key
    from benchsmith.setup.engine import SetupEngine

    assert instances is not None
    published = read_input(read_published, instances)
    wanted = only_instances(ids, [p.instance.instance_id for p in published])
    published = [p for p in published if wanted is None or p.instance.instance_id in wanted]
    if not published:
        fail(f"no usable instance in {instances}")
    if dry_run:
        for item in published:
            found = item.instance
            out.print(f"{found.instance_id}  {item.format}  {found.language}  {found.repo}@"
                      f"{found.base_commit[:12]}  {', '.join(found.test_files) or '(no test file)'}",
                      highlight=False, soft_wrap=True)
        return
    if out_path is None:
        fail("--out is needed (the JSONL the prepared instances go to)")

    def on_record(item: Published, verdict: Verdict) -> None:
        colour = {"reproduced": "green", "fail_to_pass_reproduced": "yellow"}.get(verdict.status, "red")
        detail = f" ({verdict.reason})" if verdict.reason else ""
        err.print(f"[{colour}]{verdict.status:24}[/] {item.instance.instance_id} "
                  f"{verdict.instance_s:.0f}s{escape(detail)}", highlight=False, soft_wrap=True)
        for test in verdict.flaky:
            err.print(f"  flaky: {escape(test.name)} ({test.counts()})", highlight=False,
                      soft_wrap=True)

    preparer = Preparer(SetupEngine(options, progress=lambda m: say(f"  {m}")), mirrors=mirrors,
                        runs=runs, progress=say, on_record=on_record)
    try:
        preparer.prepare(published, out_path, jobs=jobs, resume=resume(retry_failed))
    except KeyboardInterrupt:
        fail(f"interrupted: finished instances are kept in {out_path}; "
             "re-run the same command to resume", 130)
    wanted = {p.instance.instance_id for p in published}
    records = [r for key, r in records_by_key(out_path, "instance_id").items() if key in wanted]
    summary = summarize(records)
    _print(summary, str(out_path))
    if not summary.prepared:
        fail("no instance could be prepared", 1)


def _print(summary: PrepareSummary, title: str) -> None:
    table = Table(title=f"prepare summary: {title}")
    for column in ("repository", "instances", "prepared", "FAIL_TO_PASS reproduced"):
        table.add_column(column, justify="left" if column == "repository" else "right")
    for repo, counts in sorted(summary.per_repo.items()):
        table.add_row(repo, str(counts["instances"]), str(counts["prepared"]), str(counts["fail_to_pass"]))
    table.add_row("all", str(summary.instances), str(summary.prepared),
                  str(summary.fail_to_pass_reproduced), style="bold")
    out.print(table)
    out.print(f"PASS_TO_PASS all reproduced: {summary.pass_to_pass_reproduced} of {summary.prepared} "
              f"prepared; median time per instance (environment known): "
              f"{summary.median_instance_s or 0:.0f}s; statuses: "
              + ", ".join(f"{k} {v}" for k, v in sorted(summary.statuses.items()))
              + f"; flaky tests: {summary.flaky_tests} in {summary.with_flaky} instance(s)",
              highlight=False, soft_wrap=True)
    if summary.causes:
        out.print("not reproduced, by cause: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(summary.causes.items(),
                                                            key=lambda kv: (-kv[1], kv[0]))),
                  highlight=False, soft_wrap=True)


@app.command()
@instances_option("instances")
def export(
    out_dir: Annotated[Path, typer.Option("--out", help="Directory; one sub-directory per instance.")],
    instances: Annotated[Path | None, typer.Argument(metavar="INSTANCES", show_default=False, help="Prepared or built instances (JSONL or JSON), or --instances FILE.")] = None,
    mirrors: MirrorsOpt = None,
    ids: InstanceIdsOpt = None,
    no_repo: Annotated[bool, typer.Option("--no-repo", help="Clone from GitHub while building instead of copying the checkout in.")] = False,
    build: Annotated[bool, typer.Option("--build", help="Also build each exported image (Docker).")] = False,
) -> None:
    """Write each instance as a Dockerfile + eval.sh pair, as SWE-bench-style harnesses run them."""
    import tempfile

    from benchsmith.core import BenchsmithError
    from benchsmith.datasets.export import export_instance
    from benchsmith.datasets.export_node import node_export_files
    from benchsmith.evaluation.inputs import load_instances
    from benchsmith.harness.checkout import materialize, resolve, resolve_source
    from benchsmith.harness.history import seal_dir
    from benchsmith.harness.vendored import vendor
    from benchsmith.sandbox.docker.images import ENV_REPO, RUN_HELPER, render_dockerfile
    from benchsmith.sandbox.docker.node_images import render_node_dockerfile

    assert instances is not None
    loaded = read_input(load_instances, instances)
    wanted = only_instances(ids, loaded)
    chosen = [i for i in loaded.values() if wanted is None or i.instance_id in wanted]
    if not chosen:
        fail(f"no instance to export from {instances}")
    exported = 0
    for instance in chosen:
        try:
            with tempfile.TemporaryDirectory(prefix=scratch_prefix("export")) as scratch:
                dirs: dict[str, Path] = {}
                if not no_repo:
                    source = resolve_source(instance.repo, mirrors)
                    commits = {"repo": instance.base_commit, ENV_REPO: instance.environment_commit()}
                    for name, commit in commits.items():
                        if name == ENV_REPO and commit == instance.base_commit:
                            continue
                        checkout = resolve(source, rev=commit, repo=instance.repo)
                        dirs[name] = materialize(checkout, Path(scratch) / name)
                        vendor(dirs[name], instance.install)
                        history = seal_dir(dirs[name], commit, f"{instance.instance_id}'s {name}")
                        if name == "repo":
                            instance.history = history
                context: dict[str, Path] = {}
                if instance.node is not None:
                    files = node_export_files(instance, Path(scratch) / "context")
                    context = files.dirs
                    recipe = render_node_dockerfile(
                        instance.repo, instance.base_commit, instance.python, instance.exclude_newer,
                        instance.install, files.copies, files.links, files.check,
                        files.install_env, files.env, install_at=instance.environment_commit(),
                        reinstall=instance.reinstall, about=files.about)
                else:
                    recipe = render_dockerfile(instance.repo, instance.base_commit, instance.python,
                                               instance.exclude_newer, instance.install,
                                               install_at=instance.environment_commit(),
                                               reinstall=instance.reinstall)
                target = export_instance(instance, out_dir, dirs.get("repo"), recipe,
                                         {"benchsmith-run": RUN_HELPER}, dirs.get(ENV_REPO), context)
            line = f"{instance.instance_id}: {target}"
            if build:
                from benchsmith.sandbox.docker.base import docker_client, ensure_base_image
                from benchsmith.sandbox.docker.images import build_image
                from benchsmith.sandbox.store import instance_name

                ensure_base_image(docker_client(), instance.python)
                env_repo = target / ENV_REPO
                image = build_image((target / "Dockerfile").read_text(), target / "repo",
                                    instance_name(instance.repo, instance.base_commit),
                                    env_checkout=env_repo if env_repo.is_dir() else None,
                                    context_dirs={name: target / name for name in context})
                line += f" (image {image})"
            out.print(line, highlight=False, soft_wrap=True)
            exported += 1
        except BenchsmithError as exc:
            error_line(f"{instance.instance_id}: {exc}")
    if not exported:
        fail("no instance could be exported")


@app.command()
def analyze(
    datasets: Annotated[list[str], typer.Argument(metavar="[NAME=]FILE...", help="Instances (JSONL/JSON/parquet): one FILE, or NAME=FILE per dataset to compare several side by side.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Report directory: index.html, tables.json, NAME.csv, figures/.")] = Path("report"),
    mirrors: MirrorsOpt = None,
    results: Annotated[list[str] | None, typer.Option("--results", help="NAME=PATH: agent results for dataset NAME (a benchsmith run folder or a SWE-bench results file); repeatable.")] = None,
    cutoffs: Annotated[list[str] | None, typer.Option("--cutoff", help="MODEL=YYYY-MM-DD: a model's knowledge cutoff, tested on its results; repeatable.")] = None,
    funnel: Annotated[Path | None, typer.Option("--funnel", help="A build run's .funnel.json, shown as the funnel table.")] = None,
) -> None:
    """Per-instance characteristics of datasets, side-by-side tables, CDF figures and an HTML
    report; with agent results, accuracy, Spearman's rho per characteristic and cutoff tests."""
    from benchsmith.analysis import analyze as run_analysis
    from benchsmith.core import BenchsmithError
    from benchsmith.harness.checkout import instant

    if len(datasets) == 1 and "=" not in datasets[0]:  # one plain FILE, named after itself
        datasets = [f"{Path(datasets[0]).stem or 'dataset'}={datasets[0]}"]
    inputs = {name: Path(path) for name, path in _pairs(datasets, "NAME=FILE", "dataset name").items()}
    cutoff_dates = _pairs(cutoffs or [], "MODEL=DATE", "model")
    for model, day in cutoff_dates.items():
        try:
            instant(day)
        except ValueError:
            fail(f"--cutoff {model}: {day!r} is not a date (YYYY-MM-DD)")
    held: list[str] = []  # shown once the analysis stands: a failed one is its one error line
    try:
        rows, notes = run_analysis(
            inputs, out_dir, mirrors, warn=held.append, cutoffs=cutoff_dates, funnel=funnel,
            results={n: Path(p) for n, p in _pairs(results or [], "NAME=PATH", "results name").items()})
    except BenchsmithError as exc:
        fail(str(exc))
    for problem in held:
        warn(problem)
    for note in notes:
        say(note)
    table = Table(title=f"analyze: {out_dir / 'index.html'}")
    table.add_column("dataset")
    table.add_column("instances", justify="right")
    table.add_column("repositories", justify="right")
    for name, found in rows.items():
        table.add_row(name, str(len(found)), str(len({r["repo"] for r in found})))
    out.print(table)


def _pairs(items: list[str], shape: str, what: str) -> dict[str, str]:
    """KEY=VALUE arguments as a dict; a malformed or repeated one ends the command."""
    found: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            fail(f"expected {shape}, got {item!r}")
        if key in found:
            fail(f"{what} {key!r} given twice")
        found[key] = value
    return found
