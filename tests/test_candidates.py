"""Candidate repositories: a real HTTP server on loopback plays PyPI and the top-PyPI list."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchsmith.core import BenchsmithError
from benchsmith.mining import candidates as cand
from benchsmith.mining.candidates import (
    candidates,
    candidates_main,
    github_repo,
    is_permissive,
    resolve_project,
    top_pypi_projects,
)


def _info(**info: Any) -> dict[str, Any]:
    return {"info": {"project_urls": None, "home_page": None, "download_url": None,
                     "license": None, "classifiers": [], **info}}


# Self-written responses in the shape of https://pypi.org/pypi/<name>/json (only `info` matters).
PYPI: dict[str, dict[str, Any]] = {
    "alpha": _info(project_urls={"Documentation": "https://alpha.readthedocs.io",
                                 "Homepage": "https://github.com/alpha-org/alpha-docs",
                                 "Source": "https://github.com/Alpha-Org/Alpha.git"},
                   classifiers=["Programming Language :: Python :: 3",
                                "License :: OSI Approved :: MIT License"]),
    "beta": _info(project_urls={"Homepage": "https://github.com/beta/beta/tree/main#readme"},
                  license_expression="Apache-2.0"),
    "gamma": _info(home_page="https://github.com/gamma/gamma",
                   classifiers=["License :: OSI Approved :: GNU General Public License v3 (GPLv3)"]),
    "delta": _info(project_urls={"Homepage": "https://delta.example.org",
                                 "Funding": "https://github.com/sponsors/delta"},
                   home_page="https://delta.github.io/delta", license="MIT"),
    "alpha-compat": _info(project_urls={"Repository": "https://github.com/alpha-org/alpha"},
                          license="MIT"),
    "epsilon": _info(project_urls={"Code": "https://github.com/eps/epsilon/issues"},
                     license_expression="GPL-3.0-or-later OR BSD-3-Clause"),
    "zeta": _info(download_url="https://github.com/zeta/zeta/archive/v1.tar.gz",
                  license="Copyright (c) Zeta Inc. All rights reserved."),
    "tool": _info(project_urls={"Source Code": "https://github.com/someone/tool"},
                  license="BSD"),
}
TOP = {"last_update": "2024-01-01 00:00:00", "rows": [
    {"project": name, "download_count": 1000 - i}
    for i, name in enumerate(["alpha", "beta", "gamma", "delta", "alpha-compat", "missing",
                              "epsilon", "zeta"])
]}


class _PyPI(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        parts = self.path.strip("/").split("/")
        if self.path == "/top.json":
            self._send(200, TOP)
        elif self.path == "/broken/pypi/alpha/json":
            self._send(503, {"message": "down"})
        elif len(parts) == 3 and parts[0] == "pypi" and parts[2] == "json" and parts[1] in PYPI:
            self._send(200, PYPI[parts[1]])
        else:
            self._send(404, {"message": "Not Found"})

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def index() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _PyPI)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(("url", "repo"), [
    ("https://github.com/Owner/Name.git", "Owner/Name"),
    ("https://github.com/psf/requests/tree/main/src", "psf/requests"),
    ("http://www.github.com/a/b/#readme", "a/b"),
    ("git+https://github.com/a/b.git@v1.0", "a/b"),
    ("git@github.com:a/b.git", "a/b"),
    ("https://github.com/sponsors/someone", None),
    ("https://github.com/orgs/acme/repositories", None),
    ("https://gist.github.com/someone/0123abcd", None),
    ("https://someone.github.io/project", None),
    ("https://github.com/someone", None),
    (None, None),
])
def test_github_repo(url: str | None, repo: str | None) -> None:
    assert github_repo(url) == repo


@pytest.mark.parametrize(("expression", "permissive"), [
    ("MIT", True), ("Apache-2.0 WITH LLVM-exception", True), ("GPL-3.0-only", False),
    ("MIT OR GPL-3.0-or-later", True), ("MIT AND GPL-3.0-or-later", False),
    ("(MIT OR LGPL-2.1-only) AND BSD-3-Clause", True), ("BSD-4-Clause", False),
    ("MPL-2.0", False), ("LicenseRef-Proprietary", False), ("MIT OR", False), (None, False),
])
def test_is_permissive(expression: str | None, permissive: bool) -> None:
    assert is_permissive(expression) is permissive


def test_resolve_project_prefers_source_urls_and_reads_licences(index: str) -> None:
    with httpx.Client() as client:
        alpha = resolve_project(client, "alpha", index)
        beta = resolve_project(client, "beta", index)
        delta = resolve_project(client, "delta", index)
        missing = resolve_project(client, "missing", index)
        tool = resolve_project(client, "tool", index)
    assert (alpha.repo, alpha.license) == ("Alpha-Org/Alpha", "MIT")
    assert "project_urls['Source']" in alpha.reason and "classifiers" in alpha.reason
    assert (beta.repo, beta.license) == ("beta/beta", "Apache-2.0")
    assert (delta.repo, delta.reason) == (None, "no GitHub repository in project metadata")
    assert (missing.repo, missing.reason, missing.infra_failure) == (None, "not on PyPI", False)
    assert (tool.repo, tool.license) == ("someone/tool", "BSD-3-Clause")


def test_candidates_funnel(index: str) -> None:
    seen: list[str] = []
    with httpx.Client() as client:
        report = candidates(top_pypi_projects(8, f"{index}/top.json"), client, index,
                            on_progress=lambda info: seen.append(info.name))
    assert seen == [row["project"] for row in TOP["rows"]]
    assert report.counts == {"projects": 8, "repo found": 6, "unique repos": 5,
                             "permissive licence": 3}
    assert [(c.repo, c.project, c.license) for c in report.repos] == [
        ("Alpha-Org/Alpha", "alpha", "MIT"), ("beta/beta", "beta", "Apache-2.0"),
        ("eps/epsilon", "epsilon", "GPL-3.0-or-later OR BSD-3-Clause")]
    dropped = {(d.project, d.stage): d for d in report.dropped}
    assert set(dropped) == {("delta", "repo found"), ("missing", "repo found"),
                            ("alpha-compat", "unique repos"), ("gamma", "permissive licence"),
                            ("zeta", "permissive licence")}
    assert dropped["missing", "repo found"].reason == "not on PyPI"
    assert dropped["alpha-compat", "unique repos"].reason == "same repository as 'alpha'"
    assert "'GPL-3.0-only' is not permissive" in dropped["gamma", "permissive licence"].reason
    assert "licence unknown" in dropped["zeta", "permissive licence"].reason
    assert report.infra_failures == 0


def test_candidates_main_from_top_list(index: str, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    top = tmp_path / "top.json"
    top.write_text(json.dumps(TOP))
    monkeypatch.setenv("BENCHSMITH_PYPI_URL", index)
    out = tmp_path / "out" / "repos.txt"
    report = candidates_main(5, None, out, None, str(top))
    assert out.read_text() == "Alpha-Org/Alpha\nbeta/beta\n"
    written = json.loads((tmp_path / "out" / "repos.txt.report.json").read_text())
    assert written["counts"] == report.counts == {"projects": 5, "repo found": 4,
                                                  "unique repos": 3, "permissive licence": 2}
    assert (written["index_url"], written["source"]) == (index, str(top))
    assert "MIT" in written["permissive_licenses"]


def test_candidates_main_repos_file(index: str, tmp_path: Path) -> None:
    repos = tmp_path / "repos.in"
    repos.write_text("# a comment\nbeta\n\nsomeone/tool  # licence found on PyPI 'tool'\n"
                     "https://github.com/nobody/unlisted#readme\ngamma/gamma\nBETA/Beta\n")
    report = candidates_main(None, repos, tmp_path, index, None)
    assert (tmp_path / "repos.txt").read_text() == "beta/beta\nsomeone/tool\nnobody/unlisted\n"
    assert report.counts == {"projects": 5, "repo found": 5, "unique repos": 4,
                             "permissive licence": 3}
    kept = {c.repo: c for c in report.repos}
    assert (kept["someone/tool"].project, kept["someone/tool"].license) == ("tool", "BSD-3-Clause")
    assert (kept["nobody/unlisted"].project, kept["nobody/unlisted"].license) == (None, "unknown")
    assert "listed explicitly" in kept["nobody/unlisted"].note
    # gamma/gamma has a known, copyleft licence on PyPI: listing it does not override that
    assert [(d.repo, d.stage) for d in report.dropped] == [
        ("gamma/gamma", "permissive licence"), ("BETA/Beta", "unique repos")]


def test_infra_failures_are_told_apart(index: str, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cand, "_BACKOFF_S", 0.01)
    with httpx.Client() as client:
        report = candidates(["alpha"], client, f"{index}/broken")
    assert report.infra_failures == 1 and report.dropped[0].infra_failure
    assert report.dropped[0].reason == "index answered HTTP 503"
    repos = tmp_path / "repos.in"
    repos.write_text("alpha\n")
    with pytest.raises(BenchsmithError, match="answered no project"):
        candidates_main(None, repos, tmp_path / "repos.txt", f"{index}/broken", None)


def test_bad_input_is_one_line(index: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cand, "_BACKOFF_S", 0.01)
    out = tmp_path / "repos.txt"
    bad = tmp_path / "bad.json"
    bad.write_text('{"projects": ["alpha"]}')
    names = tmp_path / "names.txt"
    names.write_text("alpha\nnot a name!\n")
    with pytest.raises(BenchsmithError, match="cannot read"):
        candidates_main(None, tmp_path / "nope.txt", out, index, None)
    with pytest.raises(BenchsmithError, match="not a top-pypi-packages list"):
        candidates_main(3, None, out, index, str(bad))
    with pytest.raises(BenchsmithError, match="cannot read the top-PyPI list"):
        top_pypi_projects(3, f"{index}/no-such-list.json")
    with pytest.raises(BenchsmithError, match=r"names.txt:2: not a PyPI project name"):
        candidates_main(None, names, out, index, None)
    with pytest.raises(BenchsmithError, match="exactly one of"):
        candidates_main(3, names, out, index, None)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _PyPI)  # bound, then closed: nobody listens
    port = server.server_address[1]
    server.server_close()
    names.write_text("alpha\nbeta\n")
    with pytest.raises(BenchsmithError, match="package index unreachable") as error:
        candidates_main(None, names, out, f"http://127.0.0.1:{port}", None)
    assert "\n" not in str(error.value)
    assert not out.exists()
