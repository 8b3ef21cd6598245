"""Tests run offline in Docker: installs reach the package index, the tests reach only loopback,
and a test that needed the network is recorded as such, not counted."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsmith.sandbox import DockerSandboxConfig, LocalSandboxConfig
from benchsmith.sandbox.docker.sandbox import DockerSandbox
from benchsmith.sandbox.local import LocalSandbox
from benchsmith.setup.engine import SetupEngine, SetupOptions

from .conftest import PIN_DATE

pytestmark = [pytest.mark.slow]

REACH_INDEX = ("python -c \"import socket; socket.create_connection(('pypi.org', 443), timeout=10); "
               "print('reached')\"")
LOOPBACK = ("python -c \"import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); "
            "c = socket.create_connection(s.getsockname()); print('loopback ok')\"")


@pytest.mark.docker
def test_a_container_is_cut_off_and_reconnected_and_loopback_stays() -> None:
    box = DockerSandbox(DockerSandboxConfig())
    try:
        box.setup_python("3.11")
        assert "reached" in box.exec(REACH_INDEX, timeout=60).output
        assert box.set_network(False)
        cut = box.exec(REACH_INDEX, timeout=60)
        assert not cut.ok and "reached" not in cut.output
        assert "loopback ok" in box.exec(LOOPBACK, timeout=60).output
        assert box.set_network(False)  # twice is fine
        assert box.set_network(True)
        assert "reached" in box.exec(REACH_INDEX, timeout=60).output
    finally:
        box.close()
    host = DockerSandbox(DockerSandboxConfig(network_mode="host"))
    try:
        assert not host.set_network(False)  # the host's network cannot be taken away
    finally:
        host.close()


def test_the_host_cannot_be_cut_off(tmp_path: Path) -> None:
    box = LocalSandbox(LocalSandboxConfig(tmp_dir=str(tmp_path)))
    try:
        assert not box.set_network(False) and box.set_network(True)
    finally:
        box.close()


PYPROJECT = """
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "fetcher"
version = "0.1.0"
dependencies = ["urllib3==1.26.16"]

[project.optional-dependencies]
test = ["pytest"]
"""

TESTS = """
import socket

import urllib3


def test_download_index_page():
    urllib3.PoolManager().request("GET", "https://pypi.org/simple/", retries=False, timeout=10)


def test_local_echo():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    client = socket.create_connection(server.getsockname())
    conn, _ = server.accept()
    client.sendall(b"hi")
    assert conn.recv(2) == b"hi"


def test_arithmetic():
    assert 2 + 2 == 4
"""


@pytest.mark.docker
def test_setup_in_docker_runs_the_tests_offline(make_repo, tmp_path: Path) -> None:
    repo = make_repo("fetcher", {"pyproject.toml": PYPROJECT, "src/fetcher/__init__.py": "",
                                 "tests/test_fetch.py": TESTS})
    options = SetupOptions(sandbox=DockerSandboxConfig(), commit_images=False,
                           refdb=str(tmp_path / "ref.sqlite"))
    record = SetupEngine(options).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert record.tests_offline and record.iterations[-1].offline
    assert record.needs_network == ["tests/test_fetch.py::test_download_index_page"]
    assert record.tests is not None and record.tests.PASSED == 2 and record.tests.FAILED == 0
