"""The Docker backend: one container per sandbox, started from a per-Python base image.

Layout inside the container: ``/work/repo`` (the checkout, :attr:`DockerSandbox.workdir`),
``/work/venv`` (the virtualenv), ``/root/.cache/uv`` (a volume shared by all sandboxes),
the host's CA bundle mounted read-only at the system CA path.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import posixpath
import socket
import sys
import uuid
import warnings
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from benchsmith.core import BenchsmithError, ExecResult
from benchsmith.sandbox.docker_base import (
    BaseImageResult,
    base_image_name,
    buildable_pythons,
    built_base_images,
    docker_client,
    ensure_base_image,
)
from benchsmith.sandbox.docker_config import DockerSandboxConfig
from benchsmith.sandbox.docker_exec import run_command
from benchsmith.sandbox.docker_files import (
    SymlinkFound,
    container_path,
    spool,
    tar_bytes,
    tar_host_path,
    untar_file,
)
from benchsmith.sandbox.env import ALLOWED_ENV, FIXED_ENV
from benchsmith.sandbox.pythons import version_key
from benchsmith.sandbox.tools import CA_ENV_VARS, host_ca_bundle

LABEL = "benchsmith"
UV_CACHE_VOLUME = "benchsmith-uv-cache"
UV_CACHE_PATH = "/root/.cache/uv"
CA_PATH = "/etc/ssl/certs/ca-certificates.crt"
VENV = "/work/venv"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Allow-listed host variables whose values are host paths: containers get their own.
_HOST_PATH_VARS = {"PATH", "SSL_CERT_DIR", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "UV_CACHE_DIR",
                   *CA_ENV_VARS}
_CA_VARS = (*CA_ENV_VARS, "CURL_CA_BUNDLE", "GIT_SSL_CAINFO")
_GITCONFIG = (b"[user]\n\tname = benchsmith\n\temail = benchsmith@localhost\n"
              b"[init]\n\tdefaultBranch = main\n[safe]\n\tdirectory = *\n")
_NO_APT = b'#!/bin/sh\necho "apt is disabled in this sandbox (apt_allowed = false)" >&2\nexit 100\n'
_OWNER = f"{socket.gethostname()}:{os.getpid()}"

_LIVE: weakref.WeakSet[DockerSandbox] = weakref.WeakSet()


def close_all() -> None:
    """Close every open Docker sandbox (used on SIGTERM, Ctrl-C and at exit)."""
    for sandbox in list(_LIVE):
        sandbox.close()


atexit.register(close_all)


class DockerSandbox:
    """Runs commands in a fresh container, created on first use and removed on close."""

    workdir = "/work/repo"
    venv = VENV

    def __init__(self, config: DockerSandboxConfig | None = None,
                 progress: Callable[[str], None] | None = None) -> None:
        self.config = config or DockerSandboxConfig()
        self.progress = progress
        self.name = f"benchsmith-{uuid.uuid4().hex[:12]}"
        self.container_id: str | None = None
        self.python: str | None = None
        self.base: BaseImageResult | None = None
        self._client: Any = None
        self._stream_client: Any = None
        # Archives to unpack (at a directory) once the container runs.
        self._pending: list[tuple[str, IO[bytes]]] = []
        self._venv_ready = False
        self._counter = 0
        self._closed = False
        _LIVE.add(self)

    # -- lifecycle -----------------------------------------------------------------
    def __enter__(self) -> DockerSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def client(self) -> Any:
        """The Docker SDK client (connected on first use)."""
        if self._client is None:
            self._client = docker_client()
        return self._client

    def close(self) -> None:
        """Remove the container (unless `keep`); safe to call twice."""
        if self._closed:
            return
        self._closed = True
        _LIVE.discard(self)
        for _, archive in self._pending:
            archive.close()
        self._pending.clear()
        if self.container_id and not self.config.keep:
            import docker.errors

            with contextlib.suppress(docker.errors.NotFound):
                self.client.api.remove_container(self.container_id, force=True)
        for client in (self._stream_client, self._client):
            if client is not None:
                with contextlib.suppress(Exception):
                    client.close()

    def _ensure_started(self) -> str:
        if self._closed:
            raise BenchsmithError(f"sandbox {self.name} is closed")
        if self.container_id is None:
            pythons = self.available_pythons()
            current = f"{sys.version_info[0]}.{sys.version_info[1]}"
            default = current if current in pythons else max(pythons, key=version_key, default="")
            if not default:
                raise BenchsmithError("no Python available for a Docker base image")
            self._start(default)
        assert self.container_id is not None
        return self.container_id

    def _start(self, python: str) -> None:
        """Create and start this sandbox's container from the base image for `python`."""
        import docker.errors
        from docker.types import Mount

        if self.config.base_image:
            image = self.config.base_image
        else:
            self.base = ensure_base_image(self.client, python, progress=self.progress)
            image = self.base.name
        self._ensure_cache_volume()
        mounts = [Mount(UV_CACHE_PATH, UV_CACHE_VOLUME, type="volume")]
        ca_bundle = self.config.ca_bundle or host_ca_bundle()
        if ca_bundle:
            mounts.append(Mount(CA_PATH, os.path.realpath(ca_bundle), type="bind", read_only=True))
        options: dict[str, Any] = dict(
            command=["sleep", "infinity"], name=self.name, detach=True, init=True,
            labels={LABEL: "1", "benchsmith.python": python, "benchsmith.owner": _OWNER},
            network_mode=self.config.network_mode, working_dir=self.workdir, mounts=mounts,
            nano_cpus=int(self.config.cpus * 1e9), mem_limit=self.config.memory,
            pids_limit=self.config.pids_limit, environment={"HOME": "/root"},
        )
        if self.config.disk:
            options["storage_opt"] = {"size": self.config.disk}
        try:
            container = self.client.containers.create(image, **options)
        except docker.errors.APIError as exc:
            if "storage_opt" not in options or "storage" not in str(exc).lower():
                raise BenchsmithError(f"creating a container from {image} failed: "
                                      f"{getattr(exc, 'explanation', exc)}") from None
            warnings.warn(f"disk limit ignored: {getattr(exc, 'explanation', exc)}",
                          RuntimeWarning, stacklevel=3)
            del options["storage_opt"]
            container = self.client.containers.create(image, **options)
        self.container_id = container.id
        self.python = python
        container.start()
        files = [("/root/.gitconfig", _GITCONFIG, 0o644)]
        if not self.config.apt_allowed:
            files += [(f"/usr/local/sbin/{name}", _NO_APT, 0o755) for name in ("apt", "apt-get")]
        for path, content, mode in files:
            container.put_archive("/", tar_bytes(path, content, mode))
        while self._pending:
            where, archive = self._pending.pop(0)
            with archive:
                container.put_archive(where, archive)

    def _ensure_cache_volume(self) -> None:
        import docker.errors

        try:
            self.client.volumes.get(UV_CACHE_VOLUME)
        except docker.errors.NotFound:
            self.client.volumes.create(UV_CACHE_VOLUME, labels={LABEL: "1"})

    def _move_to(self, python: str) -> None:
        """Recreate the container from another Python's base, keeping the checkout."""
        assert self.container_id is not None
        chunks, _ = self.client.api.get_archive(self.container_id, self.workdir)
        repo = spool(chunks)
        self.client.api.remove_container(self.container_id, force=True)
        self.container_id, self._venv_ready = None, False
        # The archive's entries are named repo/...: unpack them in the parent of workdir.
        self._pending.insert(0, (posixpath.dirname(self.workdir), repo))
        self._start(python)

    # -- python ------------------------------------------------------------------------
    def available_pythons(self) -> dict[str, str]:
        """Python versions with a base image, built already or buildable from the host."""
        if self.config.base_image:
            return {self.python: f"python{self.python}"} if self.python else {}
        versions = set(buildable_pythons()) | set(built_base_images(self.client))
        return {v: f"/usr/local/bin/python{v}" for v in sorted(versions, key=version_key)}

    def setup_python(self, version: str) -> str:
        """Create /work/venv with Python `version`, starting the container if needed."""
        if self.config.base_image:
            interpreter = f"python{version}"
            self.python = self.python or version
        else:
            pythons = self.available_pythons()
            if version not in pythons:
                raise BenchsmithError(f"Python {version} is not available here "
                                      f"(have: {', '.join(pythons) or 'none'})")
            interpreter = pythons[version]
        if self.container_id is None:
            self._start(version)
        elif self.python != version and not self.config.base_image:
            self._move_to(version)
        self._venv_ready = False
        result = self.exec(f"rm -rf {VENV} && uv venv --quiet --python {interpreter} {VENV}",
                           cwd="/work", timeout=300, use_venv=False)
        if not result.ok:
            raise BenchsmithError(f"creating a Python {version} virtualenv in "
                                  f"{base_image_name(version)} failed: {result.output.strip()[-300:]}")
        self._venv_ready = True
        return interpreter

    # -- exec --------------------------------------------------------------------------
    def _env(self, extra: dict[str, str] | None, use_venv: bool) -> dict[str, str]:
        env = {name: os.environ[name] for name in ALLOWED_ENV
               if name in os.environ and name not in _HOST_PATH_VARS}
        env.update({name: os.environ[name] for name in self.config.pass_env if name in os.environ})
        env.update(FIXED_ENV)
        env.update(HOME="/root", UV_CACHE_DIR=UV_CACHE_PATH, PATH=SYSTEM_PATH,
                   UV_LINK_MODE="copy")  # the cache is a volume: hard links cannot cross
        if self.config.ca_bundle or host_ca_bundle():
            env.update(dict.fromkeys(_CA_VARS, CA_PATH))
        if use_venv and self._venv_ready:
            env["PATH"] = f"{VENV}/bin:{SYSTEM_PATH}"
            env["VIRTUAL_ENV"] = VENV
        env.update(self.config.env)
        env.update(extra or {})
        return env

    def exec(self, command: str, *, cwd: str | None = None, env: dict[str, str] | None = None,
             timeout: float | None = None, use_venv: bool = True) -> ExecResult:
        """Run `command` with bash in the container; kill its whole session on timeout."""
        container_id = self._ensure_started()
        if self._stream_client is None:
            import docker

            self._stream_client = docker.from_env(timeout=None)
        self._counter += 1
        return run_command(
            self.client, self._stream_client, container_id, command,
            env=self._env(env, use_venv), cwd=container_path(cwd or ".", self.workdir),
            timeout=timeout or self.config.timeout_s, seq=self._counter,
            max_output_bytes=self.config.max_output_bytes,
        )

    # -- files -------------------------------------------------------------------------
    def _put(self, archive: IO[bytes] | bytes) -> None:
        if self._closed:
            raise BenchsmithError(f"sandbox {self.name} is closed")
        if self.container_id is None:  # unpacked when the container starts
            if isinstance(archive, bytes):
                archive = spool([archive])
            self._pending.append(("/", archive))
            return
        with contextlib.ExitStack() as stack:
            if not isinstance(archive, bytes):
                stack.enter_context(archive)
            self.client.api.put_archive(self.container_id, "/", archive)

    def upload(self, host_path: Path, sandbox_path: str) -> None:
        """Copy a host file or directory (symlinks kept) to `sandbox_path`."""
        self._put(tar_host_path(Path(host_path), container_path(sandbox_path, self.workdir)))

    def write_file(self, path: str, content: bytes) -> None:
        """Write `content` to `path` (relative paths are inside the checkout)."""
        self._put(tar_bytes(container_path(path, self.workdir), content))

    def read_file(self, path: str) -> bytes:
        """Read a file from the container (symbolic links are followed)."""
        import docker.errors

        target = container_path(path, self.workdir)
        container_id = self._ensure_started()
        for _ in range(8):
            try:
                chunks, _ = self.client.api.get_archive(container_id, target)
                return untar_file(chunks, target)
            except docker.errors.NotFound:
                raise FileNotFoundError(target) from None
            except SymlinkFound as link:
                target = posixpath.normpath(posixpath.join(posixpath.dirname(target), link.args[0]))
        raise OSError(f"too many levels of symbolic links: {path}")


def clean_leftovers(client: Any, include_cache: bool = False) -> list[str]:
    """Remove benchsmith containers and volumes no live benchsmith process uses.

    The shared uv cache volume stays unless `include_cache`. Returns what was removed.
    """
    import docker.errors

    live = {sandbox.container_id for sandbox in list(_LIVE)}
    removed = []
    for container in client.containers.list(all=True, filters={"label": f"{LABEL}=1"}):
        if container.id in live or _owner_alive(container.labels.get("benchsmith.owner", "")):
            continue
        with contextlib.suppress(docker.errors.NotFound):
            container.remove(force=True)
            removed.append(f"container {container.name}")
    for volume in client.volumes.list(filters={"label": f"{LABEL}=1"}):
        if volume.name == UV_CACHE_VOLUME and not include_cache:
            continue
        with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
            volume.remove(force=True)
            removed.append(f"volume {volume.name}")
    return removed


def _owner_alive(owner: str) -> bool:
    """True if `owner` ("host:pid") is another process on this machine that still runs."""
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
