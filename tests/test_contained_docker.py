"""Predictions that break out of their limits, evaluated for real on the Docker backend: each
one carries the gold fix (so its tests would pass) plus code that fork-bombs, allocates without
end, fills the disk, kills its parent or every process of its container, or leaves a daemon
behind. Each is
graded a failure with its reason, the run goes on, nothing is left behind, and the other
predictions' results are the same as in a run without them."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from benchsmith.evaluation.environment import Environments
from benchsmith.evaluation.run import EvalOptions, Evaluation
from benchsmith.sandbox import DockerSandboxConfig

from .evaluation_fixture import CODE_FILE, PARSE_FIXED, build_instances, prediction, working_diff

pytestmark = [pytest.mark.slow, pytest.mark.docker]

LIMITS = DockerSandboxConfig(cpus=1, memory="512m", pids_limit=128, disk="200m")
# Code each hostile prediction adds to the gold fix's module: it runs when the tests import it.
HOSTILE = {
    "forkbomb": ("import os, time\n"
                 "while True:\n"
                 "    try:\n"
                 "        if os.fork() == 0:\n"
                 "            time.sleep(60); os._exit(0)\n"
                 "    except OSError:\n"
                 "        break\n"),
    "memory": "_hog = []\nwhile True:\n    _hog.append(bytearray(10 ** 7))\n",
    "disk": ("import os\n"
             "for _i in range(200):\n"
             "    with open(f'/tmp/fill-{os.getpid()}-{_i}', 'wb') as _f:\n"
             "        _f.write(bytes(8 * 2 ** 20))\n"),
    "killall": "import os, signal\nos.kill(-1, signal.SIGKILL)\n",
    "killparent": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n",
    "daemon": ("import subprocess\n"
               "subprocess.Popen(['sleep', '300'], start_new_session=True,\n"
               "                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"),
}
REASONS = {
    "forkbomb": "process limit",
    "memory": "out of memory",
    "disk": "the disk limit was reached",
    "killall": "stopped its container",
    "killparent": "killed",  # the test process's parent: benchsmith's watcher or the shell
    "daemon": "left 1 process(es) running after it ended, killed: sleep",
}


def run_files(run_dir: Path) -> str:
    """What a run wrote, for the message of a failed assertion."""
    return "\n".join(f"--- {p}\n{p.read_text(errors='replace')[-3000:]}"
                     for p in sorted(run_dir.rglob("*")) if p.is_file())


def mine(client: object) -> list[object]:
    """This process's containers (another benchsmith run may share the engine)."""
    labels = {"label": ["benchsmith=1", f"benchsmith.owner={socket.gethostname()}:{os.getpid()}"]}
    for _ in range(50):  # containers are removed in the background
        found = client.containers.list(all=True, filters=labels)  # type: ignore[attr-defined]
        if not found:
            break
        time.sleep(0.2)
    return found


def test_hostile_predictions_fail_with_a_reason_and_leave_nothing(make_repo, tmp_path: Path) -> None:
    from benchsmith.sandbox.docker.base import docker_client
    from benchsmith.sandbox.store import instance_name

    client = docker_client()
    repo, instances = build_instances(make_repo)
    calc1 = instances["fixture__calc-1"]
    volumes = {v.name for v in client.volumes.list()}
    predictions = [prediction(calc1.instance_id, calc1.patch, "gold"),
                   prediction(calc1.instance_id, "", "empty")]
    predictions += [prediction(calc1.instance_id,
                               working_diff(repo, {CODE_FILE: PARSE_FIXED + "\n" + code}), name)
                    for name, code in HOSTILE.items()]
    environments = Environments(LIMITS, {"fixture/calc": str(repo)}, timeout=600)
    try:
        alone = Evaluation(EvalOptions(mode="fix", run_dir=tmp_path / "alone", timeout_s=300,
                                       stall_timeout_s=60), environments)
        [gold_alone] = alone.run({calc1.instance_id: calc1}, predictions[:1])
        started = time.monotonic()
        evaluation = Evaluation(EvalOptions(mode="fix", run_dir=tmp_path / "all", jobs=2,
                                            timeout_s=300, stall_timeout_s=60), environments)
        reports = {r.model: r for r in evaluation.run({calc1.instance_id: calc1}, predictions)}
        elapsed = time.monotonic() - started
    finally:
        environments.close()
        client.images.remove(instance_name(calc1.repo, calc1.base_commit), force=True)
    assert gold_alone.resolved, run_files(tmp_path / "alone")
    gold = reports["gold"]
    assert gold.resolved and not gold.contained
    assert gold.fix and gold_alone.fix
    assert gold.fix.FAIL_TO_PASS == gold_alone.fix.FAIL_TO_PASS
    assert gold.fix.PASS_TO_PASS == gold_alone.fix.PASS_TO_PASS
    assert reports["empty"].empty_patch and not reports["empty"].resolved
    for name, reason in REASONS.items():
        report = reports[name]
        assert not report.resolved and not report.infrastructure_failure, (name, report)
        assert any(reason in line for line in report.contained), (name, report.contained)
    assert elapsed < 600  # within the time limits: nothing waited for a whole timeout
    assert mine(client) == []
    assert {v.name for v in client.volumes.list()} == volumes
