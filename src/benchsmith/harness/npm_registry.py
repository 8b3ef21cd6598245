"""The npm registry, read directly: packuments, version ranges, verified tarballs unpacked into
a cache. The registry is ``npm_config_registry`` when set (as npm itself reads it), else the
public one; TLS trusts the host's CA bundle."""

from __future__ import annotations

import base64
import hashlib
import os
import ssl
import tarfile
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import nodesemver

from benchsmith.core import BenchsmithError
from benchsmith.harness.checkout import cache_dir
from benchsmith.sandbox.tools import host_ca_bundle

__all__ = ["DEFAULT_REGISTRY", "NotOnRegistry", "fetch_package", "packument", "registry_url", "resolve_version"]

DEFAULT_REGISTRY = "https://registry.npmjs.org"
TIMEOUT_S = 120.0


class NotOnRegistry(BenchsmithError):
    """The registry answered 404 for a package: never published, or unpublished."""


def registry_url() -> str:
    """The npm registry in use, without a trailing slash."""
    return (os.environ.get("npm_config_registry")  # noqa: SIM112 (npm reads it lower-case)
            or os.environ.get("NPM_CONFIG_REGISTRY")
            or DEFAULT_REGISTRY).rstrip("/")


def _client() -> httpx.Client:
    bundle = host_ca_bundle()
    context = ssl.create_default_context(cafile=bundle) if bundle else ssl.create_default_context()
    return httpx.Client(verify=context, timeout=TIMEOUT_S, follow_redirects=True, trust_env=True)


def packument(name: str, *, full: bool = False, registry: str | None = None) -> dict[str, Any]:
    """The registry's document for package `name`; `full` includes the ``time`` field."""
    url = f"{registry or registry_url()}/{quote(name, safe='@')}"
    headers = {} if full else {"Accept": "application/vnd.npm.install-v1+json"}
    try:
        with _client() as client:
            response = client.get(url, headers=headers)
    except httpx.HTTPError as exc:
        raise BenchsmithError(f"npm registry not reachable for {name} ({url}): {exc}") from None
    if response.status_code == 404:
        raise NotOnRegistry(f"package {name} is not on the npm registry ({registry_url()})")
    if response.status_code != 200:
        raise BenchsmithError(f"npm registry answered {response.status_code} for {name} ({url})")
    data: dict[str, Any] = response.json()
    return data


def resolve_version(name: str, spec: str, doc: dict[str, Any] | None = None) -> str:
    """The newest version of `name` that `spec` (a version, range or dist-tag) allows."""
    doc = doc or packument(name)
    if spec in (doc.get("dist-tags") or {}):
        return str(doc["dist-tags"][spec])
    versions = list(doc.get("versions") or {})
    try:
        best = nodesemver.max_satisfying(versions, spec, loose=True)
    except (ValueError, TypeError):
        best = None
    if not best:
        raise BenchsmithError(f"{name}@{spec} is not on the npm registry ({registry_url()})")
    return str(best)


def _verify(data: bytes, dist: dict[str, Any], what: str) -> None:
    integrity = str(dist.get("integrity") or "")
    algorithm, _, digest = integrity.partition("-")
    if algorithm in {"sha512", "sha384", "sha256"} and digest:
        actual = base64.b64encode(hashlib.new(algorithm, data).digest()).decode()
        if actual != digest:
            raise BenchsmithError(f"{what}: the download does not match its {algorithm} integrity")
    elif dist.get("shasum"):
        if hashlib.sha1(data).hexdigest() != dist["shasum"]:
            raise BenchsmithError(f"{what}: the download does not match its shasum")
    else:
        raise BenchsmithError(f"{what}: the registry gives no integrity or shasum to verify")


def fetch_package(name: str, version: str, cache: Path | None = None) -> Path:
    """Download, verify and unpack `name`@`version` (an exact version) into the cache; returns
    the unpacked package directory (what ``package/`` holds in the tarball)."""
    root = cache or cache_dir() / "npm-packages"
    target = root / f"{name.replace('/', '+')}-{version}"
    if (target / "package.json").is_file():
        return target
    doc = packument(name)
    dist = ((doc.get("versions") or {}).get(version) or {}).get("dist")
    if not dist:
        have = sorted(doc.get("versions") or {}, key=_sort_key)[-5:]
        raise BenchsmithError(f"{name}@{version} is not on the npm registry ({registry_url()}); "
                              f"newest there: {', '.join(have) or 'none'}")
    what = f"{name}@{version}"
    try:
        with _client() as client:
            response = client.get(dist["tarball"])
            response.raise_for_status()
    except httpx.HTTPError as exc:
        raise BenchsmithError(f"download of {what} failed: {exc}") from None
    _verify(response.content, dist, what)
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root, prefix=".unpack-") as scratch:
        archive = Path(scratch) / "package.tgz"
        archive.write_bytes(response.content)
        with tarfile.open(archive) as tar:
            tar.extractall(scratch, filter="data")
        unpacked = next(p for p in Path(scratch).iterdir() if p.is_dir())
        try:
            unpacked.rename(target)
        except OSError:  # another process unpacked it first
            if not (target / "package.json").is_file():
                raise
    return target


def _sort_key(version: str) -> tuple[int, ...]:
    parts = version.split("-")[0].split(".")
    return tuple(int(p) if p.isdigit() else 0 for p in parts)

