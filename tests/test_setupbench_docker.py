"""The setup-agent benchmark end to end through the CLI, in real containers from the bare
Debian stand-in for ubuntu:22.04: oracle passes and noop fails on our own tasks, a repository
task on a self-built repository, a hanging agent stopped at the limit, per-task errors that let
the run go on, and no container left after an interrupted run (which then resumes)."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from benchsmith.sandbox.docker.base import docker_client
from benchsmith.sandbox.docker.rootfs import BARE_ROOTFS_IMAGE

from .conftest import RepoBuilder

pytestmark = pytest.mark.docker
OK = ' && echo "Setup successful" || echo "Setup failed"'


def _cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchsmith.cli", "setupbench", *args],
                          capture_output=True, text=True, timeout=timeout)


def _tasks(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def _results(path: Path) -> dict[str, dict[str, Any]]:
    return {r["instance_id"]: r for r in map(json.loads, path.read_text().splitlines())}


def test_check_proves_a_builtin_database_task_oracle_passes_noop_fails(tmp_path: Path) -> None:
    out = tmp_path / "check.jsonl"
    done = _cli("check", "--builtin", "--instance-ids", "db-redis-seed", "--runs", "1", "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1/1 task(s) pass check" in done.stdout
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert {(r["agent"], r["verdict"]) for r in results} == {("oracle", "success"), ("noop", "failed")}
    noop = next(r for r in results if r["agent"] == "noop")
    # Pulled where a registry answers, else the bare stand-in, and said which.
    assert noop["image"] in ("ubuntu:22.04", BARE_ROOTFS_IMAGE), noop
    assert noop["image"] == "ubuntu:22.04" or "standing in for ubuntu:22.04" in noop["image_note"]
    assert noop["harness_s"] < 15, noop


def test_builtin_service_and_dependency_conflict_tasks_pass_with_the_oracle(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    done = _cli("run", "--builtin", "--agent", "oracle", "--instance-ids", "bg-supervisor-gunicorn",
                "--instance-ids", "dep-pip-conflict", "--out", str(out), "--agent-timeout", "600", "--jobs", "2")
    assert done.returncode == 0, done.stderr
    verdicts = {iid: (r["verdict"], r["reason"]) for iid, r in _results(out).items()}
    assert verdicts == {"bg-supervisor-gunicorn": ("success", ""),
                        "dep-pip-conflict": ("success", "")}
    assert "dep-pip-conflict: success [agent " in done.stderr  # progress lines, no markup left


AGENT = """#!/bin/bash
set -e
grep -q "install the tool" "$SETUPBENCH_PROBLEM_FILE"
[ -n "$SETUPBENCH_PROBLEM_STATEMENT" ]
install -m 755 /testbed/tool.sh /usr/local/bin/tool
export AGENT_EXPORT=1
nohup sleep 321 >/dev/null 2>&1 &
echo '{"steps": 3, "tokens": 42}' > "$SETUPBENCH_METRICS_FILE"
"""


def test_repository_task_on_a_self_built_repository(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "mirrors" / "fixture+tool" / "repo")
    base = repo.commit({"tool.sh": "#!/bin/sh\necho v1\n"}, "v1")
    repo.commit({"tool.sh": "#!/bin/sh\necho v2\n"}, "v2")  # after base_commit: must not show
    (tmp_path / "fixtures" / "tool").mkdir(parents=True)
    (tmp_path / "fixtures" / "tool" / "config.txt").write_text("from the fixture folder\n")
    alive = ("(for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done "
             "| grep -q '^sleep 321')")
    tasks = _tasks(tmp_path / "tasks.jsonl", [{
        "instance_id": "tool", "task_type": "reposetup", "repo_url": "https://github.com/fixture/tool",
        "base_commit": base, "fixtures": "tool", "problem_statement": "Please install the tool.",
        "pre_runner": "echo ran > /var/tmp/pre-ran",
        "solution": "install -m 755 /testbed/tool.sh /usr/local/bin/tool; export AGENT_EXPORT=1; "
                    "nohup sleep 321 >/dev/null 2>&1 &",
        # a fresh login shell: the agent's exports are gone, its background process is not
        "success_command": '[ "$(tool)" = v1 ] && [ -f /var/tmp/pre-ran ] && '
                           '[ -f /testbed/config.txt ] && [ -z "$AGENT_EXPORT" ] && ' + alive + OK}])
    agent = tmp_path / "agent.sh"
    agent.write_text(AGENT)
    agent.chmod(agent.stat().st_mode | stat.S_IXUSR)
    for name in ("oracle", str(agent), "noop"):
        out = tmp_path / f"{agent.name if name == str(agent) else name}.jsonl"
        done = _cli("run", str(tasks), "--agent", name, "--mirrors", str(tmp_path / "mirrors"),
                    "--out", str(out))
        assert done.returncode == 0, done.stderr
        result = _results(out)["tool"]
        assert result["verdict"] == ("failed" if name == "noop" else "success"), result
        if name == str(agent):
            assert result["metrics"] == {"steps": 3, "tokens": 42}
            assert result["agent_exit_code"] == 0
            assert Path(result["logs"]["agent"]).is_file()


PYPROJECT = """\
[build-system]
requires = ["flit_core>=3.2,<4"]
build-backend = "flit_core.buildapi"

