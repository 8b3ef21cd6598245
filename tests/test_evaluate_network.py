"""A prediction's tests run without the network: cut off in Docker, pointed at nothing locally.
The prediction here carries the gold fix but works only when its code reaches the package
index at import, so it is resolved exactly when the tests had the network. Real installs,
real HTTP to the package index, and for Docker a real engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsmith.evaluation.environment import Environments
from benchsmith.evaluation.run import EvalOptions, Evaluation
from benchsmith.sandbox import DockerSandboxConfig, LocalSandboxConfig

from .evaluation_fixture import CODE_FILE, PARSE_FIXED, build_instances, prediction, working_diff

pytestmark = pytest.mark.slow

ONLINE_ONLY = '''
import urllib.request

urllib.request.urlopen("https://pypi.org/simple/pip/", timeout=20).read(1)
'''


def _evaluate(make_repo, tmp_path: Path, config: object, test_network: bool) -> dict[str, object]:
    if not hasattr(make_repo, "built"):  # one repository for both runs of a test
        make_repo.built = build_instances(make_repo)
    repo, instances = make_repo.built
    calc1 = instances["fixture__calc-1"]
    patch = working_diff(repo, {CODE_FILE: PARSE_FIXED + ONLINE_ONLY})
    environments = Environments(config, {"fixture/calc": str(repo)}, timeout=600,  # type: ignore[arg-type]
                                test_network=test_network)
    options = EvalOptions(mode="fix", run_dir=tmp_path / f"run-{test_network}", timeout_s=300,
                          test_network=test_network)
    [report] = Evaluation(options, environments).run({calc1.instance_id: calc1},
                                                      [prediction(calc1.instance_id, patch)])
    assert not report.infrastructure_failure, report.infrastructure_reason
    return {"resolved": report.resolved, "network": report.network,
            "options": report.provenance.options if report.provenance else {}}


def test_locally_the_tests_find_package_indexes_and_proxies_pointing_at_nothing(
        make_repo, tmp_path: Path) -> None:
    offline = _evaluate(make_repo, tmp_path / "off", LocalSandboxConfig(), test_network=False)
    assert offline["resolved"] is False
    assert offline["network"] == {
        "prepare": "host", "tests": "host (package indexes offline, proxies reach loopback only)"}
    online = _evaluate(make_repo, tmp_path / "on", LocalSandboxConfig(), test_network=True)
    assert online["resolved"] is True  # the same prediction with the network: resolved
    assert online["network"] == {"prepare": "host", "tests": "host"}


@pytest.mark.docker
def test_in_docker_the_tests_have_no_network(make_repo, tmp_path: Path) -> None:
    from benchsmith.sandbox.docker.base import docker_client

    try:
        offline = _evaluate(make_repo, tmp_path / "off", DockerSandboxConfig(), test_network=False)
        assert offline["resolved"] is False
        assert offline["network"] == {"prepare": "bridge", "tests": "none (loopback only)"}
        online = _evaluate(make_repo, tmp_path / "on", DockerSandboxConfig(), test_network=True)
        assert online["resolved"] is True and online["options"]["test_network"] is True
        assert online["network"] == {"prepare": "bridge", "tests": "bridge"}
    finally:
        for image in docker_client().images.list(name="benchsmith/inst.fixture__calc"):
            docker_client().images.remove(image.id, force=True)
