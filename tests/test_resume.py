"""Every batch command resumes from its output file the same way: answered inputs are skipped
with one "skipped N already done" line, and --retry-failed redoes those that failed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import PIN_DATE
from .evaluation_fixture import build_instances, write_instances
from .test_cli_batch import run_cli
from .test_setup_engine import CALC, CALC_TESTS, PYPROJECT_TEST_EXTRA

OK = ' && echo "Setup successful" || echo "Setup failed"'


def _skip_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in result.stderr.splitlines() if line.startswith("skipped ")]
    assert len(lines) == 1, result.stderr
    return lines[0]


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_mine_skips_mined_repositories_and_retries_failed_ones(make_repo, tmp_path: Path) -> None:
    good = make_repo("good", {"calc.py": "A = 1\n"})
    repos = tmp_path / "repos.txt"
    repos.write_text(f"{good.path} fixture/good\n{tmp_path / 'no-such-clone'} fixture/gone\n")
    out = tmp_path / "prs.jsonl"
    log = out.with_name("prs.jsonl.repos.jsonl")
    first = run_cli("mine", str(repos), "--from-git", "--out", str(out))
    assert first.returncode == 0, first.stderr
    assert [bool(r["error"]) for r in _lines(log)] == [False, True]
    again = run_cli("mine", str(repos), "--from-git", "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert _skip_line(again) == "skipped 2 already done (--retry-failed redoes the 1 that failed)"
    assert "mining" not in again.stderr and len(_lines(log)) == 2
    retried = run_cli("mine", str(repos), "--from-git", "--out", str(out), "--retry-failed")
    assert _skip_line(retried) == "skipped 1 already done (--retry-failed: redoing the 1 that failed)"
    assert "mining fixture/gone" in retried.stderr and "mining fixture/good" not in retried.stderr
    assert len(_lines(log)) == 3


@pytest.mark.slow
def test_setup_batch_skips_answered_lines_and_retries_failed_ones(make_repo, tmp_path: Path) -> None:
    good = make_repo("good", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                              "tests/test_calc.py": CALC_TESTS})
    listing = tmp_path / "repos.txt"
    listing.write_text(f"{good.path}\n{tmp_path / 'no-such-repo'}\n")
    out = tmp_path / "results.jsonl"
    args = ("setup-batch", str(listing), "--date", PIN_DATE, "--out", str(out))
    first = run_cli(*args)
    assert first.returncode == 0, first.stderr
    assert sorted(str(r["status"]) for r in _lines(out)) == ["error", "validated"]
    again = run_cli(*args)
    assert again.returncode == 0, again.stderr
    assert _skip_line(again) == "skipped 2 already done (--retry-failed redoes the 1 that failed)"
    assert len(_lines(out)) == 2
    retried = run_cli(*args, "--retry-failed")
    assert retried.returncode == 0, retried.stderr
    assert _skip_line(retried) == "skipped 1 already done (--retry-failed: redoing the 1 that failed)"
    records = _lines(out)
    assert len(records) == 3 and records[-1]["status"] == "error"  # only the failed line again


@pytest.mark.slow
def test_evaluate_reuses_reports_and_retries_the_failed_one(make_repo, tmp_path: Path) -> None:
    repo, instances = build_instances(make_repo)
    file = write_instances(tmp_path / "instances.jsonl", instances)
    predictions = tmp_path / "predictions.jsonl"
    calc1 = instances["fixture__calc-1"]
    predictions.write_text("".join(json.dumps(p) + "\n" for p in (
        {"instance_id": calc1.instance_id, "model_name_or_path": "m", "model_patch": calc1.patch},
        {"instance_id": "fixture__calc-2", "model_name_or_path": "m",
         "model_patch": "--- a/nothing.py\n+++ b/nothing.py\n@@ -1 +1 @@\n-x\n+y\n"})))
    args = ("evaluate", str(file), "--predictions", str(predictions), "--source",
            f"fixture/calc={repo}", "--out", str(tmp_path / "runs"), "--run-id", "r")
    first = run_cli(*args)
    assert first.returncode == 0, first.stderr
    assert "skipped" not in first.stderr
    report, resolved = (tmp_path / f"runs/r/m/fixture__calc-{n}/report.json" for n in (2, 1))
    assert "does not apply" in json.loads(report.read_text())["error"]
    written, kept = report.stat().st_mtime_ns, resolved.stat().st_mtime_ns
    again = run_cli(*args)
    assert _skip_line(again) == "skipped 2 already done (--retry-failed redoes the 1 that failed)"
    assert report.stat().st_mtime_ns == written and "installing" not in again.stderr
    retried = run_cli(*args, "--retry-failed")
    assert _skip_line(retried) == "skipped 1 already done (--retry-failed: redoing the 1 that failed)"
    assert report.stat().st_mtime_ns != written and resolved.stat().st_mtime_ns == kept


@pytest.mark.docker
def test_setupbench_run_skips_answered_tasks_and_retries_failed_ones(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(t) + "\n" for t in (
        {"instance_id": "passes", "task_type": "dbsetup", "success_command": "true" + OK},
        {"instance_id": "fails", "task_type": "dbsetup", "success_command": "false" + OK})))
    out = tmp_path / "r.jsonl"

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([sys.executable, "-m", "benchsmith.cli", "setupbench", "run",
                               str(tasks), "--agent", "noop", "--out", str(out), *extra],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        return done

    run()
    assert {r["instance_id"]: r["verdict"] for r in _lines(out)} == {"passes": "success",
                                                                      "fails": "failed"}
    again = run()
    assert _skip_line(again) == "skipped 2 already done (--retry-failed redoes the 1 that failed)"
    assert len(_lines(out)) == 2
    retried = run("--retry-failed")
    assert _skip_line(retried) == "skipped 1 already done (--retry-failed: redoing the 1 that failed)"
    assert [r["instance_id"] for r in _lines(out)] == ["passes", "fails", "fails"]
