"""A package index on 127.0.0.1 that lists only the files PyPI had at a date, for installers
without ``--exclude-newer`` (pip, the only installer for Python 2.7 environments).

``http://127.0.0.1:PORT/<RFC 3339 instant>/simple/<project>/`` is a PEP 503 page built from the
upstream index's PEP 691 JSON: files uploaded after the instant are left out (a project may get
an instant of its own, ``/<instant>,<name>=<instant>/simple/``, as uv's
``--exclude-newer-package`` allows), each link keeps
its hash, ``data-requires-python`` (so pip picks releases for the interpreter) and
``data-yanked``. pip then downloads the files from their own hosts, as from PyPI.
"""

from __future__ import annotations

import html
import os
import re
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

import httpx
from packaging.utils import canonicalize_name

UPSTREAM = "https://pypi.org/simple"
_PATH = re.compile(r"^/(?P<stamp>[^/]+)/simple/(?P<project>[^/]+)/?$")
_lock = threading.Lock()
_server: ThreadingHTTPServer | None = None
_elsewhere: dict[str, ThreadingHTTPServer] = {}  # listeners on other addresses, by address


def _instant(stamp: str) -> datetime:
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


class _Handler(BaseHTTPRequestHandler):
    server: _IndexServer

    def do_GET(self) -> None:  # noqa: N802 (the http.server API)
        match = _PATH.match(unquote(self.path.split("?", 1)[0]))
        if not match:
            return self._send(404, "not a /<date>/simple/<project>/ path")
        project = canonicalize_name(match["project"])
        stamp, *overrides = match["stamp"].split(",")
        for override in overrides:
            name, _, moment = override.partition("=")
            if canonicalize_name(name) == project:
                stamp = moment
        try:
            until = _instant(stamp)
        except ValueError:
            return self._send(400, f"not an RFC 3339 instant: {stamp}")
        try:
            files = self.server.files(project)
        except httpx.HTTPError as exc:
            return self._send(502, f"upstream index: {exc}")
        if files is None:
            return self._send(404, "no such project")
        self._send(200, page(match["project"], files, until), "text/html; charset=utf-8")

    def _send(self, status: int, body: str, kind: str = "text/plain; charset=utf-8") -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the http.server API)
        return  # quiet: installs report their own errors


class _IndexServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, upstream: str, host: str = "127.0.0.1") -> None:
        super().__init__((host, 0), _Handler)
        self.upstream = upstream.rstrip("/")
        self.cache: dict[str, list[dict[str, Any]] | None] = {}
        self.client = httpx.Client(timeout=60, follow_redirects=True, headers={
            "Accept": "application/vnd.pypi.simple.v1+json"})

    def files(self, project: str) -> list[dict[str, Any]] | None:
        """The project's files as the upstream index lists them (None: no such project)."""
        if project not in self.cache:
            response = self.client.get(f"{self.upstream}/{project}/")
            if response.status_code == 404:
                self.cache[project] = None
            else:
                response.raise_for_status()
                self.cache[project] = response.json().get("files", [])
        return self.cache[project]


def page(project: str, files: list[dict[str, Any]], until: datetime) -> str:
    """The PEP 503 page of `project` with the files uploaded by `until`."""
    links = []
    for entry in files:
        uploaded = entry.get("upload-time")
        if not uploaded or _instant(uploaded) > until:
            continue  # PyPI has upload times for every file; one without cannot be dated
        url = entry["url"]
        if sha := (entry.get("hashes") or {}).get("sha256"):
            url += f"#sha256={sha}"
        attributes = ""
        if entry.get("requires-python"):
            attributes += f' data-requires-python="{html.escape(entry["requires-python"])}"'
        if entry.get("yanked"):
            reason = entry["yanked"] if isinstance(entry["yanked"], str) else ""
            attributes += f' data-yanked="{html.escape(reason)}"'
        links.append(f'<a href="{html.escape(url)}"{attributes}>{html.escape(entry["filename"])}</a><br/>')
    return (f"<!DOCTYPE html><html><head><title>Links for {html.escape(project)}</title></head>"
            f"<body><h1>Links for {html.escape(project)}</h1>{''.join(links)}</body></html>\n")


def dated_index_url(stamp: str, packages: dict[str, str] | None = None) -> str:
    """The index URL that shows PyPI (or ``BENCHSMITH_INDEX_UPSTREAM``) as it was at `stamp`,
    and each of `packages` (name -> instant) as it was at its own instant; the server starts
    on first use and serves the rest of the process."""
    global _server
    with _lock:
        if _server is None:
            _server = _start("127.0.0.1")
        port = _server.server_address[1]
    path = ",".join([stamp, *(f"{canonicalize_name(n)}={t}" for n, t in sorted((packages or {}).items()))])
    return f"http://127.0.0.1:{port}/{path}/simple/"


def _start(host: str) -> _IndexServer:
    server = _IndexServer(os.environ.get("BENCHSMITH_INDEX_UPSTREAM", UPSTREAM), host)
    threading.Thread(target=server.serve_forever, daemon=True,
                     name=f"benchsmith-dated-index-{host}").start()
    return server


def reachable_from(env: dict[str, str], host: str) -> dict[str, str]:
    """`env` with a dated index URL made reachable at `host` (an address of this machine that
    a container reaches, such as its network's gateway): served there too, and trusted by pip,
    which trusts plain HTTP on loopback only."""
    url = env.get("PIP_INDEX_URL", "")
    if _server is None or not url.startswith(f"http://127.0.0.1:{_server.server_address[1]}/"):
        return env
    with _lock:
        if host not in _elsewhere:
            _elsewhere[host] = _start(host)
        port = _elsewhere[host].server_address[1]
    path = url.split("/", 3)[3]
    return {**env, "PIP_INDEX_URL": f"http://{host}:{port}/{path}",
            "PIP_TRUSTED_HOST": f"{host}:{port}"}
