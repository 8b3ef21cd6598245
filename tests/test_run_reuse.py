"""Test mode computes the runs that do not depend on the prediction once per instance: a
second prediction (of any run or model) runs only its own two, with the same results."""

from __future__ import annotations

from pathlib import Path

import pytest

from .evaluation_fixture import build_instances, evaluator, prediction
from .test_evaluate_tests import CUSTOM_DIFF, EDITED_TEST

pytestmark = pytest.mark.slow


def test_prediction_independent_runs_are_reused_across_predictions_and_runs(
        make_repo, tmp_path: Path) -> None:
    repo, instances = build_instances(make_repo)
    calc1 = {"fixture__calc-1": instances["fixture__calc-1"]}
    first, second = (prediction("fixture__calc-1", CUSTOM_DIFF, "a"),
                     prediction("fixture__calc-1", EDITED_TEST, "b"))
    [fresh, reusing] = sorted(evaluator(repo, tmp_path, "test", run_id="one").run(calc1, [first, second]),
                              key=lambda r: r.model)
    assert fresh.reused_runs == [] and fresh.resolved
    assert reusing.reused_runs == ["gold@original", "gold@fixed", "none@original", "none@fixed"]
    assert reusing.resolved and reusing.test.coverage.value == 1.0
    assert reusing.reused_tests_s > 0 and len(reusing.test.runs) == 6
    # Another run (another model name) of the first prediction: same results, two runs only.
    [again] = evaluator(repo, tmp_path, "test", run_id="two").run(
        calc1, [prediction("fixture__calc-1", CUSTOM_DIFF, "c")])
    assert len(again.reused_runs) == 4
    assert again.test.model_dump(exclude={"runs"}) == fresh.test.model_dump(exclude={"runs"})
    assert {k: r.statuses for k, r in again.test.runs.items()} == {
        k: r.statuses for k, r in fresh.test.runs.items()}
    assert all(Path(log).is_file() for log in again.logs.values())
    # The marginal cost of one more prediction: its own two runs plus applying and checkpoints.
    one_run = again.tests_s / 2
    print(f"marginal: {again.duration_s:.1f}s = {again.duration_s / one_run:.2f} runs of "
          f"{one_run:.2f}s; without reuse: {fresh.duration_s:.1f}s")
