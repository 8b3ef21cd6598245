"""The executor interface without a cluster: local threads, and the reference plans a remote
task answers from (they must agree with the database they were taken from)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from benchsmith.core import BenchsmithError, Plan
from benchsmith.executor import ExecutorConfig, Resources, TaskOutcome, make_executor
from benchsmith.executor import parse_executor as parse
from benchsmith.setup.refdb import ReferenceDB, ReferencePlans


def test_reference_plans_answer_as_the_database_does(tmp_path: Path) -> None:
    db = ReferenceDB(tmp_path / "ref.sqlite")
    for commit, day in (("a" * 40, "2021-01-01"), ("b" * 40, "2022-06-01"), ("c" * 40, "2023-03-01")):
        db.save("o/r", commit, day, Plan(python="3.11", exclude_newer=f"{day}T00:00:00Z"), [], [], 1.0)
    db.save("o/other", "d" * 40, "2022-06-02", Plan(python="3.10", exclude_newer="x"), [], [], 1.0)
    plans = ReferencePlans(db.of_repo("o/r"))
    assert len(plans.specs) == 3
    for day in ("2020-01-01", "2022-05-01", "2022-11-01", "2024-01-01"):
        assert [s.commit for s in plans.nearest("o/r", day, limit=2)] == \
            [s.commit for s in db.nearest("o/r", day, limit=2)]
    plans.save("o/r", "e" * 40, "2022-05-02", Plan(python="3.12", exclude_newer="y"), ["i"], ["t"], 0.97)
    assert plans.nearest("o/r", "2022-05-01", limit=1)[0].commit == "e" * 40
    db.store(plans.saved[0])
    assert db.nearest("o/r", "2022-05-01", limit=1)[0].python == "3.12"


def test_local_executor_hands_outcomes_to_the_driver_thread() -> None:
    driver = threading.current_thread()
    seen: list[tuple[str, int | None, bool]] = []

    def square(value: int, cancelled: threading.Event) -> int:
        return value * value

    def on_outcome(outcome: TaskOutcome[int]) -> None:
        seen.append((outcome.key, outcome.value, threading.current_thread() is driver))

    executor = make_executor(ExecutorConfig(jobs=3))
    assert not executor.remote
    executor.run(square, [(str(n), n) for n in range(6)], Resources(), on_outcome)
    assert sorted(seen) == [(str(n), n * n, True) for n in range(6)]


def test_ctrl_c_in_the_driver_cancels_and_calls_the_cleanup() -> None:
    interrupted: list[bool] = []

    def wait(value: int, cancelled: threading.Event) -> bool:
        return value == 0 or cancelled.wait(30)  # the slow one ends when cancelled

    def on_outcome(outcome: TaskOutcome[bool]) -> None:
        raise KeyboardInterrupt

    executor = make_executor(ExecutorConfig(jobs=2))
    with pytest.raises(KeyboardInterrupt):
        executor.run(wait, [("quick", 0), ("slow", 1)],
                     Resources(), on_outcome, lambda: interrupted.append(True))
    assert interrupted == [True]


def test_a_local_task_past_its_limit_is_stopped_and_recorded(tmp_path: Path) -> None:
    """A thread cannot be killed, its commands can: the running command is cut at the limit,
    no later one starts, and the task is an error whatever it returned."""
    from benchsmith.sandbox import LocalSandboxConfig
    from benchsmith.sandbox.local import LocalSandbox

    def work(seconds: int, cancelled: threading.Event) -> str:
        with LocalSandbox(LocalSandboxConfig(tmp_dir=str(tmp_path))) as box:
            for _ in range(50):  # one long command, then many more: none may start late
                result = box.exec(f"sleep {seconds}")
                if seconds < 1:
                    return "done"
            return result.output

    outcomes: dict[str, TaskOutcome[str]] = {}
    started = time.monotonic()
    make_executor(ExecutorConfig(jobs=2, task_timeout_s=3)).run(
        work, [("endless", 120), ("quick", 0)], Resources(),
        lambda outcome: outcomes.setdefault(outcome.key, outcome))
    assert time.monotonic() - started < 30
    assert outcomes["quick"].value == "done" and outcomes["quick"].error is None
    assert outcomes["endless"].value is None
    assert "exceeded the wall-clock limit of 3s" in (outcomes["endless"].error or "")


@pytest.mark.slow
def test_setup_batch_records_a_repository_past_the_task_timeout(make_repo, tmp_path: Path) -> None:
    from .conftest import PIN_DATE
    from .test_cli_batch import run_cli
    from .test_setup_engine import CALC, PYPROJECT_TEST_EXTRA

    slow = make_repo("slow", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                              "tests/test_calc.py": "import time\n\n\ndef test_wait():\n"
                                                    "    time.sleep(900)\n"})
    listing = tmp_path / "repos.txt"
    listing.write_text(f"{slow.path}\n")
    out = tmp_path / "results.jsonl"
    started = time.monotonic()
    done = run_cli("setup-batch", str(listing), "--date", PIN_DATE, "--out", str(out),
                   "--task-timeout", "25")
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 200
    [record] = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["status"] == "error" and record["failure_category"] == "infrastructure"
    assert "exceeded the wall-clock limit of 25s" in record["failure_reason"]
    # the round that ran is kept (no further round started past the limit)
    assert record["commit"] and len(record["iterations"]) == 1 and record["python"]


def test_unknown_executor_is_named() -> None:
    assert parse("ray") == "ray" and parse("local") == "local"
    with pytest.raises(BenchsmithError, match="available executors are: local, ray"):
        parse("dask")
