"""A Debian root filesystem made with debootstrap and imported as an image, once per machine.

Used when no `python:3.X-slim` image can be pulled: benchsmith's base images are then
this rootfs plus an interpreter copied from the host.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

from benchsmith.core import BenchsmithError
from benchsmith.sandbox.host_python import RUNTIME_LIBRARIES

ROOTFS_IMAGE = "benchsmith/rootfs:bookworm"
# Debian's minimal base with nothing added (no Python, no compiler, no CA certificates): the
# stand-in for a bare `ubuntu:22.04` when no registry answers.
BARE_ROOTFS_IMAGE = "benchsmith/rootfs:bookworm-bare"
SUITE = "bookworm"
# Plain HTTP: apt verifies signatures itself, and no CA bundle is needed behind a TLS proxy.
MIRROR = "http://deb.debian.org/debian"
# Build tools for sdists, plus the shared libraries a host-built (pyenv) CPython links to.
PACKAGES = (
    "ca-certificates", "git", "gcc", "g++", "make", "libc6-dev", "patch", "procps",
    "xz-utils", "bzip2", "unzip", "curl", "pkg-config", "tzdata",
    "libssl-dev", "libffi-dev", "zlib1g-dev", "netbase", *RUNTIME_LIBRARIES,
)
# Bumped when PACKAGES change, so an older rootfs is rebuilt (2: netbase, /etc/services).
ROOTFS_LAYOUT = "2"
LABELS = {"benchsmith": "1", "benchsmith.role": "rootfs"}

Progress = Callable[[str], None]


@contextlib.contextmanager
def machine_lock(name: str) -> Iterator[None]:
    """Serialize image builds between benchsmith processes on this machine."""
    directory = os.path.join(tempfile.gettempdir(), "benchsmith-locks")
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name.replace("/", "_") + ".lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def image_exists(client: Any, name: str) -> bool:
    """True if the image `name` is present locally."""
    import docker.errors

    try:
        client.images.get(name)
    except docker.errors.ImageNotFound:
        return False
    return True


def ensure_rootfs(client: Any, *, rebuild: bool = False, progress: Progress | None = None,
                  bare: bool = False) -> str:
    """Return a one-line description of how the rootfs image was obtained (built or cached);
    `bare`: the minimal rootfs with no package added (:data:`BARE_ROOTFS_IMAGE`)."""
    say = progress or (lambda message: None)
    image = BARE_ROOTFS_IMAGE if bare else ROOTFS_IMAGE
    if not rebuild and _current(client, image, bare):
        return f"{image} cached"
    with machine_lock(image.rsplit(":", 1)[1] if bare else "rootfs"):
        if not rebuild and _current(client, image, bare):  # built meanwhile by another process
            return f"{image} cached"
        return _build_rootfs(client, say, image, () if bare else PACKAGES)


def _current(client: Any, image: str, bare: bool) -> bool:
    """The image exists and (but for the bare one) has this version's packages."""
    if not image_exists(client, image):
        return False
    return bare or (client.images.get(image).labels or {}).get(
        "benchsmith.rootfs_layout") == ROOTFS_LAYOUT


def _build_rootfs(client: Any, say: Progress, image: str = ROOTFS_IMAGE,
                  packages: tuple[str, ...] = PACKAGES) -> str:
    debootstrap = shutil.which("debootstrap")
    if debootstrap is None:
        raise BenchsmithError(
            "debootstrap not found, needed to build a base image without a registry: "
            "install it with `apt-get install -y debootstrap`"
        )
    if os.geteuid() != 0:
        raise BenchsmithError("building the base rootfs with debootstrap needs root: run as root once")
    target = tempfile.mkdtemp(prefix="benchsmith-rootfs-", dir="/var/tmp")
    try:
        say(f"debootstrap {SUITE} (once per machine, about a minute)")
        started = time.monotonic()
        include = [f"--include={','.join(packages)}"] if packages else []
        command = [debootstrap, "--variant=minbase", *include, SUITE, target, MIRROR]
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr).strip()[-400:]
            log = os.path.join(target, "debootstrap", "debootstrap.log")
            if os.path.isfile(log):
                with open(log, errors="replace") as handle:
                    tail = handle.read()[-400:]
            raise_for_disk(tail, "debootstrap")
            raise BenchsmithError(f"debootstrap {SUITE} from {MIRROR} failed: {tail}")
        debootstrap_s = time.monotonic() - started
        for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for entry in _listdir(os.path.join(target, cache)):
                if entry.endswith((".deb", "_Packages", "_Release", "_InRelease")):
                    os.remove(os.path.join(target, cache, entry))
        say(f"importing {image}")
        started = time.monotonic()
        _import(client, target, image, {} if image == BARE_ROOTFS_IMAGE
                else {"benchsmith.rootfs_layout": ROOTFS_LAYOUT})
        return (f"{image} built (debootstrap {debootstrap_s:.0f} s, "
                f"import {time.monotonic() - started:.0f} s)")
    finally:
        shutil.rmtree(target, ignore_errors=True)


def _listdir(path: str) -> list[str]:
    return os.listdir(path) if os.path.isdir(path) else []


def _import(client: Any, directory: str, image: str, labels: dict[str, str]) -> None:
    """`tar -C directory -c . | docker import` through the Engine API."""
    repository, _, tag = image.partition(":")
    tar = subprocess.Popen(["tar", "-C", directory, "--numeric-owner", "-c", "."],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert tar.stdout is not None
    changes = [f"LABEL {key}={value}" for key, value in {**LABELS, **labels}.items()]
    try:
        answer = client.api.import_image(src=tar.stdout, repository=repository, tag=tag,
                                         changes=changes, stream_src=True)
    finally:
        tar.stdout.close()
        stderr = tar.communicate()[1].decode(errors="replace")
    if tar.returncode != 0 or "error" in str(answer).lower():
        message = f"{stderr.strip()} {answer}".strip()[-400:]
        raise_for_disk(message, f"importing {image}")
        raise BenchsmithError(f"importing {image} failed: {message}")


def raise_for_disk(message: str, what: str) -> None:
    """Raise a clear error when `message` says the disk is full."""
    lowered = message.lower()
    if "no space left on device" in lowered or "enospc" in lowered:
        raise BenchsmithError(
            f"{what} failed: no space left on device; free disk space (e.g. `benchsmith docker "
            "clean`, `docker system prune`) and retry"
        )
