"""The dataset-preparation benchmark's figures from its output directory (see
bench-prepare.sh), as JSON: what `prepare` reached and why each other instance did not."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from benchsmith.datasets.prepare_summary import summarize
from benchsmith.datasets.verdict import Verdict
from benchsmith.harness.jsonl import records_by_key


def _summary(run: Path) -> dict:
    try:
        return json.loads((run / "summary.json").read_text())[0]
    except (OSError, ValueError, IndexError):
        return {}


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def _median2(values: list[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


def share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def main(out: Path) -> dict:
    # a resumed run with --retry-failed appends the redone instances: the last record counts
    records = list(records_by_key(out / "prepared.jsonl", "instance_id").values())
    summary = summarize(records)
    verdicts = {r["instance_id"]: Verdict.model_validate(r["prepare"]) for r in records}
    prepared = [v for v in verdicts.values() if v.status not in ("setup_failed", "error")]
    gold, empty = _summary(out / "runs" / "fix-gold"), _summary(out / "runs" / "fix-empty")
    return {
        "instances": summary.instances,
        "prepared": summary.prepared,
        "prepared_share": share(summary.prepared, summary.instances),
        "fail_to_pass_all_reproduced": summary.fail_to_pass_reproduced,
        "fail_to_pass_share_of_prepared": share(summary.fail_to_pass_reproduced, summary.prepared),
        "pass_to_pass_all_reproduced": summary.pass_to_pass_reproduced,
        "pass_to_pass_share_of_prepared": share(summary.pass_to_pass_reproduced, summary.prepared),
        "median_instance_s_environment_reused": _median([v.instance_s for v in prepared]),
        # the instance's own time over its test runs' (the rest: checkout, install, patches)
        "median_instance_over_tests": _median2([v.instance_s / v.tests_s for v in prepared
                                                 if v.tests_s > 0]),
        "median_environment_setup_s": _median([v.environment_s for v in prepared]),
        # Docker: the instance image, built while the next instance ran (not in instance_s)
        "median_image_s": _median([v.image_s for v in prepared if v.image_s > 0]),
        "statuses": summary.statuses,
        "not_reproduced_by_cause": summary.causes,
        "per_repo": summary.per_repo,
        "gold": {k: gold.get(k) for k in ("evaluated", "resolved", "infrastructure_failures", "errors",
                                          "median_duration_over_tests")},
        "empty": {k: empty.get(k) for k in ("evaluated", "resolved", "empty_patches")},
        "not_reproduced": {iid: f"{v.cause}: {v.status}: {v.reason}"[:300]
                           for iid, v in sorted(verdicts.items()) if v.status != "reproduced"},
    }


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1])), indent=2))
