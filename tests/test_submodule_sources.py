"""A submodule that cannot be checked out, whose directory is a package on the index, is provided
from the index as it was at the date: a setup.py that bootstraps a helper package from its
submodule (running `git submodule update`, then importing it) installs. The index is a real HTTP
server on loopback serving the PEP 691 JSON API and self-written source distributions."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import tarfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from benchsmith.harness.checkout import materialize, missing_submodules, resolve
from benchsmith.harness.submodule_sources import MARKER
from benchsmith.sandbox import LocalSandboxConfig
from benchsmith.setup.engine import SetupEngine
from benchsmith.setup.options import SetupOptions
from benchsmith.testing.loopback import LoopbackServer

HELPER = "boothelpers"
SETUP = f"""import os
import subprocess
import sys

from setuptools import setup

# the bootstrap: fetch the helper submodule, then build with it
subprocess.call(["git", "submodule", "update", "--init", "{HELPER}"])
sys.path.insert(0, os.path.abspath("{HELPER}"))
from {HELPER} import project_version  # noqa: E402

setup(name="booted", version=project_version(), py_modules=["booted"])
"""
PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"
"""
TESTS = "import booted\n\n\ndef test_answer():\n    assert booted.answer() == 42\n"


def _sdist(version: str, init: str) -> bytes:
    top = f"{HELPER}-{version}"
    files = {f"{top}/setup.py": f"from setuptools import setup\nsetup(name='{HELPER}', "
                                f"version='{version}', packages=['{HELPER}'])\n",
             f"{top}/{HELPER}/__init__.py": init,
             f"{top}/PKG-INFO": f"Metadata-Version: 1.1\nName: {HELPER}\nVersion: {version}\n"}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 1682900000
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


RELEASES = {  # version -> (upload time, sdist)
    "1.1": ("2023-04-01T10:00:00Z", _sdist("1.1", "def project_version():\n    return '3.1'\n")),
    # after the commit that moved the submodule's pointer (2023-05-10), before the date
    "1.2": ("2023-05-20T10:00:00Z", _sdist("1.2", "raise ImportError('a release the "
                                                  "pointer never named')\n")),
    "2.0": ("2023-07-01T10:00:00Z", _sdist("2.0", "raise ImportError('a release from after "
                                                  "the date')\n")),
}


class _Index(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path.rstrip("/") == f"/simple/{HELPER}":
            files = [{"filename": f"{HELPER}-{v}.tar.gz", "url": f"../../files/{HELPER}-{v}.tar.gz",
                      "hashes": {"sha256": hashlib.sha256(data).hexdigest()},
                      "upload-time": when} for v, (when, data) in RELEASES.items()]
            body, kind = json.dumps({"name": HELPER, "files": files}).encode(), \
                "application/vnd.pypi.simple.v1+json"
        elif self.path.startswith(f"/files/{HELPER}-"):
            version = self.path.split("-", 1)[1].removesuffix(".tar.gz")
            body, kind = RELEASES[version][1], "application/octet-stream"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


class _IndexServer(LoopbackServer):
    def __init__(self) -> None:
        self._serve(_Index)


@pytest.fixture
def index(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with _IndexServer() as server:
        monkeypatch.setenv("BENCHSMITH_INDEX_UPSTREAM", f"{server.url}/simple")
        yield f"{server.url}/simple"


def _repo_with_submodule(make_repo: Any, url: str = f"http://127.0.0.1:9/fixture/{HELPER}.git") -> Path:
    repo = make_repo("booted", {"setup.py": SETUP, "pyproject.toml": PYPROJECT,
                                "booted.py": "def answer():\n    return 42\n",
                                "tests/test_booted.py": TESTS})
    path = repo.path
    for key, value in (("path", HELPER), ("url", url)):
        subprocess.run(["git", "config", "-f", ".gitmodules", f"submodule.{HELPER}.{key}", value],
                       cwd=path, check=True)
    subprocess.run(["git", "update-index", "--add", "--cacheinfo",
                    f"160000,{'7' * 40},{HELPER}"], cwd=path, check=True)
    (path / HELPER).mkdir()
    repo.commit({}, "the helper as a submodule", date="2023-05-10T12:00:00+00:00")
    return path


def test_a_missing_submodule_is_unpacked_from_the_release_of_the_date(
        make_repo: Any, index: str, tmp_path: Path) -> None:
    path = _repo_with_submodule(make_repo)
    checkout = resolve(str(path), on_date="2023-06-01")
    dest = materialize(checkout, tmp_path / "checkout")
    assert (dest / HELPER / MARKER).read_text().strip() == f"{HELPER}==1.1"
    assert "3.1" in (dest / HELPER / HELPER / "__init__.py").read_text()
    assert (dest / HELPER / "setup.py").is_file()
    # its metadata, as `setup.py egg_info` makes it, so that no bootstrap makes it in-process
    import importlib.metadata

    found = list(importlib.metadata.distributions(path=[str(dest / HELPER)]))
    assert [(d.metadata["Name"], d.version) for d in found] == [(HELPER, "1.1")]
    assert (dest / HELPER / f"{HELPER}.egg-info" / "PKG-INFO").is_file()


def test_a_missing_submodule_from_a_repository_of_another_name_is_left_empty(
        make_repo: Any, index: str, tmp_path: Path) -> None:
    # the directory is named like the index's project, but the URL says it holds something else
    path = _repo_with_submodule(make_repo, url="git@example.invalid:acme/site-fixtures.git")
    dest = materialize(resolve(str(path), on_date="2023-06-01"), tmp_path / "checkout")
    assert not (dest / HELPER / MARKER).exists() and missing_submodules(dest) == [HELPER]


@pytest.mark.slow
def test_a_setup_that_bootstraps_from_its_submodule_installs(
        make_repo: Any, index: str, tmp_path: Path) -> None:
    path = _repo_with_submodule(make_repo)
    options = SetupOptions(sandbox=LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")),
                           refdb=str(tmp_path / "ref.sqlite"))
    record = SetupEngine(options).setup(str(path), on_date="2023-06-01")
    assert record.status == "validated", (record.failure_reason, record.iterations[-1].commands)
    assert record.provided_submodules == {HELPER: f"{HELPER}==1.1"}
    assert record.missing_submodules == []
