"""The image a benchmark task asks for (`ubuntu:22.04`, `python:3.11`): used when present,
pulled when a registry answers, else a local stand-in where one is fair.

Only bare Debian-family images have a stand-in: the minimal Debian rootfs of
:data:`~benchsmith.sandbox.docker.rootfs.BARE_ROOTFS_IMAGE`, with nothing preinstalled.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from benchsmith.core import BenchsmithError
from benchsmith.sandbox.docker.base import pull_image
from benchsmith.sandbox.docker.rootfs import (
    BARE_ROOTFS_IMAGE,
    ensure_rootfs,
    image_exists,
)

# Images for which a bare Debian root filesystem is a fair stand-in.
STAND_IN_FOR = ("ubuntu", "debian")

_failed_pulls: dict[str, str] = {}
_lock = threading.Lock()


def provide_task_image(client: Any, wanted: str,
                       progress: Callable[[str], None] | None = None) -> tuple[str, str]:
    """(image to start from, how it was obtained) for a task asking for `wanted`; a
    BenchsmithError when it can neither be pulled nor stood in for."""
    if image_exists(client, wanted):
        return wanted, f"{wanted} (local)"
    with _lock:  # one pull attempt per image and process: registries do not come back mid-run
        note = _failed_pulls.get(wanted)
        if note is None:
            pulled, note = pull_image(wanted)
            if pulled:
                return wanted, note
            _failed_pulls[wanted] = note
    if wanted.split("/")[-1].split(":")[0] not in STAND_IN_FOR:
        raise BenchsmithError(f"base image {wanted} is not available ({note}) and has no local "
                              "stand-in (only ubuntu/debian images have one)")
    built = ensure_rootfs(client, progress=progress, bare=True)
    return BARE_ROOTFS_IMAGE, f"{BARE_ROOTFS_IMAGE} standing in for {wanted} ({note}; {built})"
