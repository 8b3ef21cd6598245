"""Base images for Docker sandboxes, one per Python minor: ``benchsmith/base:py3.X``.

An official ``python:3.X-slim`` image plus git, build tools and uv when a registry can be
reached; otherwise a debootstrapped Debian rootfs (:mod:`.rootfs`) plus the host's
own interpreter prefix (pyenv, uv-managed) copied in at the same path. No CA bundle is
baked into any image: sandboxes mount it at run time.
"""

from __future__ import annotations

import contextlib
import os
import re
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from benchsmith.core import BenchsmithError
from benchsmith.sandbox.docker.rootfs import (
    ROOTFS_IMAGE,
    ensure_rootfs,
    image_exists,
    machine_lock,
    raise_for_disk,
)
from benchsmith.sandbox.host_python import (
    IMPORT_CHECK,
    add_interpreter,
    buildable_pythons,
    check_command,
)
from benchsmith.sandbox.pythons import version_key
from benchsmith.sandbox.tools import uv_binary

# Bumped when what a base image contains changes (2: keeps test.support; 3: netbase).
BASE_LAYOUT = "3"
BASE_REPOSITORY = "benchsmith/base"
PULL_STALL_TIMEOUT_S = 30
# netbase: /etc/services and /etc/protocols, which every full Debian/Ubuntu system and CI runner
# has; without them getaddrinfo("127.0.0.1", "http") fails and tests of servers with it.
SLIM_PACKAGES = "git gcc g++ make libc6-dev patch procps xz-utils bzip2 unzip curl pkg-config " \
                "libssl-dev libffi-dev zlib1g-dev netbase"

PROXY_VARS = ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")

Progress = Callable[[str], None]


class BaseImageResult(BaseModel):
    """Which base image a sandbox uses and how it was obtained."""

    name: str
    how: Literal["cached", "pulled", "built"]
    detail: str


DOCKER_API_TIMEOUT_S = 600


def docker_client() -> Any:
    """A Docker SDK client for the local engine, or a one-line error saying what to do."""
    try:
        import docker
    except ImportError:
        raise BenchsmithError(
            "the docker backend needs the Docker SDK: install benchsmith[docker] (`pip install docker`)"
        ) from None
    import requests

    try:
        # Committing a large container or copying a big checkout can take minutes on a busy
        # engine; the SDK's default of 60 s turned such waits into failures.
        client = docker.from_env(timeout=DOCKER_API_TIMEOUT_S)
        client.ping()
    except (docker.errors.DockerException, requests.RequestException, OSError) as exc:
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        if "permission denied" in reason.lower():
            raise BenchsmithError(
                f"Docker daemon not reachable ({reason}): run as root or add your user to "
                "the `docker` group"
            ) from None
        raise BenchsmithError(
            f"Docker daemon not reachable ({reason}): start it with `dockerd` or "
            "`systemctl start docker`"
        ) from None
    return client


def base_image_name(python: str) -> str:
    """The tag of the base image for Python `python` ("3.9" -> benchsmith/base:py3.9)."""
    return f"{BASE_REPOSITORY}:py{python}"


def built_base_images(client: Any) -> list[str]:
    """Python versions whose base image already exists locally."""
    versions = []
    for image in client.images.list(filters={"label": "benchsmith=1"}):
        for tag in image.tags:
            if tag.startswith(f"{BASE_REPOSITORY}:py"):
                versions.append(tag.rsplit(":py", 1)[1])
    return sorted(set(versions), key=version_key)


def image_pythons(client: Any, image: str) -> dict[str, str]:
    """The ``python3.X`` executables on the PATH of `image` (for a `base_image` override)."""
    import docker

    try:
        listing = client.containers.run(
            image, ["sh", "-c", "ls /usr/local/bin /usr/bin /bin 2>/dev/null"], remove=True,
            network_mode="none", labels={"benchsmith": "1"},
        ).decode(errors="replace")
    except docker.errors.DockerException as exc:
        reason = str(getattr(exc, "explanation", None) or exc).splitlines()[0][:200]
        raise BenchsmithError(f"cannot list the Pythons of image {image}: {reason}") from None
    found = set(re.findall(r"^python(3\.\d+)$", listing, flags=re.MULTILINE))
    return {v: f"python{v}" for v in sorted(found, key=version_key) if version_key(v) >= (3, 6)}


