"""Agent results against dataset characteristics: accuracy, Spearman's rho per characteristic
(the benchmark paper's Table 7) and success before/after a model's knowledge cutoff with a
one-sided test (its Table 8).

Results are read from benchsmith run folders (``summary.json``) or SWE-bench-format files: the
harness's final report (``resolved_ids`` ...), a per-instance report (``{id: {"resolved": ..}}``),
a JSON object ``{id: true}``, or JSONL lines with ``instance_id`` and ``resolved``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from benchsmith.core import BenchsmithError
from benchsmith.harness.checkout import instant

SIGNIFICANT = 0.01  # p below this is marked significant, as in the paper
MIN_PAIRS = 3  # fewer instances than this: no correlation


class Results(BaseModel):
    """Which instances one model resolved, among those it was evaluated on."""

    model: str
    resolved: dict[str, bool] = Field(default_factory=dict)  # instance -> resolved


class Correlation(BaseModel):
    """Spearman's rho between one characteristic and resolution (None: not computable)."""

    n: int = 0
    rho: float | None = None
    p: float | None = None
    significant: bool = False
    note: str = ""


class CutoffTest(BaseModel):
    """Accuracy before and after a knowledge cutoff and the one-sided p-value that it was
    higher before (normal approximation of the difference of two binomial proportions)."""

    model: str
    cutoff: str
    before: int = 0
    before_resolved: int = 0
    after: int = 0
    after_resolved: int = 0
    accuracy_before: float | None = None
    accuracy_after: float | None = None
    z: float | None = None
    p_one_sided: float | None = None


def load_results(path: Path) -> Results:
    """The results at `path` (a run folder or a results file); BenchsmithError when unreadable."""
    file = path / "summary.json" if path.is_dir() else path
    if not file.is_file():
        raise BenchsmithError(f"results not found: {file}")
    text = file.read_text(encoding="utf-8", errors="replace")
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError:
        try:
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise BenchsmithError(f"cannot read results {file}: not JSON or JSONL ({exc})") from exc
    found = _parse(data, file.stem if file.name != "summary.json" else file.parent.name)
    if found is None:
        raise BenchsmithError(f"cannot read results {file}: not a run summary, a SWE-bench report "
                              "or a list of instance_id/resolved records")
    return found


def _parse(data: Any, default_model: str) -> Results | None:
    if isinstance(data, list) and data and all(isinstance(d, dict) and "ids" in d for d in data):
        # a run folder of several models: the first (summaries are sorted by model)
        ids: dict[str, list[str]] = data[0]["ids"]
        evaluated = {i for group in ids.values() for i in group}
        resolved = set(ids.get("RESOLVED", []))
        return Results(model=str(data[0].get("model") or default_model),
                       resolved={i: i in resolved for i in sorted(evaluated)})
    if isinstance(data, list) and all(isinstance(d, dict) and "instance_id" in d for d in data):
        return Results(model=default_model,
                       resolved={str(d["instance_id"]): bool(d.get("resolved")) for d in data})
    if isinstance(data, dict) and "resolved_ids" in data:
        resolved = set(data["resolved_ids"])
        evaluated = set(data.get("completed_ids") or []) | resolved | set(
            data.get("unresolved_ids") or []) | set(data.get("empty_patch_ids") or []) | set(
            data.get("error_ids") or [])
        return Results(model=default_model, resolved={i: i in resolved for i in sorted(evaluated)})
    if isinstance(data, dict) and data and all(isinstance(v, bool | dict) for v in data.values()):
        return Results(model=default_model, resolved={
            str(k): bool(v.get("resolved")) if isinstance(v, dict) else v for k, v in data.items()})
    return None


def spearman(x: list[float], y: list[float]) -> Correlation:
    """Spearman's rho and its two-sided p-value (scipy), or why there is none."""
    if len(x) < MIN_PAIRS:
        return Correlation(n=len(x), note=f"fewer than {MIN_PAIRS} instances")
    if len(set(x)) < 2 or len(set(y)) < 2:
        return Correlation(n=len(x), note="constant values")
    from scipy.stats import spearmanr

    rho, p = spearmanr(x, y)
    if math.isnan(rho):
        return Correlation(n=len(x), note="not defined")
    return Correlation(n=len(x), rho=round(float(rho), 4), p=float(p), significant=float(p) < SIGNIFICANT)


def correlations(rows: list[dict[str, Any]], results: Results,
                 characteristics: tuple[str, ...]) -> dict[str, Correlation]:
    """Spearman's rho of each characteristic with resolution over the evaluated instances."""
    found: dict[str, Correlation] = {}
    for key in characteristics:
        pairs = [(row[key], float(results.resolved[row["instance_id"]])) for row in rows
                 if row.get(key) is not None and row["instance_id"] in results.resolved]
        found[key] = spearman([p[0] for p in pairs], [p[1] for p in pairs])
    return found


def cutoff_test(rows: list[dict[str, Any]], results: Results, cutoff: str) -> CutoffTest:
    """Accuracy on instances created before `cutoff` against those created on or after it."""
    limit = instant(cutoff)
    test = CutoffTest(model=results.model, cutoff=cutoff)
    for row in rows:
        resolved = results.resolved.get(row["instance_id"])
        try:
            created = instant(row["created_at"]) if row.get("created_at") else None
        except ValueError:
            created = None
        if resolved is None or created is None:
            continue
        if created < limit:
            test.before, test.before_resolved = test.before + 1, test.before_resolved + resolved
        else:
            test.after, test.after_resolved = test.after + 1, test.after_resolved + resolved
    if not test.before or not test.after:
        return test
    p1, p2 = test.before_resolved / test.before, test.after_resolved / test.after
    test.accuracy_before, test.accuracy_after = round(p1, 4), round(p2, 4)
    pooled = (test.before_resolved + test.after_resolved) / (test.before + test.after)
    spread = math.sqrt(pooled * (1 - pooled) * (1 / test.before + 1 / test.after))
    if spread > 0:
        z = (p1 - p2) / spread
        test.z, test.p_one_sided = round(z, 4), 0.5 * math.erfc(z / math.sqrt(2))
    return test


def match_results(name: str, rows: list[dict[str, Any]], results: Results,
                  warn: Callable[[str], None]) -> Results:
    """`results` restricted to the dataset's instances; unknown IDs are named in one line."""
    known = {row["instance_id"] for row in rows}
    unknown = sorted(set(results.resolved) - known)
    if unknown:
        warn(f"results for {name}: {len(unknown)} instance(s) not in the dataset, left out "
             f"(e.g. {unknown[0]})")
    return Results(model=results.model,
                   resolved={k: v for k, v in results.resolved.items() if k in known})