[project]
name = "greeting"
version = "0.1"
description = "says hello"
"""


@pytest.mark.slow
def test_the_benchsmith_agent_gives_the_named_images_python(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "mirrors" / "fixture+greeting" / "repo")
    base = repo.commit({"pyproject.toml": PYPROJECT,
                        "greeting.py": '"""Says hello."""\nHELLO = "hello"\n'}, "greeting")
    # ubuntu:22.04's python3 is 3.10; the Debian 12 stand-in's apt gives 3.11
    version = "python3 -c 'import sys; print(sys.version_info[:2])'"
    tasks = _tasks(tmp_path / "tasks.jsonl", [{
        "instance_id": "greeting", "task_type": "reposetup", "base_image": "ubuntu:22.04",
        "repo_url": "https://github.com/fixture/greeting", "base_commit": base,
        "problem_statement": "Install greeting system-wide.",
        "success_command": f'[ "$({version})" = "(3, 10)" ] && cd / && '
                           "python3 -c 'import greeting' && python -c 'import greeting' && "
                           "pip --version | grep -q 'python 3.10'" + OK}])
    out = tmp_path / "r.jsonl"
    done = _cli("run", str(tasks), "--agent", "benchsmith", "--mirrors",
                str(tmp_path / "mirrors"), "--agent-timeout", "900", "--out", str(out), timeout=1200)
    assert done.returncode == 0, done.stderr
    result = _results(out)["greeting"]
    assert result["verdict"] == "success", (result, Path(result["logs"]["success"]).read_text())
    python = result["metrics"]["python"]
    assert python["python"] == "3.10" and python["image"] == "ubuntu:22.04", python
    if result["image"] == BARE_ROOTFS_IMAGE:
        assert python["provided"] and python["apt_python"] == "3.11", python
        assert "standing in" in python["reason"], python


def test_a_hanging_agent_is_stopped_at_the_limit(tmp_path: Path) -> None:
    tasks = _tasks(tmp_path / "t.jsonl", [{"instance_id": "hang", "task_type": "dbsetup",
                                           "success_command": "test -f /tmp/never" + OK}])
    out = tmp_path / "r.jsonl"
    started = time.monotonic()
    done = _cli("run", str(tasks), "--agent", "sleep 600", "--agent-timeout", "4", "--out", str(out))
    assert done.returncode == 0, done.stderr
    result = _results(out)["hang"]
    assert result["timed_out"] and result["verdict"] == "failed", result
    assert "stopped at the 4 s limit" in result["reason"]
    assert result["agent_s"] < 20 and time.monotonic() - started < 120


def test_task_problems_are_one_line_and_an_error_result_each(tmp_path: Path) -> None:
    tasks = _tasks(tmp_path / "t.jsonl", [
        {"instance_id": "no-command", "problem_statement": "x"},
        {"instance_id": "no-fixture", "success_command": "true", "fixtures": "absent"},
        {"instance_id": "no-image", "success_command": "true",
         "base_image": "benchsmith-test/no-such-image:1"},
        {"instance_id": "fine", "success_command": "true" + OK}])
    out = tmp_path / "r.jsonl"
    done = _cli("run", str(tasks), "--agent", "noop", "--out", str(out))
    assert done.returncode == 0, done.stderr
    results = _results(out)
    assert {iid: r["verdict"] for iid, r in results.items()} == {
        "no-command": "error", "no-fixture": "error", "no-image": "error", "fine": "success"}
    assert "no success_command" in results["no-command"]["reason"]
    assert "fixture folder" in results["no-fixture"]["reason"]
    assert "no local stand-in" in results["no-image"]["reason"]
    assert "Traceback" not in done.stderr
    not_executable = tmp_path / "agent.sh"
    not_executable.write_text("#!/bin/sh\ntrue\n")
    out2 = tmp_path / "r2.jsonl"
    done = _cli("run", str(tasks), "--agent", str(not_executable), "--instance-ids", "fine",
                "--out", str(out2))
    assert done.returncode == 0, done.stderr
    result = _results(out2)["fine"]
    assert result["verdict"] == "error" and "could not run" in result["reason"], result


def _owned_by(pid: int) -> list[Any]:
    owner = f"{socket.gethostname()}:{pid}"
    return [c for c in docker_client().containers.list(all=True, filters={"label": "benchsmith=1"})
            if c.labels.get("benchsmith.owner") == owner]


def test_an_interrupted_run_leaves_no_container_and_resumes(tmp_path: Path) -> None:
    tasks = _tasks(tmp_path / "t.jsonl", [
        {"instance_id": "fast", "success_command": "true" + OK},
        {"instance_id": "slow", "success_command": "true" + OK}])
    out = tmp_path / "r.jsonl"
    agent = '[ "$SETUPBENCH_INSTANCE_ID" = slow ] && sleep 600; true'
    command = [sys.executable, "-m", "benchsmith.cli", "setupbench", "run", str(tasks),
               "--agent", agent, "--out", str(out)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (out.exists() and _owned_by(proc.pid)):
            time.sleep(0.5)
        assert _owned_by(proc.pid), "the slow task's container never started"
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
    assert proc.returncode != 0
    assert not _owned_by(proc.pid), stderr
    assert set(_results(out)) == {"fast"}
    done = _cli("run", str(tasks), "--agent", "noop", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "skipped 1 already done" in done.stderr
    assert set(_results(out)) == {"fast", "slow"}
