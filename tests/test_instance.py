"""One task-instance model: SWE-bench records in and out, test specs rendered once, and instances
written by benchsmith 0.1.0 (a rendered command, no spec) still read."""

from __future__ import annotations

import json
from pathlib import Path

from benchsmith.core import Plan
from benchsmith.evaluation.inputs import load_instances
from benchsmith.harness.render import instance_spec, plan_spec, render, render_spec
from benchsmith.instance import TaskInstance, TestSpec

# The shape `benchsmith build` 0.1.0 wrote (lists JSON-encoded, the test command rendered).
LEGACY = {
    "instance_id": "o__r-7", "repo": "o/r", "base_commit": "abc123", "patch": "p", "test_patch": "t",
    "problem_statement": "it breaks", "hints_text": "", "created_at": "2024-09-06T10:48:32-04:00",
    "version": "3.3", "FAIL_TO_PASS": '["tests/test_a.py::test_x"]',
    "PASS_TO_PASS": '["tests/test_a.py::test_y"]', "environment_setup_commit": "abc123",
    "install": ["uv pip install --exclude-newer 2024-09-06T00:00:00Z -e . pytest"],
    "test": ["PYTHONWARNINGS=ignore python -m pytest -rA -p no:cacheprovider -p no:randomly "
             "-o addopts= -n auto tests/test_a.py tests/test_b.py"],
    "test_files": ["tests/test_a.py", "tests/test_b.py"], "python": "3.11",
    "exclude_newer": "2024-09-06T00:00:00Z", "runner": "pytest", "image": None, "flaky": [],
    "FAIL_TO_FAIL": [], "PASS_TO_FAIL": [], "issue_numbers": [3], "problem_source": "commit",
    "instance_s": 1.0, "tests_s": 0.5,
}


def test_swe_bench_records_round_trip_with_their_encoding_and_extra_fields() -> None:
    record = {**LEGACY, "difficulty": "15 min fix"}
    instance = TaskInstance.model_validate(record)
    assert instance.FAIL_TO_PASS == ["tests/test_a.py::test_x"]
    written = instance.to_record()
    assert written["FAIL_TO_PASS"] == '["tests/test_a.py::test_x"]'
    assert written["difficulty"] == "15 min fix"
    assert TaskInstance.model_validate(json.loads(instance.to_json())) == instance


def test_published_instances_without_environment_fields_read() -> None:
    instance = TaskInstance.model_validate({"instance_id": "a__b-1", "repo": "a/b",
                                            "base_commit": "f" * 40, "FAIL_TO_PASS": "[]",
                                            "created_at": "2023-02-01T10:00:00Z"})
    assert instance.test == [] and instance.test_spec is None
    assert instance.pin() == "2023-02-01T00:00:00Z"


def test_a_legacy_instance_gets_its_spec_from_the_rendered_command_once(tmp_path: Path) -> None:
    path = tmp_path / "instances.jsonl"
    path.write_text(json.dumps(LEGACY) + "\n")
    instances, problems = load_instances(path)
    assert not problems
    spec = instance_spec(instances["o__r-7"])
    assert spec == TestSpec(args=["-p", "no:randomly", "-o", "addopts=", "-n", "auto"],
                            env={"PYTHONWARNINGS": "ignore"},
                            files=["tests/test_a.py", "tests/test_b.py"])
    # Rendered again as this version renders (-v names tests as they start).
    assert render_spec(spec) == LEGACY["test"][0].replace(" -rA ", " -rap -v ")


def test_a_plans_spec_runs_other_files_with_the_plans_options() -> None:
    plan = Plan(python="3.11", exclude_newer="2024-01-01T00:00:00Z",
                test_args=["-m", "not network", "tests/unit", "--strict-markers"],
                ini_overrides={"addopts": ""}, disabled_plugins=["randomly"], env={"TZ": "UTC"})
    assert render(plan)[1] == ["TZ=UTC python -m pytest -rap -v -p no:cacheprovider -p no:randomly "
                               "-o addopts= -m 'not network' tests/unit --strict-markers"]
    spec = plan_spec(plan, ["tests/test_x.py"])
    assert spec.args == ["-m", "not network", "--strict-markers"]  # the plan's own paths left out
    assert render_spec(spec) == ("TZ=UTC python -m pytest -rap -v -p no:cacheprovider -p no:randomly "
                                 "-o addopts= -m 'not network' --strict-markers tests/test_x.py")
    unittest = plan_spec(plan.model_copy(update={"runner": "unittest"}), ["pkg/tests/test_a.py"])
    assert render_spec(unittest) == "TZ=UTC python -m unittest -v pkg.tests.test_a"
