"""Files in and out of containers: tar archives for the Engine API's archive endpoints."""

from __future__ import annotations

import io
import posixpath
import tarfile
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO

_SPOOL_BYTES = 32 * 1024 * 1024


class SymlinkFound(Exception):
    """The archive holds a symbolic link (to `args[0]`), not the file's content."""


def container_path(path: str, workdir: str) -> str:
    """An absolute, normalized path inside the container (relative ones are under `workdir`)."""
    return posixpath.normpath(posixpath.join(workdir, path))


def _as_root(member: tarfile.TarInfo) -> tarfile.TarInfo:
    member.uid = member.gid = 0
    member.uname = member.gname = "root"
    return member


def spool(chunks: Iterable[bytes] = ()) -> IO[bytes]:
    """A rewound temporary file holding `chunks`, in memory while small; the caller closes it."""
    archive = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)  # noqa: SIM115 (returned)
    for chunk in chunks:
        archive.write(chunk)
    archive.seek(0)
    return archive


def tar_host_path(host_path: Path, target: str) -> IO[bytes]:
    """A tar of `host_path` (a file or a tree, symlinks kept) that unpacks at `target` from /.

    Extracting at / lets the engine create missing parent directories.
    """
    archive = spool()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        tar.add(str(host_path), arcname=target.lstrip("/"), filter=_as_root)
    archive.seek(0)
    return archive


def tar_bytes(target: str, content: bytes, mode: int = 0o644) -> bytes:
    """A tar holding one regular file with `content` at `target` (absolute) from /."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = _as_root(tarfile.TarInfo(target.lstrip("/")))
        info.size = len(content)
        info.mode = mode
        info.mtime = int(time.time())
        tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def untar_file(chunks: Iterable[bytes], path: str) -> bytes:
    """The content of the single regular file in a tar stream from the archive endpoint."""
    with spool(chunks) as archive, tarfile.open(fileobj=archive, mode="r") as tar:
        member = tar.next()
        if member is not None and member.issym():
            raise SymlinkFound(member.linkname)
        if member is None or member.isdir():
            raise IsADirectoryError(path)
        handle = tar.extractfile(member)
        if handle is None:
            raise OSError(f"{path} is not a regular file")
        return handle.read()
