"""One conformance suite, run against every sandbox backend (local and Docker).

The Docker cases are marked `docker`; they fail, not skip, when no engine is reachable
(deselect them with `-m "not docker"`).
"""

from __future__ import annotations

import _thread
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from benchsmith.core import BenchsmithError, Sandbox
from benchsmith.harness.testrun import crashed
from benchsmith.sandbox.config import LocalSandboxConfig
from benchsmith.sandbox.docker.base import docker_client
from benchsmith.sandbox.docker.config import DockerSandboxConfig
from benchsmith.sandbox.docker.sandbox import DockerSandbox
from benchsmith.sandbox.local import LocalSandbox

BACKENDS = [
    pytest.param("local", id="local"),
    pytest.param("docker", id="docker", marks=pytest.mark.docker),
]

MakeBox = Callable[..., Any]


@pytest.fixture(params=BACKENDS)
def make_box(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MakeBox]:
    """Factory: make_box(**config options) -> a sandbox of the parametrized backend."""
    boxes: list[Any] = []
    if request.param == "docker":
        docker_client()  # no engine: every Docker case fails here, loudly

    def make(**options: Any) -> Any:
        box: Any
        if request.param == "local":
            box = LocalSandbox(LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes"), **options))
        else:
            box = DockerSandbox(DockerSandboxConfig(**options))
        boxes.append(box)
        return box

    yield make
    for box in boxes:
        box.close()


@pytest.fixture
def box(make_box: MakeBox) -> Any:
    return make_box()


def _alive(box: Any, pid_file: str) -> bool:
    """True if the process whose pid is in `pid_file` runs (zombies do not count)."""
    result = box.exec(
        f"pid=$(cat {pid_file}); "
        'if [ -d /proc/$pid ] && ! grep -q "^State:.*Z" /proc/$pid/status; '
        "then echo alive; else echo dead; fi"
    )
    assert result.ok, result.output
    return result.output.strip() == "alive"


def test_is_a_sandbox(box: Any) -> None:
    assert isinstance(box, Sandbox)


def test_exec_reports_exit_code_and_combined_output(box: Any) -> None:
    result = box.exec("echo out; echo err >&2; exit 3")
    assert result.returncode == 3
    assert "out" in result.output and "err" in result.output
    assert not result.ok and not result.timed_out and result.duration_s > 0
    assert box.exec("true").ok


def test_exec_cwd_and_env_arguments(box: Any) -> None:
    result = box.exec("pwd; echo $GREETING", cwd="/tmp", env={"GREETING": "hello"})
    assert result.output.split() == ["/tmp", "hello"]


def test_timeout_kills_the_whole_process_group(box: Any) -> None:
    started = time.monotonic()
    result = box.exec("sleep 300 & echo $! > child.pid; wait", timeout=1)
    assert result.timed_out and not result.ok
    assert "timed out" in result.output
    assert time.monotonic() - started < 15
    time.sleep(0.2)
    assert not _alive(box, "child.pid")


def test_a_timed_out_command_is_interrupted_before_it_is_killed(box: Any) -> None:
    """SIGINT first, so a test runner can still write what it has (pytest's summary, its
    JUnit report); whatever ignores it is killed after the grace period."""
    started = time.monotonic()
    polite = box.exec("trap 'echo interrupted, results written; exit 5' INT; "
                      "for i in $(seq 600); do sleep 0.1; done", timeout=2)
    assert polite.timed_out and "interrupted, results written" in polite.output
    assert time.monotonic() - started < 15
    started = time.monotonic()
    stubborn = box.exec("trap '' INT; sleep 300 & echo $! > child.pid; wait", timeout=2)
    assert stubborn.timed_out and not stubborn.ok
    assert time.monotonic() - started < 30
    time.sleep(0.2)
    assert not _alive(box, "child.pid")


def test_a_stalled_command_is_killed_once_its_output_stops_growing(box: Any) -> None:
    started = time.monotonic()
    result = box.exec("for i in 1 2 3; do echo tick $i; sleep 0.5; done; sleep 300 & "
                      "echo $! > child.pid; wait", timeout=120, stall_timeout=2)
    assert result.stalled and not result.timed_out and not result.ok
    assert "tick 3" in result.output and "no new output for 2s" in result.output
    assert time.monotonic() - started < 15
    time.sleep(0.2)
    assert not _alive(box, "child.pid")
    steady = box.exec("for i in 1 2 3 4 5 6; do echo $i; sleep 0.6; done", stall_timeout=2)
    assert steady.ok and not steady.stalled  # slow but steady output is not a stall
    # Before the kill, Python gets SIGABRT: with the fault handler on, it says where it was stuck.
    stuck = box.exec("python3 -c 'import time\ndef waiting_here():\n    time.sleep(300)\nwaiting_here()'",
                     env={"PYTHONFAULTHANDLER": "1"}, timeout=120, stall_timeout=2)
    assert stuck.stalled and "Fatal Python error: Aborted" in stuck.output
    assert "in waiting_here" in stuck.output


def test_a_python_killed_by_a_signal_is_told_from_one_that_exits(box: Any) -> None:
    env = {"PYTHONFAULTHANDLER": "1"}
    aborted = box.exec("python3 -c 'import os; os.abort()'", env=env, timeout=60)
    segfault = box.exec("python3 -c 'import ctypes; ctypes.string_at(0)'", env=env, timeout=60)
    failed = box.exec("python3 -c 'raise SystemExit(\"Fatal Python error: no, a message\")'",
                      env=env, timeout=60)
    assert crashed(aborted) and crashed(segfault)
    assert not crashed(failed) and not failed.ok


def test_ctrl_c_during_a_command_kills_it(box: Any) -> None:
    box.exec("true")
    timer = threading.Timer(1, _thread.interrupt_main)
    timer.start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        box.exec("sleep 300 & echo $! > child.pid; wait", timeout=60)
    timer.join()
    assert time.monotonic() - started < 15
    time.sleep(0.2)
    assert not _alive(box, "child.pid")


def test_a_sandbox_closed_between_two_commands_starts_no_more(make_box: MakeBox,
                                                               tmp_path: Path) -> None:
    """Ctrl-C or a cancelled task closes sandboxes from another thread; a command the task
    asks for afterwards fails at once instead of running while the shutdown waits for it
    (a local environment kept in its own directory, as stored environments are, included)."""
    boxes = [make_box()]
    if isinstance(boxes[0], LocalSandbox):
        boxes.append(make_box(root=str(tmp_path / "kept")))
    for box in boxes:
        assert box.exec("true").ok
        closer = threading.Thread(target=box.close)
        closer.start()
        closer.join()
        started = time.monotonic()
        with pytest.raises(BenchsmithError, match="closed"):
            box.exec("sleep 20")
        assert time.monotonic() - started < 5


def test_background_leftovers_are_killed_after_the_command(box: Any) -> None:
    assert box.exec("sleep 300 > /dev/null 2>&1 & echo $! > bg.pid").ok
    time.sleep(0.2)
    assert not _alive(box, "bg.pid")


def test_files_round_trip_and_upload_a_tree(box: Any, tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "pkg" / "sub").mkdir(parents=True)
    (source / "pkg" / "a.txt").write_text("hello")
    (source / "pkg" / "sub" / "deep.bin").write_bytes(bytes(range(256)))
    (source / "link.txt").symlink_to("pkg/a.txt")
    single = tmp_path / "single.cfg"
    single.write_text("[x]\n")
    box.upload(source, box.workdir)
    box.upload(single, "conf/single.cfg")
    assert box.read_file("pkg/a.txt") == b"hello"
    assert box.read_file(f"{box.workdir}/pkg/sub/deep.bin") == bytes(range(256))
    assert box.read_file("link.txt") == b"hello"
    assert box.read_file("conf/single.cfg") == b"[x]\n"
    box.write_file("pkg/new/b.txt", b"world")
    assert box.exec("cat pkg/a.txt pkg/new/b.txt").output == "helloworld"
    assert box.exec("test -L link.txt").ok
    box.exec("printf made-inside > pkg/inside.txt")
    assert box.read_file("pkg/inside.txt") == b"made-inside"
    with pytest.raises(FileNotFoundError):
        box.read_file("pkg/missing.txt")


def test_secrets_do_not_reach_commands(make_box: MakeBox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret_should_not_leak")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    monkeypatch.setenv("MY_SETTING", "visible")
    box = make_box(pass_env=["MY_SETTING"], env={"EXTRA": "set-by-config"})
    output = box.exec("env").output
    assert "ghp_secret_should_not_leak" not in output
    assert "sk-should-not-leak" not in output
    assert "TZ=UTC" in output
    assert "MY_SETTING=visible" in output
    assert "EXTRA=set-by-config" in output


def test_setup_python_gives_a_venv_first_on_path(box: Any) -> None:
    assert "3.11" in box.available_pythons()
    box.setup_python("3.11")
    result = box.exec("command -v python; python -c 'import sys; print(sys.prefix, sys.version_info[:2])'")
    assert result.ok, result.output
    first, second = result.output.strip().splitlines()
    assert first == f"{box.venv}/bin/python"
    assert str(box.venv) in second and "(3, 11)" in second


def test_missing_python_is_a_clear_error(box: Any) -> None:
    with pytest.raises(BenchsmithError, match="Python 3.99 is not available"):
        box.setup_python("3.99")


def test_output_is_capped_keeping_the_tail(make_box: MakeBox) -> None:
    box = make_box(max_output_bytes=100_000)
    result = box.exec("head -c 1000000 /dev/zero | tr '\\0' x; echo; echo THE END")
    assert result.ok and result.truncated
    assert len(result.output) < 120_000
    assert result.output.startswith("xxx")
    assert "bytes of output cut" in result.output
    assert result.output.rstrip().endswith("THE END")


def test_close_removes_everything_and_is_idempotent(box: Any) -> None:
    assert box.exec("touch made-here").ok
    box.close()
    box.close()
    if isinstance(box, LocalSandbox):
        assert not box.root.exists()
    else:
        import docker.errors

        with pytest.raises(docker.errors.NotFound):
            docker_client().containers.get(box.name)


def test_uv_installs_from_the_index_through_the_ca_bundle(box: Any) -> None:
    box.setup_python("3.11")
    result = box.exec(
        "uv pip install --quiet --exclude-newer 2023-06-01 six && python -c 'import six; print(six.__version__)'",
        timeout=300,
    )
    assert result.ok, result.output
    assert result.output.strip().splitlines()[-1] == "1.16.0"
