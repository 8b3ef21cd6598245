"""One environment, one verdict offline: `prepare` checks labels in the network `evaluate` gives a
prediction's tests, and on the local backend that network still carries loopback traffic for
code that hands the proxy variables to its HTTP client itself (which ignores NO_PROXY)."""

from __future__ import annotations

import http.client
import http.server
import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchsmith.sandbox.config import LocalSandboxConfig
from benchsmith.sandbox.local import LocalSandbox
from benchsmith.sandbox.loopback_proxy import is_loopback, loopback_proxy

from .evaluation_fixture import published_file, working_diff
from .test_cli_batch import run_cli

PYPROJECT = """
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "pinger"
version = "0.1.0"
requires-python = ">=3.8"
dependencies = ["urllib3==1.26.16"]

[project.optional-dependencies]
test = ["pytest"]
"""
CODE_FILE = "src/pinger/__init__.py"
CODE = """import urllib.request

import urllib3


def fetch(url):
    proxy = urllib.request.getproxies().get("http")
    pool = urllib3.ProxyManager(proxy) if proxy else urllib3.PoolManager()
    return pool.request("GET", url, retries=False, timeout=10).data
"""
FIXED = CODE + """

def shout(text):
    return text.upper()
"""
TEST_FILE = "tests/test_pinger.py"
TESTS = """import http.server
import threading

import pytest

import pinger


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")


@pytest.fixture
def local_url():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield "http://127.0.0.1:%d/" % server.server_address[1]
    server.shutdown()


def test_fetch_local(local_url):
    assert pinger.fetch(local_url) == b"hello"
"""
NEW_TEST = TESTS + """

def test_shout():
    assert pinger.shout("hi") == "HI"
"""


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def local_url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://localhost:{server.server_address[1]}/path?q=1"
    finally:
        server.shutdown()
        server.server_close()


def test_loopback_names_are_told_apart_without_resolving() -> None:
    assert all(map(is_loopback, ["localhost", "127.0.0.1", "127.8.9.10", "[::1]", "a.localhost"]))
    assert not any(map(is_loopback, ["pypi.org", "10.0.0.1", "localhost.example.com", ""]))


def test_the_proxy_forwards_to_loopback_and_drops_everything_else(local_url: str) -> None:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": loopback_proxy()}))
    assert opener.open(local_url, timeout=10).read() == b"hello"
    with pytest.raises((urllib.error.URLError, ConnectionError, http.client.HTTPException)):
        opener.open("http://pypi.org/simple/", timeout=10)
    port = int(loopback_proxy().rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), 10) as tunnel:
        tunnel.sendall(b"CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n")
        assert tunnel.recv(100).startswith(b"HTTP/1.1 502 Network is unreachable\r\n")


def test_offline_local_commands_reach_loopback_through_their_proxies(tmp_path: Path,
                                                                     local_url: str) -> None:
    box = LocalSandbox(LocalSandboxConfig(tmp_dir=str(tmp_path)))
    try:
        assert not box.set_network(False)
        script = ("import urllib.request as u; h = u.ProxyHandler(u.getproxies()); "
                  f"print(u.build_opener(h).open({local_url.replace('localhost', '127.0.0.1')!r})"
                  ".read().decode())")
        result = box.exec(f"python3 -c {json.dumps(script)}", use_venv=False)
        assert result.ok and result.output.strip() == "hello", result.output
    finally:
        box.close()


@pytest.mark.slow
def test_prepare_and_evaluate_agree_on_a_suite_that_passes_proxies_itself(
        make_repo: Any, tmp_path: Path) -> None:
    repo = make_repo("pinger", {"pyproject.toml": PYPROJECT, CODE_FILE: CODE, TEST_FILE: TESTS})
    base = repo.commit({"README.md": "pinger\n"}, date="2023-06-10T12:00:00+00:00")
    published, mirrors = published_file(repo.path, tmp_path, "pinger", {
        "instance_id": "fixture__pinger-1", "base_commit": base, "version": "0.1",
        "created_at": "2023-06-12T10:00:00Z", "problem_statement": "shout",
        "patch": working_diff(repo.path, {CODE_FILE: FIXED}),
        "test_patch": working_diff(repo.path, {TEST_FILE: NEW_TEST}),
        "FAIL_TO_PASS": [f"{TEST_FILE}::test_shout"],
        "PASS_TO_PASS": [f"{TEST_FILE}::test_fetch_local"]})
    out = tmp_path / "prepared.jsonl"
    prepared = run_cli("prepare", str(published), "--out", str(out), "--mirrors", str(mirrors),
                       "--refdb", str(tmp_path / "ref.sqlite"))
    assert prepared.returncode == 0, prepared.stderr[-3000:]
    verdict = json.loads(out.read_text())["prepare"]
    assert verdict["status"] == "reproduced", verdict

    runs = tmp_path / "runs"
    evaluated = run_cli("evaluate", "--instances", str(out), "--predictions", "gold",
                        "--mirrors", str(mirrors), "--run-id", "gold", "--output-dir", str(runs))
    assert evaluated.returncode in (0, 1), evaluated.stderr[-3000:]
    report = json.loads(next((runs / "gold").glob("*/*/report.json")).read_text())
    assert report["resolved"], report
    assert report["environment"] == "prepared"
    # the label runs had the very network the prediction's tests had
    assert verdict["test_network"] == report["network"]["tests"]
    assert "loopback only" in verdict["test_network"]
