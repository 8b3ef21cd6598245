"""Run summaries: counts, rates and instance lists per outcome, as JSON and as a table."""

from __future__ import annotations

import statistics
from pathlib import Path

from pydantic import BaseModel, Field

from benchsmith.core import Provenance
from benchsmith.evaluation.models import InstanceReport
from benchsmith.evaluation.run import REPORT, read_report, verdict


class FilterSummary(BaseModel):
    """SWT-bench §5.3: keep only fixes whose own generated tests go fail→pass."""

    kept: int = 0
    resolved: int = 0
    kept_and_resolved: int = 0
    precision: float | None = None  # resolved among kept
    recall: float | None = None  # kept among resolved
    precision_without_filter: float | None = None


class ModelSummary(BaseModel):
    """One model's results in a run."""

    provenance: Provenance | None = None  # of its latest report: how the run was made
    model: str
    mode: str
    evaluated: int = 0
    applied: int = 0
    resolved: int = 0  # fix: resolved; test: success
    partial: int = 0
    infrastructure_failures: int = 0
    errors: int = 0
    empty_patches: int = 0
    # every rate is over all evaluated predictions: empty patches, patches that do not apply,
    # errors and infrastructure failures count as unresolved (as SWE-bench's resolved rate)
    denominator: str = "predictions evaluated"
    rates: dict[str, float] = Field(default_factory=dict)
    change_coverage: dict[str, float | None] = Field(default_factory=dict)
    coverage_instances: int = 0
    filter: FilterSummary | None = None
    median_duration_s: float | None = None
    median_duration_over_tests: float | None = None  # reused environments only
    environments_reused: int = 0
    ids: dict[str, list[str]] = Field(default_factory=dict)


def summarize(reports: list[InstanceReport]) -> list[ModelSummary]:
    """One summary per model, models sorted by name."""
    by_model: dict[str, list[InstanceReport]] = {}
    for report in reports:
        by_model.setdefault(report.model, []).append(report)
    return [_summarize(model, sorted(items, key=lambda r: r.instance_id))
            for model, items in sorted(by_model.items())]


def _rate(count: int, total: int) -> float:
    return round(count / total, 4) if total else 0.0


def _summarize(model: str, reports: list[InstanceReport]) -> ModelSummary:
    summary = ModelSummary(model=model, mode=reports[0].mode, evaluated=len(reports),
                           provenance=next((r.provenance for r in reversed(reports) if r.provenance),
                                           None))
    for report in reports:
        summary.ids.setdefault(verdict(report), []).append(report.instance_id)
        summary.applied += report.applied
        summary.resolved += report.resolved
        summary.partial += bool(report.fix and report.fix.resolution == "PARTIAL")
        summary.infrastructure_failures += report.infrastructure_failure
        summary.errors += bool(report.error) and not report.infrastructure_failure
        summary.environments_reused += report.environment_reused
        summary.empty_patches += report.empty_patch
    total = summary.evaluated
    if summary.mode == "fix":
        summary.rates = {"resolved": _rate(summary.resolved, total),
                         "partial": _rate(summary.partial, total),
                         "applied": _rate(summary.applied, total)}
    else:
        tests = [r.test for r in reports if r.test is not None and r.applied]
        summary.rates = {
            "applicability": _rate(summary.applied, total),
            "success": _rate(summary.resolved, total),
            "fail_to_any": _rate(sum(t.fail_to_any for t in tests), total),
            "fail_to_pass": _rate(sum(t.fail_to_pass for t in tests), total),
            "pass_to_pass": _rate(sum(t.pass_to_pass for t in tests), total),
        }
        _coverage(summary, reports)
    _filter(summary, reports)
    durations = [r.duration_s for r in reports if not r.infrastructure_failure]
    summary.median_duration_s = round(statistics.median(durations), 3) if durations else None
    ratios = [r.duration_s / r.tests_s for r in reports
              if r.environment_reused and r.tests_s > 0 and not r.infrastructure_failure]
    summary.median_duration_over_tests = round(statistics.median(ratios), 3) if ratios else None
    return summary


