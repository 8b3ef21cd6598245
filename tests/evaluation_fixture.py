"""A self-built repository with two bugs, their gold fixes and gold tests, as task instances."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from benchsmith.evaluation.environment import Environments
from benchsmith.evaluation.run import EvalOptions, Evaluation
from benchsmith.instance import Prediction, TaskInstance
from benchsmith.sandbox import LocalSandboxConfig

from .conftest import PIN_DATE
from .test_setup_engine import PYPROJECT_TEST_EXTRA

CODE = '''\
def parse(text):
    return text.split(",")


def total(numbers):
    return sum(numbers)
'''
PARSE_FIXED = CODE.replace('return text.split(",")', 'return [part.strip() for part in text.split(",")]')
TOTAL_FIXED = CODE.replace("return sum(numbers)", "return sum(n for n in numbers if n is not None)")
TESTS = '''\
from calc import parse, total


def test_plain():
    assert parse("a,b") == ["a", "b"]


def test_total():
    assert total([1, 2]) == 3
'''
PARSE_TEST = TESTS + '''

def test_spaces():
    assert parse("a, b") == ["a", "b"]
'''
TOTAL_TEST = TESTS + '''

def test_total_skips_none():
    assert total([1, None]) == 1
'''
TEST_FILE = "tests/test_calc.py"
CODE_FILE = "src/calc/__init__.py"


def working_diff(repo: Path, files: dict[str, str]) -> str:
    """`git diff` of `files` written over HEAD (the tree is restored afterwards)."""
    for name, text in files.items():
        (repo / name).write_text(text)
    patch = subprocess.run(["git", "diff"], cwd=repo, capture_output=True, text=True, check=True).stdout
    subprocess.run(["git", "checkout", "--", "."], cwd=repo, check=True)
    return patch


def build_instances(make_repo: Any) -> tuple[Path, dict[str, TaskInstance]]:
    """(repository path, instances): fixture__calc-1 (parse keeps spaces), -2 (total and None)."""
    repo = make_repo("calc", {"pyproject.toml": PYPROJECT_TEST_EXTRA, CODE_FILE: CODE,
                              TEST_FILE: TESTS})
    base = repo.commit({"README.md": "calc\n"}, date="2023-05-10T12:00:00+00:00")
    common = {"repo": "fixture/calc", "base_commit": base, "python": "3.11",
              "exclude_newer": f"{PIN_DATE}T00:00:00Z", "runner": "pytest",
              "created_at": "2023-05-15T10:00:00+00:00",
              "install": ["uv pip install -e '.[test]'"],
              "test": [f"python -m pytest -rA -v -p no:cacheprovider {TEST_FILE}"]}
    instances = {
        "fixture__calc-1": TaskInstance(
            instance_id="fixture__calc-1", **common,
            patch=working_diff(repo.path, {CODE_FILE: PARSE_FIXED}),
            test_patch=working_diff(repo.path, {TEST_FILE: PARSE_TEST}),
            FAIL_TO_PASS=[f"{TEST_FILE}::test_spaces"],
            PASS_TO_PASS=[f"{TEST_FILE}::test_plain", f"{TEST_FILE}::test_total"]),
        "fixture__calc-2": TaskInstance(
            instance_id="fixture__calc-2", **common,
            patch=working_diff(repo.path, {CODE_FILE: TOTAL_FIXED}),
            test_patch=working_diff(repo.path, {TEST_FILE: TOTAL_TEST}),
            FAIL_TO_PASS=[f"{TEST_FILE}::test_total_skips_none"],
            PASS_TO_PASS=[f"{TEST_FILE}::test_plain", f"{TEST_FILE}::test_total"]),
    }
    return repo.path, instances


def write_instances(path: Path, instances: dict[str, TaskInstance]) -> Path:
    """The instances as SWE-bench JSONL (lists JSON-encoded, as SWE-bench stores them)."""
    lines = []
    for instance in instances.values():
        record = instance.model_dump()
        record["FAIL_TO_PASS"] = json.dumps(record["FAIL_TO_PASS"])
        record["PASS_TO_PASS"] = json.dumps(record["PASS_TO_PASS"])
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")
    return path


def evaluator(repo: Path, tmp_path: Path, mode: str, run_id: str = "run",
              tests: dict[str, Prediction] | None = None, timeout: float = 300) -> Evaluation:
    """An in-process evaluation on the local backend."""
    environments = Environments(LocalSandboxConfig(), {"fixture/calc": str(repo)}, timeout=timeout)
    options = EvalOptions(mode=mode, run_dir=tmp_path / "runs" / run_id, timeout_s=timeout)  # type: ignore[arg-type]
    return Evaluation(options, environments, tests)


def prediction(instance_id: str, patch: str, model: str = "model") -> Prediction:
    """A prediction in SWE-bench's format."""
    return Prediction(instance_id=instance_id, model_name_or_path=model, model_patch=patch)


def published_file(repo: Path, tmp_path: Path, name: str, row: dict[str, object]) -> tuple[Path, Path]:
    """A published JSONL file of one instance of the repository at `repo`, mirrored as
    fixture/<name> (its defaults under `row`); (file, mirrors)."""
    mirrors = tmp_path / "mirrors"
    (mirrors / f"fixture+{name}").mkdir(parents=True)
    os.symlink(repo, mirrors / f"fixture+{name}" / "repo")
    published = tmp_path / "published.jsonl"
    published.write_text(json.dumps({"repo": f"fixture/{name}", "created_at": "2023-05-15T10:00:00Z",
                                     "version": "0.1", "problem_statement": "spaces", **row}) + "\n")
    return published, mirrors