def ensure_base_image(client: Any, python: str, *, rebuild: bool = False,
                      progress: Progress | None = None) -> BaseImageResult:
    """Make sure ``benchsmith/base:py<python>`` exists: cached, else pulled, else built."""
    say = progress or (lambda message: None)
    name = base_image_name(python)
    if not rebuild and _current(client, name):
        return BaseImageResult(name=name, how="cached", detail=_describe(client, name))
    with machine_lock(name):
        if not rebuild and _current(client, name):
            return BaseImageResult(name=name, how="cached", detail=_describe(client, name))
        old_id = client.images.get(name).id if image_exists(client, name) else None
        result = _obtain(client, python, name, say, nocache=rebuild)
        if old_id and client.images.get(name).id != old_id:
            import docker.errors

            with contextlib.suppress(docker.errors.APIError):  # still used by a container
                client.images.remove(old_id)
        return result


def _current(client: Any, name: str) -> bool:
    """The base image exists and has this version's layout (older ones are rebuilt)."""
    if not image_exists(client, name):
        return False
    labels = client.images.get(name).labels or {}
    return labels.get("benchsmith.base_layout") == BASE_LAYOUT


def _obtain(client: Any, python: str, name: str, say: Progress, nocache: bool) -> BaseImageResult:
    """Build `name` on a pulled python:X-slim, else on the debootstrapped rootfs (2.7: on a
    Python 3's base image, :mod:`.python2`)."""
    if version_key(python) < (3, 0):
        return _obtain_python2(client, name, say, nocache)
    started = time.monotonic()
    pulled, pull_note = _pull_slim(client, python, say)
    if pulled:
        try:
            _build_from_slim(client, python, name, nocache)
            return BaseImageResult(name=name, how="pulled", detail=(
                f"python:{python}-slim + build tools + uv ({time.monotonic() - started:.1f} s)"))
        except BenchsmithError as exc:
            pull_note = f"building on python:{python}-slim failed: {exc}"
    prefix = _host_prefix(python, pull_note)
    say(f"building {name} locally ({pull_note})")
    rootfs_note = ensure_rootfs(client, progress=say)
    build_started = time.monotonic()
    _build_from_host(client, python, prefix, name, nocache)
    return BaseImageResult(name=name, how="built", detail=(
        f"{ROOTFS_IMAGE} + host {prefix} + uv; {rootfs_note}; image built in "
        f"{time.monotonic() - build_started:.1f} s ({pull_note})"))


def _obtain_python2(client: Any, name: str, say: Progress, nocache: bool) -> BaseImageResult:
    from benchsmith.sandbox.docker.python2 import build_python2_base, helper_python

    available = sorted(set(buildable_pythons()) | set(built_base_images(client)), key=version_key)
    helper = helper_python(available)
    if helper is None:
        raise BenchsmithError("no base image for Python 2.7: it is built on a Python 3.7-3.11 "
                              f"base image, and none can be had (have: {', '.join(available)})")
    helper_image = ensure_base_image(client, helper, progress=say).name
    say(f"building {name} locally on {helper_image}")
    detail = build_python2_base(client, name, nocache, helper_image, _build)
    return BaseImageResult(name=name, how="built", detail=detail)


def _describe(client: Any, name: str) -> str:
    image = client.images.get(name)
    return f"{name} ({image.short_id}, created {image.attrs.get('Created', '?')[:19]})"


def _host_prefix(python: str, pull_note: str) -> Path:
    prefixes = buildable_pythons()
    if python not in prefixes:
        raise BenchsmithError(
            f"no base image for Python {python}: {pull_note}, and the host has no relocatable "
            f"CPython {python} (have: {', '.join(prefixes) or 'none'}); install it with pyenv"
        )
    return Path(prefixes[python])


def _pull_slim(client: Any, python: str, say: Progress) -> tuple[bool, str]:
    """Pull ``python:<python>-slim``; a stalled or unreachable registry counts as failure."""
    say(f"pulling python:{python}-slim")
    return pull_image(f"python:{python}-slim")


