"""Docker-specific behaviour: labels, limits, base images, leftovers, failure messages.

All but the SDK-missing test need a Docker engine and fail without one.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from benchsmith.core import BenchsmithError, ExecResult, History
from benchsmith.sandbox.docker import rootfs as docker_rootfs
from benchsmith.sandbox.docker.base import (
    BASE_LAYOUT,
    base_image_name,
    docker_client,
    ensure_base_image,
)
from benchsmith.sandbox.docker.config import DockerSandboxConfig
from benchsmith.sandbox.docker.rootfs import ROOTFS_IMAGE
from benchsmith.sandbox.docker.sandbox import UV_CACHE_VOLUME, DockerSandbox, clean_leftovers


@pytest.fixture
def client() -> Any:
    return docker_client()


@pytest.fixture
def box() -> Iterator[DockerSandbox]:
    sandbox = DockerSandbox(DockerSandboxConfig(cpus=1.5, memory="1g", pids_limit=512))
    yield sandbox
    sandbox.close()


@pytest.mark.docker
def test_base_image_reports_how_it_was_obtained(client: Any) -> None:
    first = ensure_base_image(client, "3.11")
    assert first.name == base_image_name("3.11") == "benchsmith/base:py3.11"
    assert first.how in ("cached", "pulled", "built") and first.detail
    again = ensure_base_image(client, "3.11")
    assert again.how == "cached"
    labels = client.images.get(first.name).labels
    assert labels["benchsmith"] == "1" and labels["benchsmith.python"] == "3.11"
    assert labels["benchsmith.base_layout"] == BASE_LAYOUT


@pytest.mark.docker
def test_base_image_has_no_ca_bundle_baked_in_and_a_working_python(client: Any) -> None:
    ensure_base_image(client, "3.11")
    output = client.containers.run(
        base_image_name("3.11"), ["python3.11", "-c", "import ssl, sqlite3, ctypes, lzma; "
                                  "import test.support.os_helper; "  # jaraco.test needs it
                                  # /etc/services (netbase), as on any CI runner: servers' tests
                                  # resolve "127.0.0.1:http"
                                  "import socket; assert socket.getservbyname('http') == 80; "
                                  "print('ok')"],
        remove=True, network_mode="none",
    )
    assert output.strip() == b"ok"
    if client.images.list(name=ROOTFS_IMAGE):  # built locally rather than pulled
        bundle = client.containers.run(base_image_name("3.11"), ["cat", "/etc/ssl/certs/ca-certificates.crt"],
                                       remove=True, network_mode="none")
        assert bundle.count(b"BEGIN CERTIFICATE") > 50  # Debian's public roots only


@pytest.mark.docker
def test_container_labels_limits_and_mounts(box: DockerSandbox, client: Any) -> None:
    box.setup_python("3.11")
    attrs = client.containers.get(box.name).attrs
    labels = attrs["Config"]["Labels"]
    assert labels["benchsmith"] == "1" and labels["benchsmith.python"] == "3.11"
    host = attrs["HostConfig"]
    assert host["NanoCpus"] == 1_500_000_000
    assert host["Memory"] == 1024**3
    assert host["PidsLimit"] == 512
    assert host["NetworkMode"] == "bridge"
    assert host["Init"] is True
    # IPv6 loopback as on a host: a test server listening on ::1 (seen: node-fetch's) starts
    bound = box.exec("python -c \"import socket; s = socket.socket(socket.AF_INET6); "
                     "s.bind(('::1', 0)); print('bound', s.getsockname()[0])\"", timeout=60)
    assert "bound ::1" in bound.output, bound.output
    mounts = {mount["Destination"]: mount for mount in attrs["Mounts"]}
    assert mounts["/etc/ssl/certs/ca-certificates.crt"]["RW"] is False
    assert mounts["/root/.cache/uv"]["Name"] == UV_CACHE_VOLUME
    assert client.volumes.get(UV_CACHE_VOLUME).attrs["Labels"]["benchsmith"] == "1"


@pytest.mark.docker
def test_clean_leftovers_removes_stray_containers_but_not_live_ones(box: DockerSandbox, client: Any) -> None:
    box.exec("true")
    ensure_base_image(client, "3.11")
    stray = client.containers.create(base_image_name("3.11"), ["sleep", "infinity"],
                                     labels={"benchsmith": "1"})
    removed = clean_leftovers(client)
    assert f"container {stray.name}" in removed
    assert client.containers.get(box.name).status == "running"
    assert client.volumes.get(UV_CACHE_VOLUME)  # the shared cache stays by default


@pytest.mark.docker
def test_switching_python_keeps_the_checkout(box: DockerSandbox) -> None:
    box.write_file("keep.txt", b"still here")
    box.setup_python("3.11")
    first = box.name
    box.setup_python("3.9")
    assert box.read_file("keep.txt") == b"still here"
    assert "3.9" in box.exec("python -V").output
    assert box.name == first


@pytest.mark.docker
def test_apt_can_be_disabled() -> None:
    with DockerSandbox(DockerSandboxConfig(apt_allowed=False)) as box:
        result = box.exec("apt-get install -y cowsay")
    assert result.returncode == 100 and "apt is disabled" in result.output


@pytest.mark.docker
def test_disk_limit_is_asked_of_the_storage_driver_where_it_can_size_containers(client: Any) -> None:
    from benchsmith.sandbox.docker.container import _STORAGE_OPT_REFUSED

    with DockerSandbox(DockerSandboxConfig(disk="5G")) as box:
        assert box.exec("true").ok
        storage = client.containers.get(box.name).attrs["HostConfig"].get("StorageOpt") or {}
    # e.g. overlay2 on ext4 has no quota support: the commands' own disk watch is the limit
    # (tests/test_limits_docker.py), and the driver is not asked again in this process
    assert storage.get("size") == "5G" or _STORAGE_OPT_REFUSED


@pytest.mark.docker
def test_close_during_a_command_ends_it(box: DockerSandbox) -> None:
    box.exec("true")
    results: list[ExecResult] = []
    runner = threading.Thread(target=lambda: results.append(box.exec("sleep 60", timeout=120)))
    started = time.monotonic()
    runner.start()
    time.sleep(1)
    box.close()
    runner.join(30)
    assert results and results[0].returncode == -9
    assert time.monotonic() - started < 30


@pytest.mark.docker
def test_close_after_the_engine_went_away_does_not_raise(box: DockerSandbox) -> None:
    """Closing when the engine cannot be reached any more (it was stopped mid-run) reports the
    container it could not remove and returns: results already written stay."""
    import docker

    box.exec("true")
    real, messages = box._client, []
    box.progress = messages.append
    box._client = docker.DockerClient(base_url="unix:///nonexistent/docker.sock", version="1.41")
    try:
        box.close()
    finally:
        real.api.remove_container(box.container_id, force=True)
        real.close()
    assert messages and messages[0].startswith(f"could not remove container {box.name}")


@pytest.mark.docker
def test_unreachable_daemon_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(BenchsmithError, match="start it with `dockerd`"):
        docker_client()


def test_missing_sdk_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "docker", None)
    with pytest.raises(BenchsmithError, match=r"install benchsmith\[docker\]"):
        docker_client()


@pytest.mark.docker
def test_base_image_override_lists_the_image_pythons() -> None:
    config = DockerSandboxConfig(base_image=base_image_name("3.11"))
    ensure_base_image(docker_client(), "3.11")
    with DockerSandbox(config) as box:
        assert box.available_pythons() == {"3.11": "python3.11"}
        box.setup_python("3.11")
        assert box.exec("python -c 'import sys; print(sys.prefix)'").output.strip() == box.venv
        assert box.base is None  # an override is used as it is


@pytest.mark.docker
def test_a_python_without_image_or_interpreter_is_a_clear_error(client: Any) -> None:
    with pytest.raises(BenchsmithError, match=r"no base image for Python 3\.99: .*have: .*3\.11"):
        ensure_base_image(client, "3.99")


@pytest.mark.docker
def test_a_stopped_container_is_a_clear_error(box: DockerSandbox, client: Any) -> None:
    box.exec("true")
    client.containers.get(box.name).kill()
    with pytest.raises(BenchsmithError, match="the container stopped"):
        box.exec("true")


def test_missing_debootstrap_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(docker_rootfs.shutil, "which", lambda name: None)
    with pytest.raises(BenchsmithError, match="apt-get install -y debootstrap"):
        docker_rootfs._build_rootfs(client=None, say=lambda message: None)


def test_a_full_disk_is_a_clear_error() -> None:
    with pytest.raises(BenchsmithError, match="no space left on device; free disk space"):
        docker_rootfs.raise_for_disk("write /var/lib/docker/x: no space left on device", "building")
    docker_rootfs.raise_for_disk("some other failure", "building")  # no error: not a disk problem


@pytest.mark.docker
def test_an_environment_image_made_on_an_older_base_is_not_reused(client: Any) -> None:
    import io

    from benchsmith.sandbox.docker.store import DockerStore
    from benchsmith.sandbox.store import EnvironmentKey

    ensure_base_image(client, "3.11")
    name = "benchsmith-test/env-layout:1"
    key = EnvironmentKey(name="fixture__old-1-abc", digest="abc", repo="fixture/old",
                         commit="0" * 40, image=name)
    store = DockerStore(DockerSandboxConfig())
    try:
        recipe = (f"FROM {base_image_name('3.11')}\nRUN python3.11 -m venv --without-pip /work/venv "
                  "&& mkdir -p /work/repo\n")
        client.images.build(fileobj=io.BytesIO(recipe.encode()), tag=name, rm=True)
        assert store.open(key) is None  # no history label: its checkout was never cut
        history = History(base_commit="0" * 40, commits=1, newest_commit_date="2023-01-01T00:00:00Z")
        recipe += f"LABEL benchsmith.history='{history.model_dump_json()}'\n"
        client.images.build(fileobj=io.BytesIO(recipe.encode()), tag=name, rm=True)
        stored = store.open(key)  # made on this base (its label inherited): reused
        assert stored is not None and stored.history == history
        stored.sandbox.close()
        recipe += "LABEL benchsmith.base_layout=0\n"
        client.images.build(fileobj=io.BytesIO(recipe.encode()), tag=name, rm=True)
        assert store.open(key) is None  # made on an older base: made again
    finally:
        store.close()
        with contextlib.suppress(Exception):
            client.images.remove(name)
