"""Summaries of a results file: success rate per task type and overall (errors counted apart:
they are the harness's or the task's failures, not the agent's), as rows, JSON and HTML."""

from __future__ import annotations

import html
import json
from pathlib import Path

from pydantic import BaseModel, ValidationError

from benchsmith.core import BenchsmithError
from benchsmith.setupbench.models import TaskResult


class SummaryRow(BaseModel):
    """Counts for one task type (or ``overall``)."""

    task_type: str
    tasks: int
    success: int
    failed: int
    error: int
    success_rate: float
    """success / (success + failed): errors are not the agent's."""
    mean_agent_s: float
    mean_harness_s: float


def read_results(path: Path) -> list[TaskResult]:
    """The results of a file written by `setupbench run` (later lines of a task win)."""
    if not path.is_file():
        raise BenchsmithError(f"results file not found: {path}")
    found: dict[tuple[str, str, int], TaskResult] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            result = TaskResult.model_validate(json.loads(line))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise BenchsmithError(f"{path}:{number} is not a setupbench result "
                                  f"({str(exc).splitlines()[0][:120]})") from None
        found[(result.instance_id, result.agent, result.run)] = result
    if not found:
        raise BenchsmithError(f"no results in {path}")
    return list(found.values())


def _row(task_type: str, results: list[TaskResult]) -> SummaryRow:
    count = {v: sum(r.verdict == v for r in results) for v in ("success", "failed", "error")}
    judged = count["success"] + count["failed"]
    ran = [r for r in results if r.verdict != "error"] or results
    return SummaryRow(
        task_type=task_type, tasks=len(results), **count,
        success_rate=round(count["success"] / judged, 4) if judged else 0.0,
        mean_agent_s=round(sum(r.agent_s for r in ran) / len(ran), 1),
        mean_harness_s=round(sum(r.harness_s for r in ran) / len(ran), 2))


def summarize(results: list[TaskResult]) -> list[SummaryRow]:
    """One row per task type (sorted), then ``overall``."""
    types = sorted({r.task_type for r in results})
    return [_row(t, [r for r in results if r.task_type == t]) for t in types] + \
        [_row("overall", results)]


def table_lines(rows: list[SummaryRow]) -> list[str]:
    """The summary as aligned text lines."""
    header = ("task_type", "tasks", "success", "failed", "error", "rate", "agent_s", "harness_s")
    body = [(r.task_type, str(r.tasks), str(r.success), str(r.failed), str(r.error),
             f"{100 * r.success_rate:.1f}%", f"{r.mean_agent_s:.1f}", f"{r.mean_harness_s:.2f}")
            for r in rows]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in [header, *body]]


def html_page(rows: list[SummaryRow], results: list[TaskResult], title: str) -> str:
    """A small self-contained HTML page: the summary table and one row per task."""
    def cells(values: list[str], tag: str = "td") -> str:
        return "<tr>" + "".join(f"<{tag}>{html.escape(v)}</{tag}>" for v in values) + "</tr>"

    summary = [cells(["task type", "tasks", "success", "failed", "error", "success rate",
                      "mean agent s", "mean harness s"], "th")]
    summary += [cells([r.task_type, str(r.tasks), str(r.success), str(r.failed), str(r.error),
                       f"{100 * r.success_rate:.1f}%", f"{r.mean_agent_s:.1f}",
                       f"{r.mean_harness_s:.2f}"]) for r in rows]
    tasks = [cells(["instance", "type", "agent", "run", "verdict", "reason", "agent s",
                    "harness s", "image"], "th")]
    tasks += [cells([r.instance_id, r.task_type, r.agent, str(r.run), r.verdict, r.reason,
                     f"{r.agent_s:.1f}", f"{r.harness_s:.2f}", r.image or ""])
              for r in sorted(results, key=lambda r: (r.task_type, r.instance_id, r.run))]
    style = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
             "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}th{background:#eee}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{style}</style></head><body><h1>{html.escape(title)}</h1>"
            f"<h2>Summary</h2><table>{''.join(summary)}</table>"
            f"<h2>Tasks</h2><table>{''.join(tasks)}</table></body></html>\n")
