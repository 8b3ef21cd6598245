"""`benchsmith setup`, `setup-batch` and `nearby`: validated environments for repositories."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from benchsmith.cli.app import app, err, fail, invalid, out, say
from benchsmith.cli.options import (
    DateOpt,
    JobsOpt,
    MirrorsOpt,
    RetryFailedOpt,
    RevOpt,
    check_date,
    engine_options,
    executor_options,
    open_executor,
    resume,
)
from benchsmith.core import BenchsmithError

if TYPE_CHECKING:
    from benchsmith.executor import ExecutorConfig
    from benchsmith.setup.batch import BatchItem, BatchSummary
    from benchsmith.setup.engine import SetupOptions
    from benchsmith.setup.record import SetupRecord


@app.command()
@engine_options
def setup(
    source: Annotated[str, typer.Argument(help="Path (git clone, bare or not, or a plain directory) or git URL.")],
    rev: RevOpt = None,
    date: DateOpt = None,
    out_path: Annotated[Path, typer.Option("--out", help="Where to write the record.")] = Path("setup.json"),
    repo_name: Annotated[str | None, typer.Option("--repo-name", help="owner/name to file the result under.")] = None,
    *,
    options: SetupOptions,
) -> None:
    """Set up one repository at a commit or date and validate it by running its tests."""
    from benchsmith.setup.engine import SetupEngine

    engine = SetupEngine(options, progress=say)
    try:
        record = engine.setup(source, rev=rev, on_date=date, repo=repo_name)
    except BenchsmithError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        fail("interrupted: the sandbox was removed, nothing was written", 130)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(record.model_dump_json(indent=2) + "\n", encoding="utf-8")
    rate = f"{record.pass_rate:.1%}" if record.pass_rate is not None else "n/a"
    runtime = f"Node {record.node.version}" if record.node else f"python {record.python}"
    line = (f"{record.status}: {record.repo} @ {(record.commit or '')[:12]} {runtime} "
            f"pass rate {rate} in {len(record.iterations)} round(s), {record.duration_s:.0f}s -> {out_path}"
            + (f" (model calls: {record.llm_calls}{', validated with its help' if record.model_assisted else ''})"
               if options.model else ""))
    if record.status == "validated":
        out.print(f"[green]{line}[/]", highlight=False)
        return
    if record.status == "error":
        fail(f"{record.failure_reason} (record written to {out_path})")
    out.print(f"[red]{line}[/]", highlight=False)
    err.print(f"reason ({record.failure_category}): {escape(record.failure_reason or '')}",
              highlight=False)
    raise typer.Exit(1)


@app.command("setup-batch")
@engine_options
@executor_options
def setup_batch(
    list_file: Annotated[Path, typer.Argument(help="One 'SOURCE [REV_OR_DATE]' per line; # comments.")],
    out_path: Annotated[Path, typer.Option("--out", help="JSONL results; a re-run skips lines answered in it (see --retry-failed).")],
    date: DateOpt = None,
    jobs: JobsOpt = 1,
    mirrors: MirrorsOpt = None,
    retry_failed: RetryFailedOpt = False,
    *,
    options: SetupOptions,
    executor: ExecutorConfig,
) -> None:
    """Set up every repository of a list file, appending one JSON line per repository."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from benchsmith.setup.batch import read_list, read_records, run_batch, summarize
    from benchsmith.setup.engine import SetupEngine

    check_date(date)
    try:
        items = read_list(list_file, date)
    except BenchsmithError as exc:
        fail(str(exc))
    if not items:
        fail(f"no line to set up in {list_file}: it is empty")
    if all(item.problem for item in items):
        more = f" (and {len(items) - 1} more)" if len(items) > 1 else ""
        fail(f"no usable line in {list_file}: {items[0].problem}{more}")
    # Every round of every setup gets a line (also when stderr goes to a file): a long setup
    # shows it is alive. Parallel setups' lines name their repository and commit.
    engine = SetupEngine(options, progress=lambda message: progress.console.print(
        f"  {escape(engine.current())}: {escape(message.strip())}", highlight=False))
    runner = open_executor(executor, jobs, options.sandbox)
    nodes: Counter[str] = Counter()
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=False) as progress:
        task = progress.add_task("setup-batch", total=len(items))
        resumed = resume(retry_failed)

        def announce(line: str) -> None:
            say(line)
            progress.update(task, completed=resumed.skipped)
        resumed.announce = announce

        def on_record(item: BatchItem, record: SetupRecord, node: str) -> None:
            nodes[node] += 1
            colour = "green" if record.status == "validated" else "red"
            detail = "" if record.status == "validated" else f" ({record.failure_category}: {record.failure_reason})"
            progress.console.print(f"[{colour}]{record.status:9}[/] {escape(item.key)} "
                                   f"{record.duration_s:.0f}s{escape(detail)}", highlight=False)
            progress.advance(task)

        try:
            run_batch(items, engine, out_path, jobs, mirrors=mirrors, on_record=on_record,
                      executor=runner, resume=resumed)
        except KeyboardInterrupt:
            fail(f"interrupted: finished records are kept in {out_path}; "
                 "re-run the same command to resume", 130)
        finally:
            runner.close()
    keys = {i.key for i in items}
    latest = {r.input: r for r in read_records(out_path) if r.input in keys}  # a retry's wins
    records = list(latest.values())
    _print_summary(summarize(records), str(out_path), nodes if runner.remote else None)
    if records and all(r.failure_category == "input" for r in records):
        fail(f"no line of {list_file} could be set up: every one is an input error "
             f"(first: {records[0].failure_reason})")


@app.command()
def nearby(
    results: Annotated[Path, typer.Argument(help="A setup-batch JSONL file.")],
    back: Annotated[int, typer.Option("--back", min=1, help="First-parent commits to go back.")] = 20,
) -> None:
    """Print a list file of older commits of the validated repositories (to test refdb reuse)."""
    from benchsmith.setup.batch import nearby_lines
    from benchsmith.setup.record import SetupRecord

    if not results.is_file():
        fail(f"results file not found: {results}")
    records = []
    for number, text in enumerate(results.read_text(encoding="utf-8").splitlines(), start=1):
        if text.strip():
            try:
                records.append(SetupRecord.model_validate_json(text))
            except ValueError as exc:
                fail(f"{results}:{number}: {invalid(exc)} (expected a line written by setup-batch)")
    if not records:
        fail(f"no setup record in {results}: it is empty")
    for line in nearby_lines(records, back):
        out.print(line, highlight=False, soft_wrap=True)


def _print_summary(summary: BatchSummary, title: str, nodes: Counter[str] | None = None) -> None:
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
    for node, count in sorted((nodes or {}).items()):
        table.add_row(f"node {node}", str(count))
    out.print(table)
