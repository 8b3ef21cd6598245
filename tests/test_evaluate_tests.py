"""Test mode (SWT-bench metrics) and fix filtering, end to end on a self-built repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsmith.evaluation.summary import summarize

from .evaluation_fixture import (
    PARSE_TEST,
    TEST_FILE,
    TESTS,
    build_instances,
    evaluator,
    prediction,
    working_diff,
)

pytestmark = pytest.mark.slow

ONLY_PASSING = TESTS + '''

def test_total_of_nothing():
    assert total([]) == 0
'''
FAILS_BOTH_SIDES = TESTS + '''

def test_spaces_wrong_expectation():
    assert parse("a, b") == ["a b"]
'''
CUSTOM_DIFF = '''Here is a test that reproduces the issue:
```custom-diff
diff
tests/test_calc.py
insert
EOF
def test_spaces_are_stripped():
    assert parse(" x ,y") == ["x", "y"]
end diff
```
'''
EDITED_TEST = '''
diff
tests/test_calc.py
rewrite
4
def test_plain():
    assert parse("a,b") == ["a", "b"]
    assert parse("a , b") == ["a", "b"]
end diff
'''


def test_gold_tests_succeed_with_change_coverage(make_repo, tmp_path: Path) -> None:
    repo, instances = build_instances(make_repo)
    evaluation = evaluator(repo, tmp_path, "test")
    gold = [prediction(i.instance_id, i.test_patch, "gold") for i in instances.values()]
    reports = {r.instance_id: r for r in evaluation.run(instances, gold)}
    for report in reports.values():
        assert report.applied and report.resolved, report.error
        assert report.test.coverage.value == 1.0  # the fix's changed line, before and after
        assert report.test.coverage == report.test.gold_coverage
    calc1 = reports["fixture__calc-1"].test
    assert calc1.new_tests == calc1.FAIL_TO_PASS == [f"{TEST_FILE}::test_spaces"]
    assert calc1.coverage.executable_removed == 1 and calc1.coverage.executable_added == 1
    [summary] = summarize(list(reports.values()))
    assert summary.rates["success"] == summary.rates["applicability"] == 1.0
    assert summary.change_coverage["all"] == 1.0 and summary.coverage_instances == 2


def test_passing_only_failing_both_sides_and_malformed_predictions(make_repo, tmp_path: Path) -> None:
    repo, instances = build_instances(make_repo)
    evaluation = evaluator(repo, tmp_path, "test")
    predictions = [
        prediction("fixture__calc-1", working_diff(repo, {TEST_FILE: ONLY_PASSING}), "passing"),
        prediction("fixture__calc-1", working_diff(repo, {TEST_FILE: FAILS_BOTH_SIDES}), "wrong"),
        prediction("fixture__calc-1", "diff\ntests/test_calc.py\nreplace\n3\nx = 1\nend diff\n", "bad"),
        prediction("fixture__calc-1", CUSTOM_DIFF, "custom"),
        prediction("fixture__calc-1", EDITED_TEST, "edited"),
    ]
    reports = {r.model: r for r in evaluation.run(instances, predictions)}
    passing = reports["passing"].test
    assert passing.pass_to_pass and not passing.fail_to_any and not reports["passing"].resolved
    assert passing.new_tests == [f"{TEST_FILE}::test_total_of_nothing"]
    assert passing.coverage.value == 0.0  # runs no changed line of the fix
    wrong = reports["wrong"].test
    failing_both = wrong.FAIL_TO_FAIL
    assert failing_both == [f"{TEST_FILE}::test_spaces_wrong_expectation"]
    assert wrong.fail_to_any and not wrong.fail_to_pass and not reports["wrong"].resolved
    bad = reports["bad"]
    assert not bad.applied and bad.apply.custom_diff and "block 1" in bad.error
    custom = reports["custom"]
    assert custom.resolved and custom.apply.custom_diff
    assert "+def test_spaces_are_stripped():" in custom.apply.unified_diff
    assert (tmp_path / "runs/run/custom/fixture__calc-1/prediction.converted.patch").is_file()
    # An edited existing test is a new test too (and gets coverage credit).
    edited = reports["edited"]
    assert edited.resolved and edited.test.new_tests == [f"{TEST_FILE}::test_plain"]
    assert edited.test.coverage.value == 1.0
    [summary] = [s for s in summarize(list(reports.values())) if s.model == "bad"]
    assert summary.rates["applicability"] == 0.0


def test_filtering_fixes_by_their_own_tests(make_repo, tmp_path: Path) -> None:
    repo, instances = build_instances(make_repo)
    calc1, calc2 = instances["fixture__calc-1"], instances["fixture__calc-2"]
    no_fix = working_diff(repo, {"README.md": "calc, better\n"})
    fixes = [prediction(calc1.instance_id, calc1.patch), prediction(calc2.instance_id, no_fix)]
    tests = {calc1.instance_id: prediction(calc1.instance_id, calc1.test_patch),
             calc2.instance_id: prediction(calc2.instance_id, calc2.test_patch)}
    evaluation = evaluator(repo, tmp_path, "fix", tests=tests)
    reports = {r.instance_id: r for r in evaluation.run(instances, fixes)}
    assert reports[calc1.instance_id].filter.kept and reports[calc1.instance_id].resolved
    assert not reports[calc2.instance_id].filter.kept and not reports[calc2.instance_id].resolved
    [summary] = summarize(list(reports.values()))
    assert summary.filter.kept == 1 and summary.filter.precision == 1.0
    assert summary.filter.recall == 1.0 and summary.filter.precision_without_filter == 0.5


def test_gold_tests_broken_in_the_environment_are_not_held_against_predictions(
        make_repo, tmp_path: Path) -> None:
    repo, instances = build_instances(make_repo)
    broken = PARSE_TEST + "\n\ndef test_needs_a_missing_extension():\n    import calc._speedups\n"
    calc1 = instances["fixture__calc-1"].model_copy(update={
        "test_patch": working_diff(repo, {TEST_FILE: broken})})
    evaluation = evaluator(repo, tmp_path, "test")
    [gold] = evaluation.run({calc1.instance_id: calc1}, [prediction(calc1.instance_id, calc1.test_patch)])
    assert gold.resolved, gold.test
    assert gold.test.known_failing == [f"{TEST_FILE}::test_needs_a_missing_extension"]
    own_broken = PARSE_TEST + "\n\ndef test_other_broken():\n    assert False\n"
    [model] = evaluation.run({calc1.instance_id: calc1}, [
        prediction(calc1.instance_id, working_diff(repo, {TEST_FILE: own_broken}), "m")])
    assert model.test.fail_to_pass and not model.resolved and model.test.known_failing == []
