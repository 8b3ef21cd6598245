"""`benchsmith analyze`: datasets in, per-instance characteristics, side-by-side tables, CDF
figures and one self-contained HTML page out (the benchmark paper's Table 2 and Figures 5-8)."""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import statistics
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchsmith import __version__
from benchsmith.analysis.agents import Agents, agent_analysis, agents_html, funnel_html
from benchsmith.analysis.characteristics import (
    CHARACTERISTICS,
    DESCRIPTIONS,
    Repository,
    Value,
    characteristics,
)
from benchsmith.analysis.results import load_results
from benchsmith.core import BenchsmithError
from benchsmith.harness.checkout import resolve_source
from benchsmith.harness.jsonl import read_records

Rows = list[dict[str, Any]]


def analyze_dataset(path: Path, mirrors: str | None, warn: Callable[[str], None]) -> Rows:
    """One row per instance: its ID, repository and every characteristic."""
    rows: Rows = []
    repos: dict[str, Repository | None] = {}
    for where, record in read_records(path, "instances"):
        if not isinstance(record, dict) or not record.get("instance_id"):
            warn(f"{where}: not an instance record: skipped")
            continue
        missing = [f for f in ("patch", "test_patch") if not record.get(f)]
        if missing:
            warn(f"{where}: {record['instance_id']} has no {', '.join(missing)}: those rows are n/a")
        name = str(record.get("repo") or "")
        if name not in repos:
            repos[name] = _repository(name, mirrors, warn)
        rows.append({"instance_id": record["instance_id"], "repo": name,
                     "created_at": str(record.get("created_at") or ""),
                     **characteristics(record, repos[name])})
    return rows


def _repository(name: str, mirrors: str | None, warn: Callable[[str], None]) -> Repository | None:
    source = resolve_source(name, mirrors) if name else ""
    if not source or "://" in source or source.startswith("git@"):
        warn(f"{name or 'an instance'}: no local repository (--mirrors): codebase, test-function "
             "and repository-age rows are n/a")
        return None
    git_dir = Path(source)
    return Repository(str(git_dir / ".git" if (git_dir / ".git").is_dir() else git_dir))


def summarize(rows: Rows) -> dict[str, dict[str, Value]]:
    """Mean, median and count of known values per characteristic."""
    table: dict[str, dict[str, Value]] = {}
    for key in CHARACTERISTICS:
        known = [r[key] for r in rows if r.get(key) is not None]
        table[key] = {"mean": round(statistics.fmean(known), 3) if known else None,
                      "median": statistics.median(known) if known else None, "n": len(known)}
    return table


def write_report(datasets: dict[str, Rows], out: Path, inputs: dict[str, str],
                 agents: Agents | None = None, funnel: dict[str, Any] | None = None) -> list[str]:
    """tables.json, one CSV per dataset, figures (when matplotlib is installed) and index.html;
    returns notes for the user (e.g. why there are no figures)."""
    out.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    agents = agents or Agents()
    tables = {name: summarize(rows) for name, rows in datasets.items()}
    repos = {name: dict(Counter(r["repo"] for r in rows).most_common()) for name, rows in datasets.items()}
    (out / "tables.json").write_text(json.dumps(
        {"benchsmith_version": __version__, "inputs": inputs, "instances": {n: len(r) for n, r in datasets.items()},
         "tables": tables, "repositories": repos, "descriptions": DESCRIPTIONS,
         "agents": agents.model_dump(mode="json"), "funnel": funnel}, indent=2) + "\n")
    for name, rows in datasets.items():
        resolved = agents.results[name].resolved if name in agents.results else None
        with (out / f"{name}.csv").open("w", newline="", encoding="utf-8") as handle:
            fields = ["instance_id", "repo", "created_at", *CHARACTERISTICS]
            writer = csv.DictWriter(handle, fieldnames=fields + (["resolved"] if resolved is not None else []))
            writer.writeheader()
            for row in rows:
                if resolved is not None:  # blank: not evaluated
                    row = {**row, "resolved": resolved.get(row["instance_id"], "")}
                writer.writerow(row)
    figures: dict[str, str] = {}
    try:
        figures = _figures(datasets, out / "figures")
    except ImportError:
        notes.append("no figures: matplotlib is not installed (pip install 'benchsmith[analysis]')")
    extra = agents_html(agents) + funnel_html(funnel)
    (out / "index.html").write_text(_page(datasets, tables, repos, figures, inputs, notes, extra),
                                    encoding="utf-8")
    return notes


