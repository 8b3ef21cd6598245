"""Hung and offline tests never sink a setup: a run that stops making progress is stopped after
the stall limit (the hung test named, recorded and left out of one rerun), and tests that try to
reach the network are recorded as needs_network and not counted."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from benchsmith.harness.behaviour import run_instance_tests
from benchsmith.harness.checkout import materialize, resolve
from benchsmith.harness.patches import split_patch
from benchsmith.harness.render import plan_spec, render_install
from benchsmith.sandbox import LocalSandboxConfig, make_sandbox

from .conftest import PIN_DATE
from .test_setup_engine import CALC, CALC_TESTS, PYPROJECT_TEST_EXTRA, engine

pytestmark = pytest.mark.slow

DEADLOCK = """
import threading


def test_before():
    assert True


def test_deadlock():
    lock = threading.Lock()
    lock.acquire()
    lock.acquire()  # never returns


def test_after():
    assert True
"""

BLOCKED_COLLECTION = """
import socket

server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen()
server.accept()  # waits for a peer that never comes, like a test-data download


def test_never_collected():
    assert True
"""
# Before the fix, `wait` is missing and the test module's stand-in spins forever.
WAIT_TESTS = """
import time

try:
    from calc import wait
except ImportError:
    def wait():
        while True:
            time.sleep(1)


def test_wait():
    assert wait() == 1


def test_quick():
    assert True
"""
STALL_S = 5


def test_a_deadlocked_test_costs_the_stall_limit_and_one_rerun(make_repo, tmp_path: Path) -> None:
    repo = make_repo("deadlock", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                                  "tests/test_calc.py": CALC_TESTS, "tests/test_lock.py": DEADLOCK})
    record = engine(tmp_path, stall_timeout_s=STALL_S).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert record.hung == ["tests/test_lock.py::test_deadlock"]
    assert len(record.iterations) == 1 and record.iterations[0].hung == record.hung
    assert "--deselect tests/test_lock.py::test_deadlock" in record.test[0]
    assert record.plan is not None and record.plan.deselect == record.hung
    names = {t.name for t in record.tests.tests}
    assert "tests/test_lock.py::test_after" in names and "tests/test_lock.py::test_deadlock" not in names
    tests = [c for c in record.iterations[0].commands if c.phase == "test"]
    assert len(tests) == 2 and tests[0].duration_s < STALL_S + 30  # stalled, then the rerun


def test_a_module_whose_collection_blocks_is_named_and_left_out(make_repo, tmp_path: Path) -> None:
    repo = make_repo("blocked", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                                 "tests/test_calc.py": CALC_TESTS, "tests/test_data.py": BLOCKED_COLLECTION})
    started = time.monotonic()
    record = engine(tmp_path, stall_timeout_s=STALL_S).setup(str(repo.path), on_date=PIN_DATE)
    # The fault handler's traceback (SIGABRT before the kill) names the module being imported.
    assert record.status == "validated", record.failure_reason
    assert record.hung == ["tests/test_data.py"]
    assert "--ignore=tests/test_data.py" in record.test[0]
    assert len(record.iterations) == 1
    assert time.monotonic() - started < 300


def test_a_conftest_that_blocks_fails_fast_with_a_stall_diagnosis(make_repo, tmp_path: Path) -> None:
    repo = make_repo("blocked", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                                 "tests/test_calc.py": CALC_TESTS, "tests/conftest.py": BLOCKED_COLLECTION})
    started = time.monotonic()
    record = engine(tmp_path, stall_timeout_s=STALL_S).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "failed" and record.failure_category == "testing"
    assert "stopped making progress" in (record.failure_reason or "")
    assert len(record.iterations) == 1  # no rule repairs a hang: no Python switching
    assert time.monotonic() - started < 300


def test_a_test_that_hangs_before_the_fix_is_fail_to_pass(make_repo, tmp_path: Path) -> None:
    repo = make_repo("hangfix", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                                 "tests/test_calc.py": CALC_TESTS})
    record = engine(tmp_path, stall_timeout_s=STALL_S).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated" and record.plan is not None
    fixed = repo.commit({"src/calc/__init__.py": CALC + "\n\ndef wait():\n    return 1\n",
                         "tests/test_wait.py": WAIT_TESTS}, "fix the hang", date="2023-05-02T12:00:00+00:00")
    diff = subprocess.run(["git", "diff", f"{fixed}~1", fixed], cwd=repo.path, check=True,
                          capture_output=True, text=True).stdout
    patch, test_patch = split_patch(diff)
    checkout = resolve(str(repo.path), rev=f"{fixed}~1")
    sandbox = make_sandbox(LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")))
    try:
        sandbox.upload(materialize(checkout, tmp_path / "src" / "repo"), sandbox.workdir)
        sandbox.setup_python(record.plan.python)
        for command in render_install(record.plan, apt=False):
            assert sandbox.exec(command, env={"UV_EXCLUDE_NEWER": record.plan.exclude_newer}).ok
        started = time.monotonic()
        behaviour = run_instance_tests(sandbox, plan_spec(record.plan, []), patch, test_patch,
                                       runs=2, timeout=600, stall_timeout=STALL_S)
    finally:
        sandbox.close()
    assert behaviour.error is None, behaviour.error
    assert behaviour.FAIL_TO_PASS == ["tests/test_wait.py::test_wait"]
    assert "tests/test_wait.py::test_quick" in behaviour.PASS_TO_PASS
    assert behaviour.before[0].hung == ["tests/test_wait.py::test_wait"]
    assert behaviour.before[1].hung == behaviour.before[0].hung  # not waited for twice
    assert time.monotonic() - started < 2 * STALL_S + 120


ABORTING_TEST = """
import os


