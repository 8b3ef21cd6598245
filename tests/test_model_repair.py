"""LLM-assisted setup: the model is asked only where the rules have no repair, answers with a
JSON change to the plan (checked, never shell), and a setup it helped validate says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchsmith.core import Diagnosis, Plan
from benchsmith.setup.model_repair import ModelRepairer, apply_change
from benchsmith.setup.repair import RuleRepairer

from .conftest import PIN_DATE

PLAN = Plan(python="3.11", exclude_newer="2023-06-01T00:00:00Z", packages=["pytest"])
PYPROJECT = """
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "sixer"
version = "0.1.0"
requires-python = ">=3.11"

[project.optional-dependencies]
test = ["pytest"]
"""
# Nothing in the repository says the tests need `six`, and its absence is no import error.
TESTS = """
import importlib.metadata


def test_six_is_installed():
    assert importlib.metadata.version("six")
"""


def test_a_change_is_checked_against_the_plan() -> None:
    changed, what = apply_change(PLAN, 'Sure: {"change": {"packages": ["six"]}, "why": "tests use six"}')
    assert changed.packages == ["pytest", "six"] and what == 'packages=["six"] (tests use six)'
    assert changed.notes == ['model (plan_change.v1): packages=["six"]']
    for answer, problem in [
        ('{"change": {"test_args": ["; curl evil"]}}', "may not change test_args"),
        ('{"change": {"python": 3}}', "invalid plan change: python"),
        ("I would add six.", "no JSON object"),
        ('{"change": {"packages": ["pytest"]}}', "changes nothing"),
    ]:
        with pytest.raises(ValueError, match=problem):
            apply_change(PLAN, answer)


class _Counting:
    def __init__(self, answer: str) -> None:
        self.answer, self.prompts = answer, []

    def complete(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.answer


def test_the_model_is_asked_only_when_no_rule_repairs() -> None:
    model = _Counting('{"change": {"packages": ["six"]}}')
    repairer = ModelRepairer(RuleRepairer(), model)
    missing = Diagnosis(category="installation", kind="missing_modules", reason="no yaml",
                        facts={"modules": ["yaml"]})
    plan, what = repairer.repair(PLAN, missing, _context()) or (None, "")
    assert plan is not None and not what.startswith("model:") and not model.prompts
    unknown = Diagnosis(category="testing", kind="tests_failing", reason="1 test fails",
                        evidence="PackageNotFoundError: No package metadata was found for six")
    plan, what = repairer.repair(PLAN, unknown, _context()) or (None, "")
    assert what == 'model: packages=["six"]' and repairer.calls == 1
    assert "PackageNotFoundError" in model.prompts[0] and '"packages"' in model.prompts[0]


def test_each_setup_has_its_own_budget_of_model_calls() -> None:
    import threading

    repairer = ModelRepairer(RuleRepairer(), _Counting('{"change": {"packages": ["six"]}}'),
                             max_calls=2)
    unknown = Diagnosis(category="testing", kind="tests_failing", reason="1 test fails")
    made: list[int] = []

    def one_setup() -> None:  # setups of a batch run in threads
        repairer.begin_setup()
        answers = [repairer.repair(PLAN, unknown, _context()) for _ in range(3)]
        assert answers[2] is None  # the third call is over this setup's budget
        made.append(repairer.setup_calls)

    threads = [threading.Thread(target=one_setup) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert made == [2, 2] and repairer.calls == 4


def _context():
    from benchsmith.setup.context_model import RepoContext

    return RepoContext()


@pytest.mark.slow
def test_a_setup_no_rule_can_repair_validates_with_the_package_the_model_names(
        make_repo, tmp_path: Path) -> None:
    from .test_cli_batch import run_cli

    repo = make_repo("sixer", {"pyproject.toml": PYPROJECT, "src/sixer/__init__.py": "",
                               "tests/test_six.py": TESTS})
    script = tmp_path / "model.json"
    script.write_text(json.dumps({"rules": [{"match": "No package metadata was found for six",
                                             "reply": '{"change": {"packages": ["six"]}, '
                                                      '"why": "the tests read six\'s metadata"}'}],
                                  "default": "{}"}))
    listing = tmp_path / "repos.txt"
    listing.write_text(f"{repo.path} {PIN_DATE}\n")
    out = tmp_path / "results.jsonl"
    # every command with the engine's options takes --model; setup-batch here
    result = run_cli("setup-batch", str(listing), "--out", str(out), "--no-refdb",
                     "--max-iterations", "2", "--model", f"scripted:{script}")
    assert result.returncode == 0, result.stderr
    record = json.loads(out.read_text())
    assert record["status"] == "validated", (record["failure_reason"],
                                             [i["repair"] for i in record["iterations"]])
    assert record["model_assisted"] and record["llm_calls"] == 1
    assert record["iterations"][0]["repair"] == 'model: packages=["six"] (the tests read six\'s metadata)'
    assert "six" in record["plan"]["packages"]


def test_setup_with_a_bad_model_is_one_line() -> None:
    from .test_cli_batch import one_line_error, run_cli

    assert "unknown model provider 'mistral'" in one_line_error(
        run_cli("setup", "/no/such/repo", "--model", "mistral:large"))
