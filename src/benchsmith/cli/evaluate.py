"""`benchsmith evaluate` and `benchsmith report`: score predicted fixes and predicted tests."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from benchsmith.cli.aliases import instances_option, renamed
from benchsmith.cli.app import app, error_line, fail, nothing_usable, out, say, warn
from benchsmith.cli.options import (
    STALL_TIMEOUT_S,
    TIMEOUT_S,
    InstanceIdsOpt,
    JobsOpt,
    MirrorsOpt,
    RetryFailedOpt,
    SourceOpt,
    StallTimeoutOpt,
    TimeoutOpt,
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
    from benchsmith.instance import Prediction, TaskInstance
    from benchsmith.sandbox.config import SandboxConfig


@app.command()
@renamed("--output-dir", "--out", "out_dir")
@instances_option("instances_file", split=True)
@sandbox_options
@executor_options
def evaluate(
    predictions: Annotated[str, typer.Option("--predictions", help="Predictions (JSONL/JSON: instance_id, model_name_or_path, model_patch), `gold` (the instances' own patches) or `empty` (an empty patch each).")],
    instances_file: Annotated[Path | None, typer.Argument(metavar="INSTANCES", show_default=False, help="Task instances (JSONL/JSON/Parquet or a Hugging Face dataset, SWE-bench format with install and test commands, as `benchsmith prepare` writes them), or --instances FILE.")] = None,
    mode: Annotated[str, typer.Option("--mode", help="fix: score code patches (SWE-bench); test: score test patches (SWT-bench).")] = "fix",
    jobs: JobsOpt = 1,
    run_id: Annotated[str | None, typer.Option("--run-id", help="Name of the run (default: MODE-PREDICTIONS).")] = None,
    timeout: TimeoutOpt = TIMEOUT_S,
    out_dir: Annotated[Path, typer.Option("--out", help="Where run directories go.")] = Path("runs"),
    test_predictions: Annotated[Path | None, typer.Option("--test-predictions", help="Fix mode: the model's test patches, to filter its fixes by its own tests (SWT-bench §5.3).")] = None,
    source: SourceOpt = None,
    mirrors: MirrorsOpt = None,
    stall_timeout: StallTimeoutOpt = STALL_TIMEOUT_S,
    ids: InstanceIdsOpt = None,
    test_network: Annotated[bool, typer.Option("--test-network", help="Keep the network for the predictions' tests (default: Docker cuts it off; locally, package indexes and proxies point at nothing).")] = False,
    retry_failed: RetryFailedOpt = False,
    *,
    sandbox: SandboxConfig,
    executor: ExecutorConfig,
) -> None:
    """Evaluate predictions; write one report per prediction and a summary (resumable by run ID)."""
    from benchsmith.evaluation.environment import Environments
    from benchsmith.evaluation.inputs import GOLD, load_instances, load_predictions
    from benchsmith.evaluation.run import EvalOptions, Evaluation
    from benchsmith.evaluation.summary import load_reports, render, write_summary
    from benchsmith.evaluation.swebench_report import write_final_reports

    assert instances_file is not None
    sources = parse_sources(source)
    if mode not in ("fix", "test"):
        fail(f"unknown mode {mode!r}: use fix or test")
    if test_predictions is not None and mode != "fix":
        fail("--test-predictions filters fixes: it needs --mode fix")
    try:
        instances, problems = load_instances(instances_file)
        if problems and not instances and not any("has no test command" in p for p in problems):
            fail(nothing_usable(instances_file, problems))
        wanted = only_instances(ids, instances)
        instances = {k: v for k, v in instances.items() if wanted is None or k in wanted}
        chosen, more = load_predictions(predictions, instances, mode)
        problems += more
        tests: dict[str, Prediction] = {}
        if test_predictions is not None:
            loaded, more = load_predictions(str(test_predictions), instances, "test")
            problems += [f"test predictions: {p}" for p in more]
            tests = {p.instance_id: p for p in loaded}
    except BenchsmithError as exc:
        fail(str(exc))
    for problem in problems:
        warn(problem)
    untested = [p for p in problems if "has no test command" in p]
    if untested and not instances:
        fail(f"{instances_file} has no test commands (published instances lack them): run "
             f"`benchsmith prepare {instances_file} --out prepared.jsonl` first and evaluate "
             "prepared.jsonl")
    if untested:
        say("instances without test commands are prepared by `benchsmith prepare`")
    if not chosen:
        fail("nothing to evaluate: no prediction matches a usable instance")
    name = run_id or f"{mode}-{GOLD if predictions == GOLD else Path(predictions).stem}"
    if not name or "/" in name or name.startswith("."):
        fail(f"invalid run ID {name!r}")
    run_dir = out_dir / name
    environments = Environments(sandbox, sources, mirrors, timeout, progress=say,
                                test_network=test_network)
    options = EvalOptions.model_validate({"mode": mode, "run_dir": run_dir, "jobs": jobs,
                                          "timeout_s": timeout, "stall_timeout_s": stall_timeout,
                                          "test_network": test_network,
                                          "retry_failed": retry_failed})
    evaluation = Evaluation(options, environments, tests, progress=say)
    runner = open_executor(executor, jobs, sandbox)
    say(f"evaluating {len(chosen)} prediction(s) in {mode} mode; run directory {run_dir}")
    evaluation.resumed(instances, chosen, resume(retry_failed))
    try:
        reports = evaluation.run(instances, chosen, executor=runner)
    finally:
        runner.close()
        if run_dir.is_dir():
            summaries = write_summary(run_dir)
            finals = write_final_reports(run_dir, load_reports(run_dir), instances)
    out.print(render(summaries, name), highlight=False, end="")
    if sandbox.type == "docker":
        _print_image_sizes(instances, sorted({r.instance_id for r in reports}))
    for failed in (r for r in reports if r.infrastructure_failure):
        error_line(f"INFRASTRUCTURE FAILURE {failed.instance_id}: "
                   f"{failed.infrastructure_reason or failed.error or 'no reason recorded'}")
    out.print(_closing_line(run_dir), highlight=False, soft_wrap=True)
    out.print("SWE-bench's final report: " + ", ".join(str(p) for p in finals), highlight=False,
              soft_wrap=True)
    if reports and all(r.infrastructure_failure for r in reports):
        fail("nothing could be evaluated: every prediction hit an infrastructure failure", code=1)


def _print_image_sizes(instances: dict[str, TaskInstance], evaluated: list[str]) -> None:
    """Docker: one line per evaluated instance with its image and what it takes on disk (in
    all, and not shared with the layers under it)."""
    from benchsmith.cli.docker import image_sizes, size_text
    from benchsmith.sandbox.docker.base import docker_client
    from benchsmith.sandbox.store import instance_name

    try:
        sizes = image_sizes(docker_client())
    except BenchsmithError as exc:
        warn(f"image sizes unknown: {exc}")
        return
    for instance_id in evaluated:
        instance = instances[instance_id]
        image = instance.image or instance_name(instance.repo, instance.base_commit)
        size, own = sizes.get(image, (None, None))
        shown = "not kept" if size is None or own is None else \
            f"{size_text(size)} ({size_text(own)} its own)"
        out.print(f"instance image {instance_id}: {image} {shown}", highlight=False,
                  soft_wrap=True)


def _closing_line(run_dir: Path) -> str:
    """Where the reports are, as real paths: each model's folder with one report as example."""
    from benchsmith.evaluation.run import REPORT

    found = sorted(run_dir.glob(f"*/*/{REPORT}"))
    folders = sorted({path.parent.parent for path in found})
    shown = ", ".join(str(folder) + "/" for folder in folders) or str(run_dir)
    example = f" (e.g. {found[0]})" if found else ""
    return f"reports: {len(found)} in {shown}{example}; summary: {run_dir / 'summary.json'}"


@app.command()
def report(
    run_dir: Annotated[Path, typer.Argument(help="A run directory written by `benchsmith evaluate`.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Summarize a run again from its instance reports (and rewrite summary.json/.txt)."""
    from benchsmith.evaluation.summary import load_reports, render, write_summary

    if run_dir.is_file():
        fail(f"{run_dir} is a file: report expects the run directory `benchsmith evaluate` wrote "
             "(OUT/RUN_ID, holding MODEL/INSTANCE_ID/report.json)")
    if not run_dir.is_dir():
        fail(f"run directory not found: {run_dir}")
    reports = load_reports(run_dir)
    if not reports:
        fail(f"no instance reports in {run_dir}")
    summaries = write_summary(run_dir, reports)
    if as_json:
        out.print_json("[" + ",".join(s.model_dump_json() for s in summaries) + "]")
    else:
        out.print(render(summaries, run_dir.name), highlight=False, end="")
