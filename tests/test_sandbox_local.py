"""The local sandbox backend: exec, timeouts, files, isolation, cleanup."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from benchsmith.core import BenchsmithError
from benchsmith.sandbox import LocalSandboxConfig, make_sandbox
from benchsmith.sandbox.local import LocalSandbox


@pytest.fixture
def sandbox(tmp_path: Path):
    box = make_sandbox(LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")))
    yield box
    box.close()


def test_exec_reports_exit_code_and_output(sandbox) -> None:
    result = sandbox.exec("echo out; echo err >&2; exit 3")
    assert result.returncode == 3
    assert "out" in result.output and "err" in result.output
    assert not result.ok and not result.timed_out


def test_timeout_kills_the_whole_process_group(sandbox, tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    started = time.monotonic()
    result = sandbox.exec(f"sleep 300 & echo $! > {marker}; wait", timeout=1)
    assert result.timed_out and not result.ok
    assert time.monotonic() - started < 15
    child = int(marker.read_text())
    time.sleep(0.2)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    """True if `pid` runs (a killed child left unreaped as a zombie does not count)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def test_secrets_do_not_reach_commands(sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    result = sandbox.exec("env")
    assert "ghp_secret_should_not_leak" not in result.output
    assert "sk-should-not-leak" not in result.output
    assert "TZ=UTC" in result.output


def test_pass_env_names_variables_explicitly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SETTING", "visible")
    with LocalSandbox(LocalSandboxConfig(tmp_dir=str(tmp_path), pass_env=["MY_SETTING"])) as box:
        assert box.exec("echo $MY_SETTING").output.strip() == "visible"


def test_files_round_trip_and_upload(sandbox, tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "pkg").mkdir(parents=True)
    (source / "pkg" / "a.txt").write_text("hello")
    sandbox.upload(source, sandbox.workdir)
    assert sandbox.read_file("pkg/a.txt") == b"hello"
    sandbox.write_file("pkg/b.txt", b"world")
    assert sandbox.exec("cat pkg/a.txt pkg/b.txt").output == "helloworld"


def test_output_is_capped_keeping_the_tail(tmp_path: Path) -> None:
    with LocalSandbox(LocalSandboxConfig(tmp_dir=str(tmp_path), max_output_bytes=100_000)) as box:
        result = box.exec("python3 -c \"print('x' * 1_000_000); print('THE END')\"")
    assert result.truncated
    assert len(result.output) < 120_000
    assert result.output.rstrip().endswith("THE END")


def test_close_removes_everything(tmp_path: Path) -> None:
    box = LocalSandbox(LocalSandboxConfig(tmp_dir=str(tmp_path)))
    box.exec("touch made-here")
    root = box.root
    box.close()
    box.close()
    assert not root.exists()


def test_setup_python_creates_a_venv_first_on_path(sandbox) -> None:
    versions = sandbox.available_pythons()
    assert "3.11" in versions
    sandbox.setup_python("3.11")
    result = sandbox.exec("python -c 'import sys; print(sys.prefix, sys.version_info[:2])'")
    assert str(sandbox.venv) in result.output and "(3, 11)" in result.output


def test_missing_python_is_a_clear_error(sandbox) -> None:
    with pytest.raises(BenchsmithError, match="Python 3.99 is not available"):
        sandbox.setup_python("3.99")