def test_first():
    assert True


def test_native_crash():
    os.abort()  # what a C extension does when it cannot start (a GUI toolkit without a display)


def test_last():
    assert True
"""
# Importing the module crashes the interpreter, as a broken C extension does at import.
CRASHING_IMPORT = """
import ctypes

ctypes.string_at(0)


def test_never_collected():
    assert True
"""


def test_tests_that_kill_the_test_process_are_named_left_out_and_recorded(make_repo, tmp_path: Path) -> None:
    repo = make_repo("crash", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                               "tests/test_calc.py": CALC_TESTS, "tests/test_abort.py": ABORTING_TEST,
                               "tests/test_native.py": CRASHING_IMPORT})
    lines: list[str] = []
    started = time.monotonic()
    crashing = engine(tmp_path, stall_timeout_s=60)
    crashing.progress = lines.append
    record = crashing.setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert len(record.iterations) == 1
    assert sorted(record.crashed) == ["tests/test_abort.py::test_native_crash", "tests/test_native.py"]
    assert sorted(record.hung) == sorted(record.crashed)
    assert "--deselect tests/test_abort.py::test_native_crash" in record.test[0]
    assert "--ignore=tests/test_native.py" in record.test[0]
    names = {t.name for t in record.tests.tests}
    assert {"tests/test_abort.py::test_first", "tests/test_abort.py::test_last"} <= names
    assert any("crashed: tests/test_native.py" in line for line in lines)
    tests = [c for c in record.iterations[0].commands if c.phase == "test"]
    assert len(tests) == 3  # collection crashed, then the test crashed, then the clean run
    assert time.monotonic() - started < 60  # never waited for the stall limit


NETWORK_TESTS = """
import urllib.request


def test_download():
    urllib.request.urlopen("http://data.example.invalid/sample.csv", timeout=5)


def test_api():
    urllib.request.urlopen("http://api.example.invalid/v1", timeout=5)
"""


def test_tests_that_need_the_network_are_recorded_not_counted(make_repo, tmp_path: Path) -> None:
    repo = make_repo("online", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                                "tests/test_calc.py": CALC_TESTS, "tests/test_online.py": NETWORK_TESTS})
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated" and record.pass_rate == 1.0
    assert record.needs_network == ["tests/test_online.py::test_api", "tests/test_online.py::test_download"]
    only = make_repo("offline", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                                 "tests/test_online.py": NETWORK_TESTS})
    failed = engine(tmp_path).setup(str(only.path), on_date=PIN_DATE)
    assert failed.status == "failed" and failed.failure_category == "testing"
    assert (failed.failure_reason or "").startswith("every test that ran needs the network (2 tests")
    assert len(failed.iterations) == 1


DOWNLOAD = """
import time
import urllib.request


def fetch_test_file(name):
    # retried with growing delays, as test-data helpers do
    for delay in (20, 40, 80, 160):
        try:
            return urllib.request.urlopen("http://127.0.0.1:9/" + name, timeout=5).read()
        except OSError:
            time.sleep(delay)
