"""Limits per container, as a command meets them: memory, processes, disk, a command that
stops its own container, and processes left running. Each ends in one line of `contained` and
the container (or, once stopped, the engine) is left clean. A real Docker engine."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from benchsmith.core import BenchsmithError
from benchsmith.sandbox.docker.base import docker_client
from benchsmith.sandbox.docker.config import DockerSandboxConfig, size_bytes
from benchsmith.sandbox.docker.sandbox import DockerSandbox

pytestmark = pytest.mark.docker


@pytest.fixture
def small() -> Iterator[DockerSandbox]:
    sandbox = DockerSandbox(DockerSandboxConfig(cpus=1, memory="256m", pids_limit=64, disk="64m"))
    sandbox.setup_python("3.11")
    yield sandbox
    sandbox.close()


def processes(box: DockerSandbox) -> int:
    """Processes in the container apart from its init and sleeper (session 1) and the
    counting command's own sessions (its wrapper's and its own); asked until the count holds
    still (killed processes take a moment to go)."""
    count = ("ps -eo sid=,args= | awk -v me=$$ -v wrapper=$(ps -o sid= -p $PPID | tr -d ' ') "
             "'$1 != 1 && $1 != me && $1 != wrapper' | wc -l")
    seen = [-1]
    for _ in range(20):
        last = (box.exec(count, timeout=60).output.strip().splitlines() or ["-1"])[-1]
        seen.append(int(last) if last.isdigit() else -1)  # "fork: retry" lines: not yet
        if seen[-1] >= 0 and seen[-1] == seen[-2]:
            break
        time.sleep(0.5)
    return seen[-1]


def test_a_command_past_the_memory_limit_is_killed_and_said_so(small: DockerSandbox) -> None:
    result = small.exec("python -c 'x = []\nwhile True: x.append(bytearray(10**7))'", timeout=120)
    assert not result.ok
    assert any("out of memory" in line for line in result.contained), result.output[-300:]
    assert small.exec("echo still here").output.strip() == "still here"


def test_a_fork_bomb_meets_the_process_limit_and_leaves_nothing(small: DockerSandbox) -> None:
    result = small.exec("bomb() { bomb | bomb & }; bomb; sleep 5", timeout=20)
    assert any("process limit" in line for line in result.contained), result.contained
    assert processes(small) <= 1
    assert small.exec("true").ok


def test_a_command_that_fills_the_disk_is_killed(small: DockerSandbox) -> None:
    result = small.exec("for i in $(seq 1 40); do head -c 8000000 /dev/zero > /tmp/f$i; "
                        "sleep 0.2; done", timeout=120)
    assert "the disk limit was reached: the command was killed" in result.contained
    assert not result.ok
    # a command that writes past the limit faster than it is looked at is caught when it ends
    fast = small.exec("for i in $(seq 1 12); do head -c 8000000 /dev/zero > /tmp/g$i; done", timeout=60)
    assert fast.contained == ["the disk limit was reached: the command wrote past it"], fast.contained
    # one file may not grow past the limit either: Python gets EFBIG ("File too large")
    big = small.exec("python -c \"open('/tmp/one', 'wb').write(bytes(80 * 2**20))\"", timeout=60)
    assert "File too large" in big.output and not big.ok


def test_a_command_that_kills_everything_stops_only_its_own_container(small: DockerSandbox) -> None:
    result = small.exec("kill -9 -1; sleep 5", timeout=60)
    assert result.returncode == -9
    assert result.contained == ["the command stopped its container (exit code 137)"]
    with pytest.raises(BenchsmithError, match="the container stopped"):
        small.exec("true")


def test_a_command_whose_processes_kill_their_parent_says_so(small: DockerSandbox) -> None:
    for command in ("python -c 'import os; os.kill(os.getppid(), 9)'; echo never",
                    "python -c 'import os; os.kill(os.getpid(), 9)'"):
        result = small.exec(command, timeout=60)
        assert result.returncode == 137 and "never" not in result.output
        assert result.contained == ["the command was killed (SIGKILL) from inside: a process of "
                                    "its own killed the test process or its parent"]
    assert small.exec("exit 3").contained == []  # an ordinary failure is no breakout


# Waits on the daemon's own pid until it runs `sleep`, which it does only after setsid: any
# `sleep` would match the container's own sleeper at once, and a daemon not yet out of the
# command's session when the command ends is (rightly) killed with it.
_DAEMON = ("setsid sh -c 'exec sleep 1000' >/dev/null 2>&1 < /dev/null & daemon=$!; "
           "while [ \"$(cat /proc/$daemon/comm 2>/dev/null)\" != sleep ]; do sleep 0.05; done")


def test_processes_left_running_are_killed_and_named_when_asked(small: DockerSandbox) -> None:
    # each command waits until its daemon runs: under load the sweep could come first
    started = small.exec(_DAEMON, sweep=True)
    assert started.ok
    assert started.contained == ["left 1 process(es) running after it ended, killed: sleep"]
    assert processes(small) == 0
    kept = small.exec(_DAEMON)
    assert kept.contained == [] and processes(small) == 1  # not asked: the daemon stays


def test_limits_that_make_no_sense_are_one_line() -> None:
    for bad, message in (({"memory": "lots"}, "not a size"), ({"disk": "1k"}, "too small"),
                         ({"cpus": 512.0}, "between 0.01 and"), ({"pids_limit": 2}, "at least 16")):
        with pytest.raises(ValueError, match=message):
            DockerSandboxConfig(**bad)  # type: ignore[arg-type]
    assert size_bytes("4g") == 4 * 2**30 and size_bytes("512M") == 512 * 2**20


def test_no_container_outlives_its_sandbox(small: DockerSandbox) -> None:
    client: Any = docker_client()
    small.exec("kill -9 -1", timeout=30)
    name = small.name
    small.close()
    assert not client.containers.list(all=True, filters={"name": name})
