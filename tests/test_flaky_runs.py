"""Flaky tests are measured: `--runs N` on build, prepare and verify records each test whose
outcome changed between runs with how often it passed on each side, and keeps it out of the
labels. The fixture's test fails the first time it runs in a sandbox and passes ever after
(a counter under the sandbox's private HOME), the same way on every machine."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from benchsmith.core import TestStatus
from benchsmith.harness.behaviour import classify
from benchsmith.harness.testrun import TestRun
from benchsmith.instance import FlakyTest, TaskInstance

from .test_cli_batch import run_cli
from .test_mining_build import NEW_TESTS, bug_and_fix, pr_from

P, F = TestStatus.PASSED, TestStatus.FAILED
WARM = "tests/test_calc.py::test_warm_cache"
SPACES, PLAIN = "tests/test_calc.py::test_spaces", "tests/test_calc.py::test_plain"
WARM_TEST = '''

def test_warm_cache():
    import os

    path = os.path.expanduser("~/warm-cache-runs")
    runs = int(open(path).read()) if os.path.exists(path) else 0
    open(path, "w").write(str(runs + 1))
    assert runs > 0, "cold cache"
'''
# before the fix: runs 1-3 (the first fails); after it: runs 4-6
WARM_COUNTS = FlakyTest(name=WARM, before_passed=2, before_runs=3, after_passed=3, after_runs=3)


def runs(*statuses: dict[str, TestStatus]) -> list[TestRun]:
    return [TestRun(statuses=s) for s in statuses]


def test_classify_counts_each_flaky_test_per_side_and_labels_the_rest() -> None:
    before = runs({SPACES: F, PLAIN: P, WARM: F}, {SPACES: F, PLAIN: P, WARM: P},
                  {SPACES: F, PLAIN: P, WARM: P})
    after = runs({SPACES: P, PLAIN: P, WARM: P}, {SPACES: P, PLAIN: F, WARM: P},
                 {SPACES: P, PLAIN: P, WARM: P})
    behaviour = classify(before, after)
    assert behaviour.FAIL_TO_PASS == [SPACES] and behaviour.PASS_TO_PASS == []
    assert behaviour.flaky == [PLAIN, WARM]  # the names, as the instance's `flaky`
    assert behaviour.flaky_runs == [
        FlakyTest(name=PLAIN, before_passed=3, before_runs=3, after_passed=2, after_runs=3),
        WARM_COUNTS]
    assert WARM_COUNTS.counts() == "before: passed 2 of 3, after: passed 3 of 3"
    # one run per side measures nothing: the same outcomes are labels
    once = classify(before[:1], after[:1])
    assert once.FAIL_TO_PASS == [SPACES, WARM] and once.flaky_runs == []


def test_records_without_flaky_counts_still_load() -> None:
    old = {"instance_id": "o__r-1", "repo": "o/r", "base_commit": "a" * 40,
           "FAIL_TO_PASS": json.dumps([SPACES]), "flaky": [WARM]}
    assert TaskInstance.model_validate(old).flaky_runs == []
    new = TaskInstance.model_validate({**old, "flaky_runs": [WARM_COUNTS.model_dump()]})
    assert TaskInstance.model_validate(new.to_record()).flaky_runs == [WARM_COUNTS]


def test_a_flaky_label_is_reported_as_flaky_not_as_a_mismatch() -> None:
    from benchsmith.datasets.prepare import judge as judge_published
    from benchsmith.datasets.prepare_summary import summarize
    from benchsmith.mining.verify import judge

    before = runs({SPACES: F, PLAIN: P, WARM: F}, {SPACES: F, PLAIN: P, WARM: P},
                  {SPACES: F, PLAIN: P, WARM: P})
    after = runs(*[{SPACES: P, PLAIN: P, WARM: P}] * 3)
    behaviour = classify(before, after)
    labelled = TaskInstance(instance_id="o__r-1", repo="o/r", base_commit="a" * 40,
                            FAIL_TO_PASS=[SPACES, WARM], PASS_TO_PASS=[PLAIN])
    verdict = judge(labelled, behaviour)
    assert (verdict.ok, verdict.status, verdict.flaky_labels) == (False, "flaky", [WARM])
    assert verdict.reason == f"flaky label(s): {WARM} (before: passed 2 of 3, after: passed 3 of 3)"
    assert verdict.flaky == [WARM_COUNTS]
    unlabelled = labelled.model_copy(update={"FAIL_TO_PASS": [SPACES]})
    assert judge(unlabelled, behaviour).status == "ok"  # flaky, but no label: the instance holds
    published = judge_published(labelled, behaviour)
    assert published.fail_to_pass.flaky == [WARM] and published.fail_to_pass.not_found == []
    assert published.flaky == [WARM_COUNTS] and "1 flaky" in published.reason
    summary = summarize([{"repo": "o/r", "prepare": published.model_dump(mode="json")}])
    assert (summary.with_flaky, summary.flaky_tests) == (1, 1)


def _flaky_line(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if "flaky tests:" in line)


@pytest.mark.slow
def test_build_and_verify_measure_flaky_tests_with_runs(make_repo, tmp_path: Path) -> None:
    repo, base, fix = bug_and_fix(make_repo, NEW_TESTS + WARM_TEST)
    prs = tmp_path / "prs.jsonl"
    prs.write_text(pr_from(repo, 2, base, fix, issue_numbers=[1]).model_dump_json() + "\n")
    refdb = str(tmp_path / "ref.sqlite")

    def build(runs: int) -> dict:
        out = tmp_path / f"runs{runs}" / "instances.jsonl"
        built = run_cli("build", str(prs), "--out", str(out), "--refdb", refdb, "--runs", str(runs))
        assert built.returncode == 0, built.stderr[-3000:]
        [instance] = map(json.loads, out.read_text().splitlines())
        instance["summary"] = _flaky_line(built.stdout)
        log = [json.loads(line) for line in out.with_suffix(".log.jsonl").read_text().splitlines()]
        instance["log_flaky"] = log[0]["flaky"]
        instance["path"] = str(out)
        return instance

    def verify(instances: str, runs: int):
        return run_cli("verify", instances, "--source", f"fixture/calc={repo.path}",
                       "--runs", str(runs))

    measured = build(3)
    assert json.loads(measured["FAIL_TO_PASS"]) == [SPACES]
    assert json.loads(measured["PASS_TO_PASS"]) == [PLAIN]
    assert measured["flaky"] == [WARM]  # names, as SWE-bench's tools read them
    assert measured["flaky_runs"] == [WARM_COUNTS.model_dump()]
    assert measured["log_flaky"] == [WARM_COUNTS.model_dump()]
    assert measured["summary"] == "flaky tests: 1 in 1 PR(s)"
    verified = verify(measured["path"], 3)  # a fresh sandbox: its first run is cold again
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith("ok ")
    assert f"flaky: {WARM} (before: passed 2 of 3, after: passed 3 of 3)" in verified.stdout
    assert _flaky_line(verified.stdout).endswith(
        "1 hold, 0 failed, 0 with a flaky label; flaky tests: 1 in 1 instance(s)")

    # One run per side cannot tell: the cold first run makes the test FAIL_TO_PASS.
    guessed = build(1)
    assert json.loads(guessed["FAIL_TO_PASS"]) == [SPACES, WARM]
    assert guessed["flaky"] == [] and guessed["flaky_runs"] == []
    assert guessed["summary"] == "flaky tests: 0 in 0 PR(s)"
    once = verify(guessed["path"], 1)
    assert once.returncode == 0 and _flaky_line(once.stdout).endswith("flaky tests: 0 in 0 instance(s)")
    # ... and three runs show that label to be flaky, not a FAIL_TO_PASS that went away
    thrice = verify(guessed["path"], 3)
    assert thrice.returncode == 1, thrice.stdout + thrice.stderr
    assert thrice.stdout.startswith("FLAKY ") and "not FAIL_TO_PASS any more" not in thrice.stdout
    assert f"flaky label(s): {WARM} (before: passed 2 of 3, after: passed 3 of 3)" in thrice.stdout
    assert _flaky_line(thrice.stdout).endswith(
        "0 hold, 0 failed, 1 with a flaky label; flaky tests: 1 in 1 instance(s)")


@pytest.mark.slow
def test_prepare_measures_flaky_labels_with_runs(make_repo, tmp_path: Path) -> None:
    repo, base, fix = bug_and_fix(make_repo, NEW_TESTS + WARM_TEST)
    mirrors = tmp_path / "mirrors"
    (mirrors / "fixture+calc").mkdir(parents=True)
    os.symlink(repo.path, mirrors / "fixture+calc" / "repo")
    pr = pr_from(repo, 2, base, fix)
    row = {"instance_id": "fixture__calc-2", "repo": "fixture/calc", "base_commit": base,
           "patch": pr.patch, "test_patch": pr.test_patch, "created_at": pr.created_at,
           "FAIL_TO_PASS": json.dumps([SPACES, WARM]), "PASS_TO_PASS": json.dumps([PLAIN])}
    published = tmp_path / "published.jsonl"
    published.write_text(json.dumps(row) + "\n")
    out = tmp_path / "prepared.jsonl"

    def prepare(runs: int) -> tuple[dict, str]:
        done = run_cli("prepare", str(published), "--out", str(out), "--mirrors", str(mirrors),
                       "--refdb", str(tmp_path / "ref.sqlite"), "--runs", str(runs))
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(out.read_text().splitlines()[-1])["prepare"], done.stdout

    once, summary = prepare(1)  # one run per side: the label reproduces
    assert once["status"] == "reproduced" and once["flaky"] == [], once
    assert _flaky_line(summary).endswith("flaky tests: 0 in 0 instance(s)")
    thrice, summary = prepare(3)  # more runs than the record had: prepared again
    assert thrice["runs"] == 3 and thrice["flaky"] == [WARM_COUNTS.model_dump()], thrice
    assert thrice["fail_to_pass"]["flaky"] == [WARM] and thrice["fail_to_pass"]["not_found"] == []
    assert thrice["fail_to_pass"]["reproduced"] == [SPACES] and thrice["status"] == "differs"
    assert thrice["pass_to_pass"]["reproduced"] == [PLAIN]
    assert _flaky_line(summary).endswith("flaky tests: 1 in 1 instance(s)")