"""
PLAIN_AND_ONLINE = """
from calc.download import fetch_test_file


def test_plain():
    assert True


def test_online():
    assert fetch_test_file("series.dcm")
"""
FETCHING_MODULE = """
from calc.download import fetch_test_file

DATA = fetch_test_file("{name}.dcm")


def test_never_collected():
    assert DATA
"""


def test_modules_that_wait_on_the_network_at_import_are_found_together(make_repo, tmp_path: Path) -> None:
    """One stalled collection shows network code (a download helper's retries): every module
    whose import waits the same way is found in one probe and left out, recorded as needing
    the network; a test stalled the same way is recorded so too, a merely slow import is only
    hung; the other tests validate."""
    files = {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
             "src/calc/download.py": DOWNLOAD, "tests/test_calc.py": CALC_TESTS,
             "tests/test_plain.py": PLAIN_AND_ONLINE}
    files |= {f"tests/test_{n}.py": FETCHING_MODULE.format(name=n) for n in ("ct", "mr", "us")}
    # slow to import, but not waiting on another host: not one of them
    files["tests/test_heavy.py"] = "import time\n\ntime.sleep(12)\n\n\ndef test_heavy():\n    assert True\n"
    repo = make_repo("fetching", files)
    started = time.monotonic()
    record = engine(tmp_path, stall_timeout_s=STALL_S).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    fetching = {"tests/test_ct.py", "tests/test_mr.py", "tests/test_us.py"}
    online = "tests/test_plain.py::test_online"
    assert set(record.hung) == fetching | {"tests/test_heavy.py", online}
    assert set(record.needs_network) == fetching | {online}
    assert all(f"--ignore={m}" in record.test[0] for m in fetching)
    assert record.tests.PASSED == 5 and len(record.iterations) == 1
    tests = [c for c in record.iterations[0].commands if c.phase == "test"]
    # stalled in test_ct (the probe finds the other two), in test_heavy, in test_online, then
    # the clean run
    assert len(tests) == 4
    assert time.monotonic() - started < 240


def test_more_hung_tests_than_a_run_leaves_out_fail_the_run_with_the_last_named(make_repo, tmp_path: Path) -> None:
    sleepers = "import time\n" + "".join(f"\n\ndef test_sleep_{n}():\n    time.sleep(600)\n" for n in range(5))
    repo = make_repo("sleepers", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                                  "tests/test_calc.py": CALC_TESTS, "tests/test_sleep.py": sleepers})
    record = engine(tmp_path, stall_timeout_s=STALL_S, max_iterations=0).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "failed"
    assert record.hung == [f"tests/test_sleep.py::test_sleep_{n}" for n in range(4)]
    assert "more tests hang than a run leaves out (3); the last was tests/test_sleep.py::test_sleep_3" \
        in (record.failure_reason or "")
    assert record.needs_network == []


def test_an_old_pytest_that_captures_its_collection_still_names_the_stalled_module(tmp_path: Path) -> None:
    """pytest 6 captures descriptor 2 while it collects, where the fault handler would write;
    the test environment's fault handler writes to a copy taken at start-up instead."""
    from benchsmith.harness.testrun import run_tests

    project = tmp_path / "old"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_calc.py").write_text("def test_one():\n    assert True\n")
    (project / "tests" / "test_data.py").write_text(BLOCKED_COLLECTION)
    sandbox = make_sandbox(LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")))
    try:
        sandbox.upload(project, sandbox.workdir)
        sandbox.setup_python("3.9")
        assert sandbox.exec("uv pip install pytest==6.2.4", timeout=300).ok

        def commands(left_out: list[str]) -> list[str]:
            return ["python -m pytest -rA -v -p no:cacheprovider tests"
                    + "".join(f" --ignore={m}" for m in left_out)]

        run = run_tests(sandbox, commands, "pytest", timeout=300, stall_timeout=STALL_S)
        assert run.hung == ["tests/test_data.py"]
        assert run.passed("tests/test_calc.py::test_one") and len(run.commands) == 2
        # nothing changes for a process without the variable
        assert sandbox.exec("python -c 'import faulthandler; print(faulthandler.is_enabled())'",
                            timeout=60).output.strip() == "False"
    finally:
        sandbox.close()
