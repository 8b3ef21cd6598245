"""Ctrl-C and SIGTERM in the middle of a setup leave no sandbox, process or half-written record."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import PIN_DATE
from .test_sandbox_local import _alive
from .test_setup_engine import CALC, PYPROJECT_TEST_EXTRA

pytestmark = pytest.mark.slow


def slow_repo(make_repo, marker: Path):
    return make_repo("sleepy", {
        "pyproject.toml": PYPROJECT_TEST_EXTRA,
        "src/calc/__init__.py": CALC,
        "tests/test_sleep.py": f"""
            import os, time

            def test_sleeps():
                with open({str(marker)!r}, "w") as handle:
                    handle.write(str(os.getpid()))
                time.sleep(120)
        """,
    })


def start_and_interrupt(args: list[str], tmp: Path, marker: Path, signum: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.Popen([sys.executable, "-m", "benchsmith.cli", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not marker.exists() or not marker.read_text():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the test never started"
        time.sleep(0.2)
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_setup_cleans_up(make_repo, tmp_path: Path, signum: int) -> None:
    marker = tmp_path / "started"
    repo = slow_repo(make_repo, marker)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "setup.json"
    result = start_and_interrupt(["setup", str(repo.path), "--date", PIN_DATE, "--out", str(out)],
                                 tmp, marker, signum)
    assert result.returncode == 130, result.stderr
    assert "interrupted" in result.stderr and "Traceback" not in result.stderr
    assert not out.exists()
    assert list(tmp.iterdir()) == []
    assert not _alive(int(marker.read_text()))


def test_interrupted_batch_keeps_finished_records(make_repo, tmp_path: Path) -> None:
    quick = make_repo("quick", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                                "tests/test_ok.py": "def test_ok():\n    assert True\n"})
    marker = tmp_path / "started"
    repo = slow_repo(make_repo, marker)
    listing = tmp_path / "repos.txt"
    listing.write_text(f"{quick.path}\n{repo.path}\n")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "results.jsonl"
    result = start_and_interrupt(["setup-batch", str(listing), "--date", PIN_DATE, "--out", str(out)],
                                 tmp, marker, signal.SIGTERM)
    assert result.returncode == 130, result.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == 1 and '"status":"validated"' in lines[0]
    assert list(tmp.iterdir()) == []
    assert not _alive(int(marker.read_text()))


def test_an_interrupted_build_writes_nothing_for_the_pr_it_was_in(make_repo, tmp_path: Path) -> None:
    from .test_mining_build import BUGGY, FIXED, NEW_TESTS, OLD_TESTS, pr_from

    marker = tmp_path / "started"
    sleeper = f"""

def test_sleeps():
    import os, time

    with open({str(marker)!r}, "w") as handle:
        handle.write(str(os.getpid()))
    time.sleep(120)
"""
    repo = make_repo("calc", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": BUGGY,
                              "tests/test_calc.py": OLD_TESTS})
    base = repo.commit({"README.md": "calc\n"}, date="2023-05-10T12:00:00+00:00")
    # the PR's own test sleeps: the build is interrupted in its before-fix run
    fix = repo.commit({"src/calc/__init__.py": FIXED, "tests/test_calc.py": NEW_TESTS + sleeper},
                      "Strip spaces (#2)", date="2023-05-16T12:00:00+00:00")
    prs = tmp_path / "prs.jsonl"
    prs.write_text(pr_from(repo, 2, base, fix, issue_numbers=[1]).model_dump_json() + "\n")
    out = tmp_path / "instances.jsonl"
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    result = start_and_interrupt(["build", str(prs), "--out", str(out), "--refdb",
                                  str(tmp_path / "ref.sqlite")], tmp, marker, signal.SIGINT)
    assert result.returncode == 130, result.stderr
    assert "interrupted" in result.stderr and "Traceback" not in result.stderr
    log = tmp_path / "instances.log.jsonl"
    assert not log.exists() or log.read_text() == ""  # no outcome: a re-run tries the PR again
    assert not out.exists() or out.read_text() == ""
    assert list(tmp.iterdir()) == []
    assert not _alive(int(marker.read_text()))
