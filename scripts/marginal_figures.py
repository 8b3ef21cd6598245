"""The marginal-cost benchmark's figures (see bench-marginal.sh), as JSON: for each instance,
the second test-mode prediction's whole evaluation time over one run of its own tests."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


def _reports(run: Path) -> dict[str, dict]:
    return {path.parent.name: json.loads(path.read_text())
            for path in sorted(run.glob("*/*/report.json"))}


def main(out: Path) -> dict:
    first, second = _reports(out / "runs" / "first"), _reports(out / "runs" / "second")
    rows = []
    for instance_id, report in sorted(second.items()):
        own_runs = 2  # the prediction's tests before and after the fix
        if report.get("infrastructure_failure") or not report.get("tests_s"):
            continue
        one_run = report["tests_s"] / own_runs
        rows.append({
            "instance_id": instance_id,
            "reused_runs": len(report.get("reused_runs", [])),
            "one_run_s": round(one_run, 2),
            "marginal_s": report["duration_s"],
            "ratio": round(report["duration_s"] / one_run, 3),
            "first_s": first.get(instance_id, {}).get("duration_s"),
            "same_results": _results(first.get(instance_id)) == _results(report),
        })
    ratios = [row["ratio"] for row in rows if row["reused_runs"]]  # (gold tests: gold is the prediction)
    return {
        "instances": len(second),
        "measured": len(rows),
        "reused_prediction_independent_runs": len(ratios),
        "median_marginal_over_one_run": round(statistics.median(ratios), 3) if ratios else None,
        "at_most_2_5": sum(1 for r in ratios if r <= 2.5),
        "median_first_s": _median([r["first_s"] for r in rows if r["first_s"]]),
        "median_marginal_s": _median([r["marginal_s"] for r in rows]),
        "same_results": sum(1 for row in rows if row["same_results"]),
        "rows": rows,
    }


def _results(report: dict | None) -> object:
    test = (report or {}).get("test") or {}
    return {key: value for key, value in test.items() if key != "runs"}


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1])), indent=2))
