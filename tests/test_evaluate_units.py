"""Grading rules, infrastructure checks and input formats of the evaluation, without sandboxes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchsmith.core import BenchsmithError
from benchsmith.evaluation.fix import grade
from benchsmith.evaluation.inputs import load_instances, load_predictions
from benchsmith.evaluation.models import FixOutcome, TestOutcome
from benchsmith.evaluation.swt import grade_tests
from benchsmith.harness.testrun import TestRun, infrastructure_problem
from benchsmith.instance import Prediction, TaskInstance, TestSpec

INSTANCE = TaskInstance(instance_id="o__r-1", repo="o/r", base_commit="abc", test=["pytest"],
                        FAIL_TO_PASS='["t::f2p_a", "t::f2p_b"]', PASS_TO_PASS=["t::p2p"])


@pytest.mark.parametrize(
    ("statuses", "resolution"),
    [
        ({"t::f2p_a": "PASSED", "t::f2p_b": "PASSED", "t::p2p": "PASSED"}, "FULL"),
        ({"t::f2p_a": "PASSED", "t::f2p_b": "XFAIL", "t::p2p": "PASSED"}, "FULL"),
        ({"t::f2p_a": "PASSED", "t::f2p_b": "SKIPPED", "t::p2p": "PASSED"}, "PARTIAL"),
        ({"t::f2p_a": "PASSED", "t::p2p": "PASSED"}, "PARTIAL"),  # missing counts as failing
        ({"t::f2p_a": "PASSED", "t::f2p_b": "PASSED", "t::p2p": "FAILED"}, "NO"),
        ({"t::f2p_a": "FAILED", "t::f2p_b": "ERROR", "t::p2p": "PASSED"}, "NO"),
    ],
)
def test_swe_bench_grading(statuses: dict[str, str], resolution: str) -> None:
    outcome = FixOutcome()
    grade(outcome, INSTANCE, TestRun(statuses=statuses))
    assert outcome.resolution == resolution


def test_new_and_edited_tests_are_graded_against_the_fix() -> None:
    before = TestRun(statuses={"t.py::old": "PASSED", "t.py::edited[1]": "FAILED",
                               "t.py::added": "FAILED", "t.py::flat": "FAILED"})
    after = TestRun(statuses={"t.py::old": "PASSED", "t.py::edited[1]": "PASSED",
                              "t.py::added": "PASSED", "t.py::flat": "FAILED"})
    baseline = (TestRun(statuses={"t.py::old": "PASSED", "t.py::edited[1]": "PASSED",
                                  "t.py::via_fixture": "PASSED"}),
                TestRun(statuses={"t.py::old": "PASSED", "t.py::edited[1]": "PASSED",
                                  "t.py::via_fixture": "FAILED"}))
    before.statuses["t.py::via_fixture"] = "FAILED"  # a changed fixture makes it fail first
    after.statuses["t.py::via_fixture"] = "PASSED"
    outcome = TestOutcome()
    grade_tests(outcome, before, after, baseline, {"t.edited"})
    assert outcome.new_tests == ["t.py::edited[1]", "t.py::added", "t.py::flat", "t.py::via_fixture"]
    assert outcome.FAIL_TO_PASS == ["t.py::edited[1]", "t.py::added", "t.py::via_fixture"]
    assert outcome.FAIL_TO_FAIL == ["t.py::flat"]
    assert outcome.fail_to_pass and not outcome.success  # a new test still fails after the fix
    outcome = TestOutcome()
    grade_tests(outcome, before, after, baseline, {"t.edited"}, known_failing={"t.py::flat"})
    assert outcome.success and outcome.known_failing == ["t.py::flat"]
    outcome = TestOutcome()  # unchanged existing tests that behave as before are not the prediction's
    grade_tests(outcome, before, after, (before, after), set())
    assert outcome.new_tests == []


@pytest.mark.parametrize(
    ("returncode", "tests", "output", "expected"),
    [
        (127, {}, "bash: pytest: command not found", "did not run"),
        (4, {}, "ERROR: usage: pytest [options]", "did not run"),
        (0, {}, "", "no test results"),
        (2, {}, "ERROR collecting tests/test_x.py\nImportError", None),
        (0, {"a": "FAILED"}, "", "exit status 0 but 1 test(s) failed"),
        (1, {"a": "PASSED"}, "", "exit status 1 but no test failed"),
        (1, {"a": "PASSED", "b": "FAILED"}, "", None),
        (0, {"a": "PASSED"}, "", None),
    ],
)
def test_infrastructure_problems(returncode: int, tests: dict[str, str], output: str,
                                 expected: str | None) -> None:
    problem = infrastructure_problem(returncode, False, tests, output, "pytest")
    assert (problem is None) if expected is None else (expected in (problem or ""))


def test_a_timeout_is_charged_to_the_code() -> None:
    assert infrastructure_problem(-9, True, {}, "", "pytest") is None


def test_prediction_files_in_every_swe_bench_shape(tmp_path: Path) -> None:
    instances = {"o__r-1": INSTANCE}
    record = {"instance_id": "o__r-1", "model_name_or_path": "org/model v2", "model_patch": "x"}
    shapes = {"list.json": json.dumps([record]), "one.json": json.dumps(record),
              "by-id.json": json.dumps({"o__r-1": {"model_patch": "x", "model_name_or_path": "m"}}),
              "lines.jsonl": json.dumps(record) + "\n\n"}
    for name, text in shapes.items():
        (tmp_path / name).write_text(text)
        predictions, problems = load_predictions(str(tmp_path / name), instances, "fix")
        assert problems == [] and [p.model_patch for p in predictions] == ["x"], name
    assert Prediction(instance_id="a", model_name_or_path="org/model v2").model == "model_v2"
    gold, _ = load_predictions("gold", {"o__r-1": INSTANCE.model_copy(update={"test_patch": "T"})},
                               "test")
    assert gold[0].model_patch == "T" and gold[0].model == "gold"


def test_instance_files_report_each_bad_record(tmp_path: Path) -> None:
    path = tmp_path / "instances.jsonl"
    path.write_text("\n".join([
        json.dumps({"instance_id": "o__r-1", "repo": "o/r", "base_commit": "a", "test": ["pytest"]}),
        json.dumps({"instance_id": "o__r-2", "repo": "o/r"}),
        json.dumps({"instance_id": "o__r-3", "repo": "o/r", "base_commit": "a", "test": ["pytest"],
                    "FAIL_TO_PASS": "not json"}),
        "[1, 2]",
    ]) + "\n")
    instances, problems = load_instances(path)
    assert list(instances) == ["o__r-1"]
    assert problems[0].startswith("instances.jsonl:2: invalid instance: base_commit")
    assert problems[1].startswith("instances.jsonl:3: invalid instance")
    assert problems[2] == "instances.jsonl:4: not a JSON object"
    with pytest.raises(BenchsmithError, match="instances file not found"):
        load_instances(tmp_path / "missing.jsonl")


def test_test_commands_are_wrapped_in_coverage(tmp_path: Path) -> None:
    from benchsmith.evaluation.covrun import CoverageRunner, _usable
    from benchsmith.sandbox import LocalSandboxConfig, make_sandbox

    assert _usable(["7.2.7", "False", "True"]) and not _usable(["4.5.4", "False", "False"])
    assert not _usable([])
    with make_sandbox(LocalSandboxConfig()) as sandbox:
        runner = CoverageRunner.__new__(CoverageRunner)
        runner.sandbox, runner.prefix, runner.pytest_cov, runner.xdist = sandbox, "", True, True
        spec = TestSpec(args=["-n", "auto"], env={"A": "1"})
        wrapped = runner.command(spec, ["tests/t.py"], "model-fixed", ["pkg/x.py"])
        assert wrapped == ("A=1 python -m coverage run --rcfile=../benchsmith-cov/model-fixed.rc "
                           "-m pytest -rap -v -p no:cacheprovider -n auto tests/t.py --no-cov -n 0")
        rc = sandbox.read_file("../benchsmith-cov/model-fixed.rc").decode()
        assert "include =\n    pkg/x.py\n" in rc and "dynamic_context = test_function" in rc
        runner.prefix = "PYTHONPATH=/tools "
        assert runner.command(TestSpec(args=["-q"]), ["t.py"], "n", ["x.py"]).startswith(
            "PYTHONPATH=/tools python -m coverage run --rcfile=../benchsmith-cov/n.rc -m pytest")
        assert runner.command(TestSpec(runner="unittest"), ["a/b.py"], "u", ["x.py"]).endswith(
            "-m unittest -v a.b")


@pytest.mark.slow
def test_a_second_coverage_runner_in_an_environment_reuses_the_first_ones_probe() -> None:
    from benchsmith.evaluation.covrun import PROBE_CACHE, REPORT_SCRIPT, CoverageRunner
    from benchsmith.sandbox import LocalSandboxConfig, make_sandbox

    with make_sandbox(LocalSandboxConfig()) as sandbox:
        commands: list[str] = []
        run = sandbox.exec

        def counted(command: str, **kwargs):
            commands.append(command)
            return run(command, **kwargs)

        sandbox.exec = counted  # type: ignore[method-assign]
        first = CoverageRunner(sandbox, "")
        assert first.available, first.error
        probed = len(commands)
        assert probed >= 3  # setup, probes (and here an install of coverage next to the checkout)
        assert sandbox.read_file(PROBE_CACHE).decode().split("\n")[1] == " ".join(
            [first.version, str(first.pytest_cov), str(first.xdist)])
        second = CoverageRunner(sandbox, "")
        assert len(commands) == probed + 1  # only the setup command, which read the cache
        assert (second.available, second.prefix, second.version) == (True, first.prefix, first.version)
        assert sandbox.read_file(REPORT_SCRIPT).decode() == (
            Path(__file__).parents[1] / "src/benchsmith/evaluation/covreport.py").read_text() + "\n"