def pull_image(name: str) -> tuple[bool, str]:
    """Pull `name` (``repository[:tag]``); a stalled or unreachable registry counts as failure.
    Returns (pulled, one-line note)."""
    import docker

    repository, _, tag = name.rpartition(":") if ":" in name.split("/")[-1] else (name, "", "latest")
    # A client of its own: its timeout bounds each read, so a stalled pull fails soon
    # while a slow but progressing one goes on.
    api = docker.from_env(timeout=PULL_STALL_TIMEOUT_S).api
    try:
        for event in api.pull(repository, tag=tag, stream=True, decode=True):
            if "error" in event:
                return False, f"pull of {name} failed: {event['error'][:200]}"
    except (docker.errors.DockerException, OSError) as exc:
        raise_for_disk(str(exc), f"pulling {name}")
        reason = str(getattr(exc, "explanation", None) or exc or type(exc).__name__)
        return False, f"pull of {name} failed: {reason.splitlines()[0][:160]}"
    finally:
        api.close()
    return True, f"pulled {name}"


def _build_from_slim(client: Any, python: str, name: str, nocache: bool) -> None:
    dockerfile = f"""\
FROM python:{python}-slim
RUN apt-get update && apt-get install -y --no-install-recommends {SLIM_PACKAGES} \\
 && rm -rf /var/lib/apt/lists/*
COPY uv /usr/local/bin/uv
RUN python{python} -c "{IMPORT_CHECK}" && uv --version
CMD ["sleep", "infinity"]
"""
    with tempfile.TemporaryFile() as context:
        with tarfile.open(fileobj=context, mode="w") as tar:
            _add_text(tar, "Dockerfile", dockerfile)
            tar.add(uv_binary(), arcname="uv")
        _build(client, context, name, python, nocache)


def _build_from_host(client: Any, python: str, prefix: Path, name: str, nocache: bool) -> None:
    dockerfile = f"""\
FROM {ROOTFS_IMAGE}
COPY python/ {prefix}/
COPY uv /usr/local/bin/uv
RUN ln -sf {prefix}/bin/python{python} /usr/local/bin/python{python} \\
 && ln -sf python{python} /usr/local/bin/python3 \\
 && {check_command(prefix, python)} \\
 && python{python} --version && uv --version
CMD ["sleep", "infinity"]
"""
    with tempfile.TemporaryFile() as context:
        with tarfile.open(fileobj=context, mode="w") as tar:
            _add_text(tar, "Dockerfile", dockerfile)
            add_interpreter(tar, prefix, python, "python")
            tar.add(uv_binary(), arcname="uv")
        _build(client, context, name, python, nocache)


def _add_text(tar: tarfile.TarFile, name: str, text: str) -> None:
    import io

    data = text.encode()
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = int(time.time())
    tar.addfile(info, io.BytesIO(data))


def _build(client: Any, context: Any, name: str, python: str, nocache: bool) -> None:
    import docker

    context.seek(0)
    labels = {"benchsmith": "1", "benchsmith.python": python, "benchsmith.role": "base",
              "benchsmith.base_layout": BASE_LAYOUT}
    # Proxy variables are predefined build args: used by RUN steps, not kept in the image.
    proxies = {key: os.environ[key] for key in PROXY_VARS if key in os.environ}
    try:
        client.images.build(fileobj=context, custom_context=True, tag=name, labels=labels,
                            rm=True, forcerm=True, pull=False, network_mode="host",
                            buildargs=proxies, nocache=nocache)
    except docker.errors.BuildError as exc:
        log = "".join(str(entry.get("stream") or entry.get("error") or "")
                      for entry in exc.build_log)
        tail = " | ".join(line for line in log.strip().splitlines()[-6:] if line.strip())
        raise_for_disk(log + str(exc), f"building {name}")
        raise BenchsmithError(f"building {name} failed: {tail[-500:]}") from None
    except docker.errors.APIError as exc:
        raise_for_disk(str(exc), f"building {name}")
        raise BenchsmithError(f"building {name} failed: {str(exc)[:300]}") from None
