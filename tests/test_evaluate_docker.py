"""Evaluation on the Docker backend: the instance image is made once and reused."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsmith.core import Sandbox
from benchsmith.evaluation.environment import Environments, environment_key
from benchsmith.evaluation.run import EvalOptions, Evaluation
from benchsmith.harness.worktree import Worktree, checkpoint_tree
from benchsmith.sandbox import DockerSandboxConfig

from .evaluation_fixture import CODE_FILE, build_instances, prediction

pytestmark = [pytest.mark.slow, pytest.mark.docker]


def test_fix_and_test_mode_in_containers_reuse_the_instance_image(make_repo, tmp_path: Path) -> None:
    from benchsmith.sandbox.docker.base import docker_client
    from benchsmith.sandbox.store import instance_name as instance_image_name

    repo, instances = build_instances(make_repo)
    calc1 = instances["fixture__calc-1"]
    image = instance_image_name(calc1.repo, calc1.base_commit)
    client = docker_client()
    try:
        environments = Environments(DockerSandboxConfig(), {"fixture/calc": str(repo)}, timeout=600)
        fix = Evaluation(EvalOptions(mode="fix", run_dir=tmp_path / "fix"), environments)
        [first] = fix.run({calc1.instance_id: calc1}, [prediction(calc1.instance_id, calc1.patch)])
        assert first.resolved and not first.environment_reused
        assert client.images.get(image).labels["benchsmith.repo"] == "fixture/calc"
        # Two more in one run: the second one's container is started while the first runs.
        again, empty = fix.run({calc1.instance_id: calc1}, [
            prediction(calc1.instance_id, calc1.patch, "again"), prediction(calc1.instance_id, "", "empty")])
        by_model = {r.model: r for r in (again, empty)}
        assert by_model["again"].resolved and not by_model["empty"].resolved
        assert again.environment_reused and empty.empty_patch  # an empty one needs no container
        tests = Evaluation(EvalOptions(mode="test", run_dir=tmp_path / "test"), environments)
        [report] = tests.run({calc1.instance_id: calc1},
                             [prediction(calc1.instance_id, calc1.test_patch)])
        assert report.environment_reused and report.resolved, report.error
        assert report.test.coverage.value == 1.0
        # A container started ahead has its checkout's tree recorded there: opened, it needs no
        # checkpoint of its own, and patches on it go back to that tree.
        primed: list[str | None] = []

        def prime(sandbox: Sandbox) -> str | None:
            primed.append(checkpoint_tree(sandbox))
            return primed[-1]

        store = environments.store
        store.warm(environment_key(calc1), prime)
        stored = store.open(environment_key(calc1))
        assert stored is not None and stored.pristine and stored.tree == primed[0] is not None
        try:
            worktree = Worktree(stored.sandbox, base=stored.tree)
            original = worktree.read(CODE_FILE)
            assert worktree.apply("model", calc1.patch).applied and worktree.read(CODE_FILE) != original
            worktree.reset()
            assert worktree.read(CODE_FILE) == original
        finally:
            stored.sandbox.close()
        # Started ahead for tests without the network, a container is off it before it is
        # opened; for a harness that installs its tools first, it keeps the network.
        mode = DockerSandboxConfig().network_mode
        for tools, connected in ((False, False), (True, True)):
            environments.warm(calc1, tools=tools)
            stored = store.open(environment_key(calc1))
            assert stored is not None and stored.pristine
            try:
                networks = client.api.inspect_container(stored.sandbox.container_id)[
                    "NetworkSettings"]["Networks"] or {}
                assert (mode in networks) is connected
                assert stored.sandbox.set_network(False)
            finally:
                stored.sandbox.close()
        assert again.network["tests"] == "none (loopback only)"
    finally:
        client.images.remove(image, force=True)
    import os
    import socket
    import time

    # This process's containers (another benchsmith run may share the engine).
    mine = {"label": ["benchsmith=1", f"benchsmith.owner={socket.gethostname()}:{os.getpid()}"]}
    for _ in range(50):  # containers are removed in the background
        if not client.containers.list(all=True, filters=mine):
            break
        time.sleep(0.2)
    assert not client.containers.list(all=True, filters=mine)