def _figures(datasets: dict[str, Rows], directory: Path) -> dict[str, str]:
    """A CDF per characteristic (one line per dataset) and the repository distribution, as
    PNG and SVG; returns each figure's PNG as base64 for the page."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    embedded: dict[str, str] = {}
    for key in CHARACTERISTICS:
        series = {n: sorted(r[key] for r in rows if r.get(key) is not None) for n, rows in datasets.items()}
        if not any(series.values()):
            continue
        figure, axes = plt.subplots(figsize=(5, 3.2))
        for name, values in series.items():
            if values:
                axes.step(values, [(i + 1) / len(values) for i in range(len(values))], where="post", label=name)
        axes.set_xlabel(key.replace("_", " "))
        axes.set_ylabel("share of instances")
        axes.legend(loc="lower right", fontsize="small")
        embedded[key] = _save(figure, directory / f"cdf_{key}")
        plt.close(figure)
    figure, axes = plt.subplots(figsize=(6, 3.2))
    for name, rows in datasets.items():
        counts = sorted(Counter(r["repo"] for r in rows).values(), reverse=True)
        total = sum(counts) or 1
        axes.plot(range(1, len(counts) + 1), [sum(counts[:i + 1]) / total for i in range(len(counts))],
                  marker=".", label=name)
    axes.set_xlabel("repositories, largest first")
    axes.set_ylabel("cumulative share of instances")
    axes.legend(loc="lower right", fontsize="small")
    embedded["repositories"] = _save(figure, directory / "repositories")
    plt.close(figure)
    return embedded


def _save(figure: Any, stem: Path) -> str:
    figure.tight_layout()
    figure.savefig(stem.with_suffix(".svg"))
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    stem.with_suffix(".png").write_bytes(buffer.getvalue())
    return base64.b64encode(buffer.getvalue()).decode()


# Marks the page with how many figures loaded (a browser check reads it) and says so if any failed.
_IMAGE_CHECK = """window.addEventListener("load", function () {
  var images = Array.from(document.images);
  var broken = images.filter(function (i) { return !i.complete || i.naturalWidth === 0; });
  document.body.dataset.images = images.length;
  document.body.dataset.brokenImages = broken.length;
  if (broken.length) {
    document.getElementById("images-status").textContent = broken.length + " figure(s) did not load";
  }
});"""


def _cell(value: Value) -> str:
    return "n/a" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def _page(datasets: dict[str, Rows], tables: dict[str, dict[str, dict[str, Value]]],
          repos: dict[str, dict[str, int]], figures: dict[str, str], inputs: dict[str, str],
          notes: list[str], extra: str = "") -> str:
    names = list(datasets)
    head = "".join(f"<th>{html.escape(n)} mean</th><th>median</th><th>n</th>" for n in names)
    body = []
    for key in CHARACTERISTICS:
        cells = "".join(f"<td>{_cell(tables[n][key]['mean'])}</td><td>{_cell(tables[n][key]['median'])}</td>"
                        f"<td>{tables[n][key]['n']}</td>" for n in names)
        body.append(f"<tr><th title='{html.escape(DESCRIPTIONS[key])}'>{key}</th>{cells}</tr>")
    how = "".join(f"<li><b>{k}</b>: {html.escape(v)}</li>" for k, v in DESCRIPTIONS.items())
    images = "".join(f"<figure><img alt='{k}' src='data:image/png;base64,{b}'><figcaption>{k}</figcaption></figure>"
                     for k, b in figures.items())
    top = "".join(f"<h3>{html.escape(n)}: {len(r)} repositories</h3><p>"
                  + ", ".join(f"{html.escape(k)} ({v})" for k, v in list(r.items())[:15]) + "</p>"
                  for n, r in repos.items())
    sources = "".join(f"<li>{html.escape(n)}: {html.escape(p)} ({len(datasets[n])} instances)</li>"
                      for n, p in inputs.items())
    note = "".join(f"<p class='note'>{html.escape(n)}</p>" for n in notes)
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>benchsmith analyze</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}figure{{display:inline-block;margin:4px}}
.note{{color:#a60}}</style></head><body>
<h1>Dataset characteristics</h1>
<p>benchsmith {__version__}. Inputs:</p><ul>{sources}</ul>{note}
<h2>Table: means, medians and counts of known values</h2>
<table><tr><th>characteristic</th>{head}</tr>{"".join(body)}</table>
{extra}
<h2>Figures</h2>{images or "<p>none</p>"}
<h2>Repositories</h2>{top}
<h2>How each number is computed</h2><ul>{how}</ul>
<p>Every number comes from the per-instance CSV files next to this page.</p>
<p id="images-status" class="note"></p>
<script>{_IMAGE_CHECK}</script>
</body></html>
"""


def analyze(inputs: dict[str, Path], out: Path, mirrors: str | None = None,
            warn: Callable[[str], None] | None = None, results: dict[str, Path] | None = None,
            cutoffs: dict[str, str] | None = None, funnel: Path | None = None
            ) -> tuple[dict[str, Rows], list[str]]:
    """Characteristics of every dataset, written to `out` with the agent results and the
    build funnel when given; the rows and notes for the user."""
    say = warn or (lambda message: None)
    unknown = sorted(set(results or {}) - set(inputs))
    if unknown:
        raise BenchsmithError(f"results for {unknown[0]}, which is not one of the datasets "
                              f"({', '.join(inputs)})")
    loaded = {name: load_results(path) for name, path in (results or {}).items()}
    read_funnel = _read_funnel(funnel) if funnel else None
    datasets: dict[str, Rows] = {}
    for name, path in inputs.items():
        if not path.is_file():
            raise BenchsmithError(f"dataset {name}: file not found: {path}")
        datasets[name] = analyze_dataset(path, mirrors, say)
    if not any(datasets.values()):
        raise BenchsmithError("no instance to analyze in " + ", ".join(str(p) for p in inputs.values()))
    agents = agent_analysis(datasets, loaded, cutoffs or {}, say)
    notes = write_report(datasets, out, {n: str(p) for n, p in inputs.items()}, agents, read_funnel)
    return datasets, notes


def _read_funnel(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BenchsmithError(f"cannot read funnel {path}: {exc}") from exc
    if not isinstance(data, dict) or "terminal" not in data:
        raise BenchsmithError(f"{path} is not a build funnel (a .funnel.json that build writes)")
    return data
