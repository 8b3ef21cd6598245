"""One environment, one verdict on the local backend: `evaluate` runs in the environment
`prepare` validated and kept, and never installs dependencies again — shown with a dependency
from a package index served here that no longer builds once `prepare` is done."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .evaluation_fixture import TEST_FILE, working_diff
from .test_cli_batch import run_cli

DEP = "benchsmith-fixture-sep"
DEP_SETUP = f"""from setuptools import setup

setup(name="{DEP}", version="1.0", py_modules=["fixture_sep"])
"""
PYPROJECT = f"""
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
version = "0.1.0"
requires-python = ">=3.8"
dependencies = ["{DEP}"]

[project.optional-dependencies]
test = ["pytest"]
"""
CODE_FILE = "src/calc/__init__.py"
CODE = """from fixture_sep import SEPARATOR


def parse(text):
    return text.split(SEPARATOR)
"""
FIXED = CODE.replace("return text.split(SEPARATOR)",
                     "return [part.strip() for part in text.split(SEPARATOR)]")
TESTS = """from calc import parse


def test_plain():
    assert parse("a,b") == ["a", "b"]
"""
TAMPERING = CODE + """
import os

import fixture_sep

os.remove(fixture_sep.__file__)
"""
NEW_TEST = TESTS + """

def test_spaces():
    assert parse("a, b") == ["a", "b"]
"""


def _sdist(directory: Path, setup_py: str) -> None:
    """Write the dependency's sdist (its only release, 1.0) with the given setup.py."""
    work = directory / "build" / f"{DEP}-1.0"
    work.mkdir(parents=True, exist_ok=True)
    (work / "setup.py").write_text(setup_py)
    (work / "fixture_sep.py").write_text('SEPARATOR = ","\n')
    (work / "PKG-INFO").write_text(f"Metadata-Version: 2.1\nName: {DEP}\nVersion: 1.0\n")
    with tarfile.open(directory / f"{DEP}-1.0.tar.gz", "w:gz") as archive:
        archive.add(work, arcname=f"{DEP}-1.0")


class _Index(http.server.BaseHTTPRequestHandler):
    """PEP 691 JSON pages with upload times (uv's --exclude-newer keeps only dated files),
    never cached; a project with no file here is a 404, so uv goes on to PyPI."""

    files: Path

    def do_GET(self) -> None:
        parts = [p for p in self.path.split("/") if p]
        body, kind = b"", "application/octet-stream"
        if len(parts) == 2 and parts[0] == "simple":
            files = [{"filename": f.name, "url": f"/files/{f.name}",
                      "hashes": {"sha256": hashlib.sha256(f.read_bytes()).hexdigest()},
                      "upload-time": "2023-05-01T00:00:00Z"}
                     for f in sorted(self.files.glob(f"{parts[1]}-*.tar.gz"))]
            if files:
                body = json.dumps({"meta": {"api-version": "1.1"}, "name": parts[1],
                                   "files": files}).encode()
                kind = "application/vnd.pypi.simple.v1+json"
        elif len(parts) == 2 and parts[0] == "files" and (self.files / parts[1]).is_file():
            body = (self.files / parts[1]).read_bytes()
        if not body:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A package index on loopback serving the dependency's sdist (the directory returned)."""
    files = tmp_path / "index"
    files.mkdir()
    _sdist(files, DEP_SETUP)
    handler = type("Index", (_Index,), {"files": files})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("UV_EXTRA_INDEX_URL", f"http://127.0.0.1:{server.server_address[1]}/simple/")
    try:
        yield files
    finally:
        server.shutdown()
        server.server_close()


def _published(make_repo: Any, tmp_path: Path) -> tuple[Path, Path]:
    """Two instances of one version (one environment), at two commits; (file, mirrors)."""
    repo = make_repo("calc", {"pyproject.toml": PYPROJECT, CODE_FILE: CODE, TEST_FILE: TESTS})
    first = repo.commit({"README.md": "calc\n"}, date="2023-05-10T12:00:00+00:00")
    second = repo.commit({"NEWS.md": "news\n"}, date="2023-05-12T12:00:00+00:00")
    repo.commit({"CHANGES.md": "later\n"}, "after both instances", date="2023-05-20T12:00:00+00:00")
    mirrors = tmp_path / "mirrors"
    (mirrors / "fixture+calc").mkdir(parents=True)
    os.symlink(repo.path, mirrors / "fixture+calc" / "repo")
    common = {"repo": "fixture/calc", "version": "1.0", "problem_statement": "spaces",
              "patch": working_diff(repo.path, {CODE_FILE: FIXED}),
              "test_patch": working_diff(repo.path, {TEST_FILE: NEW_TEST}),
              "FAIL_TO_PASS": [f"{TEST_FILE}::test_spaces"],
              "PASS_TO_PASS": [f"{TEST_FILE}::test_plain"]}
    rows = [{"instance_id": "fixture__calc-1", "base_commit": first,
             "created_at": "2023-05-15T10:00:00Z", **common},
            {"instance_id": "fixture__calc-2", "base_commit": second,
             "created_at": "2023-05-16T10:00:00Z", **common}]
    published = tmp_path / "published.jsonl"
    published.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return published, mirrors


