"""A fake npm registry on 127.0.0.1 serving self-written packages with known publish times.

It answers what npm asks of a registry for an install: the packument of a package (with its
``time`` field, the publish date of each version) and each version's tarball, built in memory
(a ``package.json`` and an ``index.js`` exporting the version). Point npm at it with
``npm_config_registry=<url>``; every request path is logged.
"""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import hashlib
import io
import json
import tarfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import unquote, urlsplit

from benchsmith.testing.loopback import LoopbackServer

__all__ = ["FakeNpmRegistry", "FakePackage"]


def _tarball(name: str, version: str, dependencies: dict[str, str], node: str | None,
             bins: dict[str, str] | None = None) -> bytes:
    manifest: dict[str, object] = {"name": name, "version": version, "main": "index.js",
                                   "dependencies": dependencies}
    if node:
        manifest["engines"] = {"node": node}
    if bins:
        manifest["bin"] = bins
    files = {
        "package/package.json": json.dumps(manifest, indent=2).encode(),
        "package/index.js": f"module.exports = {json.dumps(version)};\n".encode(),
    }
    for program, path in (bins or {}).items():  # each prints its name and version
        files[f"package/{path}"] = (f"#!/usr/bin/env node\nconsole.log({json.dumps(program)}, "
                                    f"{json.dumps(version)});\n").encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            info.size, info.mtime = len(data), 499162500
            info.mode = 0o755 if path.removeprefix("package/") in (bins or {}).values() else 0o644
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(buffer.getvalue(), mtime=0)  # the same bytes on every request


@dataclass
class FakePackage:
    """A package and the publish time of each version (UTC); versions may depend on others,
    state the Node releases they run on (``engines.node``) and install programs (``bin``)."""

    name: str
    published: dict[str, dt.datetime]
    dependencies: dict[str, dict[str, str]] = field(default_factory=dict)  # version -> deps
    engines: dict[str, str] = field(default_factory=dict)  # version -> engines.node range
    # versions the packument lists whose tarball is gone (answered 404), as after an unpublish
    tarball_gone: set[str] = field(default_factory=set)
    bins: dict[str, str] = field(default_factory=dict)  # every version's programs: name -> file

    def tarball(self, version: str) -> bytes:
        """The tarball of `version`."""
        return _tarball(self.name, version, self.dependencies.get(version, {}),
                        self.engines.get(version), self.bins)


def _iso(when: dt.datetime) -> str:
    return when.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


class FakeNpmRegistry(LoopbackServer):
    """Serve `packages` as an npm registry; `requests` lists the paths asked for."""

    def __init__(self, packages: list[FakePackage]) -> None:
        self.packages = {p.name: p for p in packages}
        self.requests: list[str] = []
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                path = unquote(urlsplit(self.path).path)
                registry.requests.append(path)
                status, body, kind = registry.answer(path)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._serve(Handler)

    def packument(self, package: FakePackage) -> dict[str, object]:
        """The registry document of `package`, as npm's registry writes it."""
        ordered = sorted(package.published, key=lambda v: package.published[v])
        versions = {}
        for version in ordered:
            data = package.tarball(version)
            versions[version] = {
                "name": package.name, "version": version,
                "dependencies": package.dependencies.get(version, {}),
                **({"engines": {"node": package.engines[version]}}
                   if version in package.engines else {}),
                **({"bin": package.bins} if package.bins else {}),
                "dist": {
                    "tarball": f"{self.url}/{package.name}/-/{package.name.split('/')[-1]}-{version}.tgz",
                    "shasum": hashlib.sha1(data).hexdigest(),
                    "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode(),
                },
            }
        times = {v: _iso(package.published[v]) for v in ordered}
        newest = max(ordered, key=lambda v: tuple(int(p) for p in v.split("-")[0].split(".")))
        return {
            "name": package.name, "dist-tags": {"latest": newest}, "versions": versions,
            "time": {"created": times[ordered[0]], "modified": times[ordered[-1]], **times},
        }

    def answer(self, path: str) -> tuple[int, bytes, str]:
        """Status, body and content type for a GET of `path`."""
        name, _, rest = path.lstrip("/").partition("/-/")
        package = self.packages.get(name)
        if package is None:
            return 404, b'{"error":"Not found"}', "application/json"
        if not rest:
            return 200, json.dumps(self.packument(package)).encode(), "application/json"
        version = rest.removeprefix(name.split("/")[-1] + "-").removesuffix(".tgz")
        if version not in package.published or version in package.tarball_gone:
            return 404, b'{"error":"Not found"}', "application/json"
        return 200, package.tarball(version), "application/octet-stream"
