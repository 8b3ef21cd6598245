"""The numbers of a `prepare` output file: instances, prepared, labels reproduced, causes,
overall and per repository."""

from __future__ import annotations

import statistics
from typing import Any

from pydantic import BaseModel, Field

from benchsmith.datasets.verdict import FAILED_STATUSES, Verdict


class PrepareSummary(BaseModel):
    """Counts over the prepared records of one input, overall and per repository."""

    instances: int = 0
    prepared: int = 0  # an environment ran the instance's tests
    fail_to_pass_reproduced: int = 0  # every published FAIL_TO_PASS reproduced
    pass_to_pass_reproduced: int = 0
    with_flaky: int = 0  # instances with a flaky test (left out of the check)
    flaky_tests: int = 0
    statuses: dict[str, int] = Field(default_factory=dict)
    causes: dict[str, int] = Field(default_factory=dict)  # instances not reproduced, by cause
    per_repo: dict[str, dict[str, int]] = Field(default_factory=dict)
    median_instance_s: float | None = None


def summarize(records: list[dict[str, Any]]) -> PrepareSummary:
    """The summary table's numbers, from output records."""
    summary = PrepareSummary(instances=len(records))
    times = []
    for record in records:
        verdict = Verdict.model_validate(record.get("prepare") or {"status": "error"})
        summary.statuses[verdict.status] = summary.statuses.get(verdict.status, 0) + 1
        if verdict.cause:
            summary.causes[verdict.cause] = summary.causes.get(verdict.cause, 0) + 1
        repo = summary.per_repo.setdefault(str(record.get("repo")), {"instances": 0, "prepared": 0,
                                                                     "fail_to_pass": 0})
        repo["instances"] += 1
        if verdict.status in FAILED_STATUSES:
            continue
        summary.prepared += 1
        repo["prepared"] += 1
        times.append(verdict.instance_s)
        if verdict.fail_to_pass.all_reproduced:
            summary.fail_to_pass_reproduced += 1
            repo["fail_to_pass"] += 1
        if verdict.pass_to_pass.all_reproduced:
            summary.pass_to_pass_reproduced += 1
        summary.with_flaky += bool(verdict.flaky)
        summary.flaky_tests += len(verdict.flaky)
    summary.median_instance_s = round(statistics.median(times), 2) if times else None
    return summary