def _evaluate(out: Path, mirrors: Path, predictions: str, run: str, runs: Path,
              *more: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    result = run_cli("evaluate", "--instances", str(out), "--predictions", predictions,
                     "--mirrors", str(mirrors), "--run-id", run, "--output-dir", str(runs), *more)
    assert result.returncode in (0, 1), result.stderr[-3000:]
    summary = json.loads((runs / run / "summary.json").read_text())[0]
    reports = {path.parent.name: json.loads(path.read_text())
               for path in (runs / run).glob("*/*/report.json")}
    return summary, reports


@pytest.mark.slow
def test_evaluate_runs_in_the_environment_prepare_kept_and_never_installs_again(
        make_repo: Any, index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    published, mirrors = _published(make_repo, tmp_path)
    out = tmp_path / "prepared.jsonl"
    prepared = run_cli("prepare", str(published), "--out", str(out), "--mirrors", str(mirrors),
                       "--refdb", str(tmp_path / "ref.sqlite"))
    assert prepared.returncode == 0, prepared.stderr[-3000:]
    records = {r["instance_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert {r["prepare"]["status"] for r in records.values()} == {"reproduced"}, records
    assert records["fixture__calc-2"]["reinstall"]  # installed at the first one's commit

    # The dependency's only release no longer builds: an install now fails.
    _sdist(index, 'raise SystemExit("this release no longer builds")\n')
    runs = tmp_path / "runs"
    # A prediction that fixes nothing and deletes the dependency from the environment's venv:
    # its tests fail, and the next evaluation gets the environment back as it was kept.
    tampering = tmp_path / "tampering.jsonl"
    tampering.write_text("".join(json.dumps({
        "instance_id": iid, "model_name_or_path": "tampering",
        "model_patch": working_diff(mirrors / "fixture+calc" / "repo", {CODE_FILE: TAMPERING})})
        + "\n" for iid in records))
    summary, reports = _evaluate(out, mirrors, str(tampering), "tampering", runs, "--jobs", "2")
    assert not [r["infrastructure_reason"] for r in reports.values() if r["infrastructure_failure"]]
    assert not summary["ids"].get("RESOLVED") and all(r["applied"] for r in reports.values())
    assert {r["environment"] for r in reports.values()} == {"prepared"}

    summary, reports = _evaluate(out, mirrors, "gold", "gold", runs, "--jobs", "2")
    assert sorted(summary["ids"].get("RESOLVED", [])) == ["fixture__calc-1", "fixture__calc-2"], (
        summary["ids"], {k: r["infrastructure_reason"] for k, r in reports.items()})
    assert {r["environment"] for r in reports.values()} == {"prepared"}
    # each checkout was cut at its own base commit: nothing later is in it
    for iid, report in reports.items():
        assert report["history"]["base_commit"] == records[iid]["base_commit"]
    assert reports["fixture__calc-1"]["history"]["commits"] == 2
    assert reports["fixture__calc-2"]["history"]["commits"] == 3
    # the two instances shared one kept environment
    store = Path(os.environ["BENCHSMITH_CACHE"]) / "envs" / "prepared"
    assert len(list(store.glob("*.json"))) == 1, sorted(p.name for p in store.iterdir())
    kept = [root for root in (store / "roots").iterdir() if (root / "benchsmith-kept").is_file()]
    assert len(kept) == 1 and (kept[0] / "venv").is_dir()
    summary, _ = _evaluate(out, mirrors, "empty", "empty", runs)
    assert not summary["ids"].get("RESOLVED")

    # Without the kept environment, evaluate installs from the recorded commands, says so,
    # and here cannot: the dependency no longer builds.
    monkeypatch.setenv("BENCHSMITH_CACHE", str(tmp_path / "elsewhere"))
    summary, reports = _evaluate(out, mirrors, "gold", "elsewhere", runs, "--id", "fixture__calc-1")
    report = reports["fixture__calc-1"]
    assert report["environment"] == "installed" and report["infrastructure_failure"]
    assert "no longer builds" in report["infrastructure_reason"] or "install failed" in report[
        "infrastructure_reason"], report["infrastructure_reason"]
