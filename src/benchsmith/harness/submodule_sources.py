"""Submodules that could not be checked out, provided from PyPI where the package index has them.

A project may keep a helper package it bootstraps its own setup with as a git submodule, on a
host that cannot be reached (a setup.py that runs ``git submodule update`` and then imports the
package from the submodule's directory). When the missing submodule's directory is named like a
project on the package index, and its URL names a repository of that name too (a submodule
``lib`` from ``.../acme/lib-tools.git`` is no project ``lib``), the newest source distribution of that project uploaded by the
checkout's date (or by the commit that last moved the submodule's pointer, if earlier) is
unpacked into the directory, provided it holds a Python package of the
directory's name (the submodule's own layout: ``setup.py`` beside ``<name>/__init__.py``). A
file :data:`MARKER` in the directory says which release it is, so records can name it.
"""

from __future__ import annotations

import email.parser
import hashlib
import io
import os
import re
import shutil
import tarfile
import tempfile
import zipfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx
from packaging.utils import canonicalize_name

from benchsmith.core import BenchsmithError
from benchsmith.sandbox.dated_index import UPSTREAM

MARKER = ".benchsmith-from-pypi"
_SDIST = (".tar.gz", ".tgz", ".zip", ".tar.bz2")


def _instant(stamp: str) -> datetime:
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def newest_sdist(project: str, until: str, client: httpx.Client) -> dict[str, Any] | None:
    """The newest source distribution of `project` uploaded by `until` (a PEP 691 file entry,
    its ``url`` absolute), or None."""
    upstream = os.environ.get("BENCHSMITH_INDEX_UPSTREAM", UPSTREAM).rstrip("/")
    page = f"{upstream}/{canonicalize_name(project)}/"
    response = client.get(page, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    if response.status_code == 404:
        return None
    response.raise_for_status()
    limit = _instant(until)
    found = [f for f in response.json().get("files", [])
             if f.get("filename", "").endswith(_SDIST) and f.get("upload-time")
             and not f.get("yanked") and _instant(f["upload-time"]) <= limit]
    if not found:
        return None
    newest = max(found, key=lambda f: _instant(f["upload-time"]))
    return {**newest, "url": urljoin(page, newest["url"])}


def _members(data: bytes, filename: str) -> dict[str, bytes]:
    """The regular files of an sdist, by path below its top directory."""
    files: dict[str, bytes] = {}
    if filename.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                if not info.is_dir():
                    files[info.filename] = archive.read(info)
    else:
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            for member in archive.getmembers():
                extracted = archive.extractfile(member) if member.isfile() else None
                if extracted is not None:
                    files[member.name] = extracted.read()
    stripped: dict[str, bytes] = {}
    for name, content in files.items():
        _, _, below = name.partition("/")
        if below and ".." not in Path(below).parts and not below.startswith("/"):
            stripped[below] = content
    return stripped


def provide_from_pypi(repo: Path, missing: list[str], until: str) -> dict[str, str]:
    """Fill each `missing` submodule directory of `repo` whose name is a project with a Python
    package of that name on the index by `until`; the provided ones (path -> ``name==version``
    of the file). Anything unreachable or unfit leaves the directory as it was."""
    provided: dict[str, str] = {}
    urls = _urls(repo)
    with httpx.Client(timeout=60, follow_redirects=True) as client:
        for path in missing:
            package = Path(path).name
            if _repository_name(urls.get(path, "")) != canonicalize_name(package):
                continue  # the directory's name alone says nothing about what it holds
            try:
                entry = newest_sdist(package, _pointer_date(repo, path, until), client)
                if entry is None:
                    continue
                data = client.get(entry["url"]).raise_for_status().content
            except (httpx.HTTPError, ValueError):
                continue
            wanted = (entry.get("hashes") or {}).get("sha256")
            if wanted and hashlib.sha256(data).hexdigest() != wanted:
                continue
            try:
                files = _members(data, entry["filename"])
            except (tarfile.TarError, zipfile.BadZipFile, OSError):
                continue
            if f"{package}/__init__.py" not in files:
                continue  # not the submodule's layout: its package is not at the top
            files.update(_egg_info(files))
            release = _release(entry["filename"], package)
            target = repo / path
            staging = Path(tempfile.mkdtemp(dir=repo, prefix=".submodule-"))
            for name, content in files.items():
                (staging / name).parent.mkdir(parents=True, exist_ok=True)
                (staging / name).write_bytes(content)
            (staging / MARKER).write_text(f"{release}\n")
            shutil.rmtree(target, ignore_errors=True)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(staging), target)
            provided[path] = release
    return provided


def _egg_info(files: dict[str, bytes]) -> dict[str, bytes]:
    """The ``<name>.egg-info/PKG-INFO`` that ``setup.py egg_info`` would write, from the sdist's
    own PKG-INFO, when the sdist holds none. A bootstrap that finds no metadata in the
    directory makes it in-process with setuptools' ``run_setup``, and Cython's compiled
    modules can crash the build that follows (``SystemError: bad argument to internal
    function`` or a segfault, on the first build in a fresh checkout only); with the metadata
    there the bootstrap only reads it."""
    if "PKG-INFO" not in files or any(n.endswith(".egg-info/PKG-INFO") for n in files):
        return {}
    metadata = email.parser.BytesHeaderParser().parsebytes(files["PKG-INFO"])
    name = re.sub(r"[^A-Za-z0-9.]+", "_", metadata.get("Name") or "")
    return {f"{name}.egg-info/PKG-INFO": files["PKG-INFO"]} if name else {}


def _urls(repo: Path) -> dict[str, str]:
    """Each submodule path of `.gitmodules` with its URL."""
    from benchsmith.harness.checkout import git

    try:
        listed = git("config", "-f", ".gitmodules", "--get-regexp", r"^submodule\..*\.(path|url)$",
                     cwd=repo)
    except BenchsmithError:
        return {}
    paths: dict[str, str] = {}
    urls: dict[str, str] = {}
    for line in listed.splitlines():
        key, _, value = line.partition(" ")
        name, _, field = key.removeprefix("submodule.").rpartition(".")
        (paths if field == "path" else urls)[name] = value.strip()
    return {path: urls.get(name, "") for name, path in paths.items()}


def _repository_name(url: str) -> str:
    """The repository a submodule URL names, as a project name (``.../astropy-helpers.git``:
    ``astropy-helpers``)."""
    last = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    return canonicalize_name(last.removesuffix(".git")) if last else ""


def _pointer_date(repo: Path, path: str, until: str) -> str:
    """When the checkout's history last moved the submodule's pointer (the release it points at
    was out by then), or `until` if that is earlier or unknown."""
    from benchsmith.harness.checkout import git

    try:
        moved = git("log", "-1", "--format=%cI", "HEAD", "--", path, cwd=repo).strip()
        return moved if moved and _instant(moved) < _instant(until) else until
    except (BenchsmithError, ValueError):
        return until


def _release(filename: str, package: str) -> str:
    """``name==version`` from an sdist's file name."""
    stem = next(filename[: -len(s)] for s in _SDIST if filename.endswith(s))
    name, _, version = stem.rpartition("-")
    return f"{canonicalize_name(name or package)}=={version}"


def provided_submodules(repo: Path, paths: list[str]) -> dict[str, str]:
    """Which of the submodule `paths` of `repo` were provided from the index (path -> release)."""
    found: dict[str, str] = {}
    for path in paths:
        marker = repo / path / MARKER
        if marker.is_file():
            found[path] = marker.read_text().strip()
    return found
