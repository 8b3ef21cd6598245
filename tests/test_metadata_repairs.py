"""Releases whose metadata today's installers refuse (requirements written before PEP 440:
``pytz (>=2011k)`` in every pandas before 0.25): their requirements, read from the index and
mended, are given to uv as their metadata. A self-written wheel on a loopback index, real uv."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchsmith.core import ExecResult, Plan
from benchsmith.harness.render import render_install
from benchsmith.sandbox import LocalSandboxConfig
from benchsmith.setup.context_model import RepoContext
from benchsmith.setup.diagnose import diagnose_install
from benchsmith.setup.engine import SetupEngine, SetupOptions
from benchsmith.setup.metadata_repairs import lenient_requirement
from benchsmith.setup.repair import RuleRepairer

from .conftest import PIN_DATE

UV_OUTPUT = """\
Using Python 3.7.16 environment at: /tmp/box/venv
error: No solution found when resolving dependencies:
  cause: Because pandas==0.20.3 has invalid metadata and you require pandas==0.20.3, we can conclude that your requirements are unsatisfiable.

hint: Metadata for `pandas` (v0.20.3) could not be parsed:
  after parsing `2011`, found `k`, which is not part of a valid version
  pytz (>=2011k)
        ^^^^^^^
"""


def test_metadata_the_installer_cannot_read_is_named_with_its_release() -> None:
    diagnosis = diagnose_install(ExecResult(command="x", returncode=1, output=UV_OUTPUT), [])
    assert diagnosis.kind == "invalid_metadata", diagnosis
    assert diagnosis.facts == {"packages": ["pandas"], "versions": ["0.20.3"]}
    assert "pandas 0.20.3" in diagnosis.reason


@pytest.mark.parametrize(("written", "read"), [
    ("pytz (>=2011k)", "pytz>=2011"), ("numpy (>=1.7.0)", "numpy>=1.7.0"),
    ("six (>=1.0b)", "six>=1.0b"),  # a pre-release PEP 440 already reads
    ("dateutil (>=2,<3x); python_version < \"3\"", "dateutil<3,>=2; python_version < \"3\""),
    ("bar (==1.0.x)", "bar"), ("(((", None)])
def test_a_requirement_is_mended_the_least_possible(written: str, read: str | None) -> None:
    assert lenient_requirement(written) == read


OLD_METADATA = ("Metadata-Version: 2.0\nName: oldmeta\nVersion: 1.0\n"
                "Requires-Dist: six (>=1.0k)\n\n")


def _wheel(directory: Path) -> Path:
    """oldmeta 1.0, a pure-Python wheel whose METADATA requires six (>=1.0k)."""
    path = directory / "oldmeta-1.0-py2.py3-none-any.whl"
    files = {"oldmeta/__init__.py": "import six\n\nVALUE = six.text_type('old')\n",
             "oldmeta-1.0.dist-info/METADATA": OLD_METADATA,
             "oldmeta-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\n"
                                            "Root-Is-Purelib: true\nTag: py2-none-any\n"
                                            "Tag: py3-none-any\n"}
    record = [f"{name},,\n" for name in files] + ["oldmeta-1.0.dist-info/RECORD,,\n"]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr("oldmeta-1.0.dist-info/RECORD", "".join(record))
    path.write_bytes(buffer.getvalue())
    return path


class _WheelIndex(http.server.BaseHTTPRequestHandler):
    """PEP 691 JSON for oldmeta (upload times for --exclude-newer), its wheel and the wheel's
    PEP 658 metadata file; any other project is a 404, so uv goes on to PyPI."""

    wheel: Path

    def do_GET(self) -> None:  # noqa: N802 (the http.server API)
        self._answer(send_body=True)

    def do_HEAD(self) -> None:  # noqa: N802 (uv asks whether a wheel allows range requests)
        self._answer(send_body=False)

    def _answer(self, send_body: bool) -> None:
        name = self.wheel.name
        body, kind = b"", "application/octet-stream"
        if self.path.rstrip("/") == "/simple/oldmeta":
            digest = hashlib.sha256(self.wheel.read_bytes()).hexdigest()
            body = json.dumps({"meta": {"api-version": "1.1"}, "name": "oldmeta", "files": [
                {"filename": name, "url": f"/files/{name}", "hashes": {"sha256": digest},
                 "upload-time": "2023-05-01T00:00:00Z"}]}).encode()
            kind = "application/vnd.pypi.simple.v1+json"
        elif self.path == f"/files/{name}":
            body = self.wheel.read_bytes()
        elif self.path == f"/files/{name}.metadata":
            body = OLD_METADATA.encode()
        if not body:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "index").mkdir()
    handler = type("Index", (_WheelIndex,), {"wheel": _wheel(tmp_path / "index")})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("UV_EXTRA_INDEX_URL", f"{url}/simple/")
    monkeypatch.setenv("BENCHSMITH_PYPI_URL", url)  # where the repair reads the release's metadata
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


def test_the_repair_gives_uv_the_mended_requirements_in_one_self_contained_command(
        index: str) -> None:
    plan = Plan(python="3.11", exclude_newer=f"{PIN_DATE}T00:00:00Z", packages=["oldmeta==1.0"])
    diagnosis = diagnose_install(ExecResult(command="x", returncode=1, output=UV_OUTPUT.replace(
        "pandas", "oldmeta").replace("0.20.3", "1.0")), [])
    fixed, what = RuleRepairer().repair(plan, diagnosis, RepoContext()) or (None, "")
    assert fixed is not None and fixed.dependency_metadata == {"oldmeta==1.0": ["six>=1.0"]}, what
    assert any("six (>=1.0k) -> six>=1.0" in note for note in fixed.notes), fixed.notes
    install = render_install(fixed)[-1]
    assert "\n" not in install and "--config-file /tmp/benchsmith-metadata-" in install
    assert RuleRepairer().repair(fixed, diagnosis, RepoContext()) is None  # once per release


@pytest.mark.slow
def test_a_project_needing_a_release_with_unreadable_metadata_sets_up(
        make_repo: Any, index: str, tmp_path: Path) -> None:
    repo = make_repo("usesold", {
        "pyproject.toml": '[build-system]\nrequires = ["setuptools>=61"]\n'
                          'build-backend = "setuptools.build_meta"\n\n[project]\nname = "usesold"\n'
                          'version = "0.1.0"\ndependencies = ["oldmeta==1.0"]\n\n'
                          '[project.optional-dependencies]\ntest = ["pytest"]\n',
        "src/usesold/__init__.py": "from oldmeta import VALUE\n",
        "tests/test_usesold.py": "import usesold\n\n\ndef test_value():\n"
                                 "    assert usesold.VALUE == 'old'\n"})
    engine = SetupEngine(SetupOptions(sandbox=LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")),
                                      use_refdb=False))
    record = engine.setup(str(repo.path), on_date=PIN_DATE)
    kinds = [(i.diagnosis.kind if i.diagnosis else None) for i in record.iterations]
    assert record.status == "validated", (record.failure_reason, kinds)
    assert kinds[0] == "invalid_metadata"
    assert record.plan is not None and record.plan.dependency_metadata == {
        "oldmeta==1.0": ["six>=1.0"]}
    assert any("--config-file" in line for line in record.install)
    assert record.tests.PASSED == 1