def _coverage(summary: ModelSummary, reports: list[InstanceReport]) -> None:
    """Mean change coverage over instances with executable changed lines (as in SWT-bench)."""
    measured = [r for r in reports if r.test and r.test.coverage and r.test.coverage.value is not None]
    summary.coverage_instances = len(measured)

    def mean(items: list[InstanceReport]) -> float | None:
        values = [r.test.coverage.value for r in items if r.test and r.test.coverage
                  and r.test.coverage.value is not None]
        return round(statistics.fmean(values), 4) if values else None

    summary.change_coverage = {
        "all": mean(measured),
        "success": mean([r for r in measured if r.resolved]),
        "not_success": mean([r for r in measured if not r.resolved]),
    }


def _filter(summary: ModelSummary, reports: list[InstanceReport]) -> None:
    with_filter = [r for r in reports if r.filter is not None]
    if not with_filter:
        return
    kept = [r for r in with_filter if r.filter and r.filter.kept]
    resolved = [r for r in with_filter if r.resolved]
    both = [r for r in kept if r.resolved]
    summary.filter = FilterSummary(
        kept=len(kept), resolved=len(resolved), kept_and_resolved=len(both),
        precision=round(len(both) / len(kept), 4) if kept else None,
        recall=round(len(both) / len(resolved), 4) if resolved else None,
        precision_without_filter=_rate(len(resolved), len(with_filter)))


def load_reports(run_dir: Path) -> list[InstanceReport]:
    """Every instance report under a run directory."""
    reports = []
    for path in sorted(run_dir.glob(f"*/*/{REPORT}")):
        report = read_report(path)
        if report is not None:
            reports.append(report)
    return reports


def render(summaries: list[ModelSummary], title: str) -> str:
    """The summaries as readable tables (plain text, also written to summary.txt)."""
    from io import StringIO

    from rich.console import Console
    from rich.table import Table

    buffer = StringIO()
    console = Console(file=buffer, width=110, color_system=None)
    for summary in summaries:
        table = Table(title=f"{title}: {summary.model} ({summary.mode} mode)")
        table.add_column("metric")
        table.add_column("value", justify="right")
        table.add_row("predictions evaluated (every rate's denominator)", str(summary.evaluated))
        table.add_row("resolved" if summary.mode == "fix" else "success (F→P, none fail after)",
                      f"{summary.resolved} ({summary.rates.get('resolved', summary.rates.get('success', 0)):.1%})")
        for name, value in summary.rates.items():
            if name not in {"resolved", "success"}:
                table.add_row(name.replace("_", " "), f"{value:.1%}")
        for name, share in summary.change_coverage.items():
            shown = "n/a" if share is None else f"{share:.1%}"
            table.add_row(f"change coverage ({name})", shown)
        if summary.mode == "test":
            table.add_row("instances with coverage", str(summary.coverage_instances))
        if summary.filter:
            f = summary.filter
            table.add_row("filter: kept fixes", str(f.kept))
            table.add_row("filter: precision", "n/a" if f.precision is None else f"{f.precision:.1%}")
            table.add_row("filter: recall", "n/a" if f.recall is None else f"{f.recall:.1%}")
        table.add_row("empty patches (unresolved)", str(summary.empty_patches))
        table.add_row("infrastructure failures", str(summary.infrastructure_failures))
        table.add_row("other errors", str(summary.errors))
        table.add_row("environments reused", str(summary.environments_reused))
        if summary.median_duration_s is not None:
            table.add_row("median time per prediction", f"{summary.median_duration_s:.1f}s")
        if summary.median_duration_over_tests is not None:
            table.add_row("median time / test time", f"{summary.median_duration_over_tests:.2f}")
        console.print(table)
        for outcome, ids in sorted(summary.ids.items()):
            shown = ", ".join(ids[:10]) + (f" … (+{len(ids) - 10})" if len(ids) > 10 else "")
            console.print(f"{outcome} ({len(ids)}): {shown}", highlight=False, soft_wrap=True)
    return buffer.getvalue()


def write_summary(run_dir: Path, reports: list[InstanceReport] | None = None) -> list[ModelSummary]:
    """Write summary.json and summary.txt for the run's reports; return the summaries."""
    summaries = summarize(load_reports(run_dir) if reports is None else reports)
    payload = "[\n" + ",\n".join(s.model_dump_json(indent=2) for s in summaries) + "\n]\n"
    (run_dir / "summary.json").write_text(payload, encoding="utf-8")
    (run_dir / "summary.txt").write_text(render(summaries, run_dir.name), encoding="utf-8")
    return summaries
