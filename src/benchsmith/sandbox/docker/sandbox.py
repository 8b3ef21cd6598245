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
import sys
import uuid
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from benchsmith.core import BenchsmithError, ExecResult
from benchsmith.sandbox.dated_index import reachable_from
from benchsmith.sandbox.deadline import command_timeout
from benchsmith.sandbox.docker.base import (
    BASE_LAYOUT,
    BaseImageResult,
    base_image_name,
    buildable_pythons,
    built_base_images,
    docker_client,
    ensure_base_image,
    image_pythons,
)
from benchsmith.sandbox.docker.config import DockerSandboxConfig
from benchsmith.sandbox.docker.container import (
    LABEL,
    UV_CACHE_PATH,
    UV_CACHE_VOLUME,
    WORKDIR,
    ca_bundle,
    create_container,
    owner_label,
    remove_leftovers,
    why_unusable,
)
from benchsmith.sandbox.docker.exec import run_command
from benchsmith.sandbox.docker.files import (
    SymlinkFound,
    container_path,
    spool,
    tar_bytes,
    tar_host_path,
    untar_file,
)
from benchsmith.sandbox.docker.python2 import venv_command, with_python2
from benchsmith.sandbox.env import ALLOWED_ENV, FIXED_ENV
from benchsmith.sandbox.pythons import version_key
from benchsmith.sandbox.tools import CA_ENV_VARS, uv_binary

__all__ = ["DockerSandbox", "UV_CACHE_VOLUME", "clean_leftovers", "close_all"]

VENV = "/work/venv"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Allow-listed host variables whose values are host paths: containers get their own.
_HOST_PATH_VARS = {"PATH", "SSL_CERT_DIR", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "UV_CACHE_DIR",
                   *CA_ENV_VARS}
_CA_VARS = (*CA_ENV_VARS, "CURL_CA_BUNDLE", "GIT_SSL_CAINFO")
_GITCONFIG = (b"[user]\n\tname = benchsmith\n\temail = benchsmith@localhost\n"
              b"[init]\n\tdefaultBranch = main\n[safe]\n\tdirectory = *\n")
_NO_APT = b'#!/bin/sh\necho "apt is disabled in this sandbox (apt_allowed = false)" >&2\nexit 100\n'

_LIVE: weakref.WeakSet[DockerSandbox] = weakref.WeakSet()


def close_all() -> None:
    """Close every open Docker sandbox (used on SIGTERM, Ctrl-C and at exit)."""
    for sandbox in list(_LIVE):
        sandbox.close()


atexit.register(close_all)


class DockerSandbox:
    """Runs commands in a fresh container, created on first use and removed on close."""

    workdir = WORKDIR
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
        self._image_pythons: dict[str, str] | None = None
        self._counter = 0
        self._closed = False
        self._connected: bool | None = None  # to its network, as this object last set or saw
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

            try:
                self.client.api.remove_container(self.container_id, force=True)
            except docker.errors.NotFound:
                pass
            except Exception as exc:  # the engine went away: closing must not raise past results
                if self.progress:
                    self.progress(f"could not remove container {self.name}: {str(exc)[:200]}")
        for client in (self._stream_client, self._client):
            if client is not None:
                with contextlib.suppress(Exception):
                    client.close()

    def _ensure_started(self) -> str:
        if self._closed:
            raise BenchsmithError(f"sandbox {self.name} is closed")
        if self.container_id is None and self.config.bare:
            self._start("")
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
        if self.config.base_image:
            image = self.config.base_image
        else:
            self.base = ensure_base_image(self.client, python, progress=self.progress)
            image = self.base.name
        labels = {LABEL: "1", "benchsmith.python": python, "benchsmith.owner": owner_label()}
        container = create_container(self.client, image, self.name, labels, self.config)
        self.container_id, self.python = container.id, python
        if self._closed:  # closed from another thread while the container was created
            container.remove(force=True)
            raise BenchsmithError(f"sandbox {self.name} is closed")
        import docker.errors

        try:
            container.start()
        except docker.errors.APIError as exc:  # close() removes the created container
            raise BenchsmithError(f"starting a container from {image} failed: "
                                  f"{getattr(exc, 'explanation', None) or exc}") from None
        files = [("/root/.gitconfig", _GITCONFIG, 0o644)]
        if not self.config.apt_allowed:
            files += [(f"/usr/local/sbin/{name}", _NO_APT, 0o755) for name in ("apt", "apt-get")]
        for path, content, mode in files:
            container.put_archive("/", tar_bytes(path, content, mode))
        if (self.config.base_image and not self.config.bare
                and not self.exec("command -v uv", use_venv=False).ok):
            with tar_host_path(Path(uv_binary()), "/usr/local/bin/uv") as archive:
                container.put_archive("/", archive)
        while self._pending:
            where, archive = self._pending.pop(0)
            with archive:
                container.put_archive(where, archive)

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
        """Python versions with a base image, built already or buildable from the host
        (with a `base_image` override: the ``python3.X`` executables in that image)."""
        if self.config.base_image:
            if self._image_pythons is None:
                self._image_pythons = image_pythons(self.client, self.config.base_image)
            return self._image_pythons
        versions = with_python2(set(buildable_pythons()) | set(built_base_images(self.client)))
        return {v: f"/usr/local/bin/python{v}" for v in sorted(versions, key=version_key)}

    def setup_python(self, version: str) -> str:
        """Create /work/venv with Python `version`, starting the container if needed."""
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
        # the interpreter's real path (a bare name looked up on PATH) as the venv's home: from a
        # symlinked home, Python looks for its standard library above it and takes Debian's
        # once a package pulls python3 in
        real = f"\"$(readlink -f \"$(command -v {interpreter})\")\""
        create = (venv_command(interpreter, VENV) if version_key(version) < (3, 0)
                  else f"uv venv --quiet --python {real} {VENV}")
        result = self.exec(f"rm -rf {VENV} && {create}", cwd="/work", timeout=300,
                           use_venv=False)
        if not result.ok:
            raise BenchsmithError(f"creating a Python {version} virtualenv in "
                                  f"{base_image_name(version)} failed: {result.output.strip()[-300:]}")
        self._venv_ready = True
        return interpreter

    def adopt_venv(self) -> bool:
        """Use the virtualenv the `base_image` already has (an environment image); True if found."""
        found = self.exec(f"test -x {VENV}/bin/python", use_venv=False).ok
        self._venv_ready = self._venv_ready or found
        return found

    def set_network(self, enabled: bool) -> bool:
        """Connect the container to its network or disconnect it (only loopback is left).
        Containers that share the host's network (``--network host``) cannot be cut off."""
        mode = self.config.network_mode
        if mode == "none":
            return not enabled
        if mode == "host" or ":" in mode:
            return enabled
        container = self._ensure_started()
        if self._connected is None:  # asked once; afterwards only this object changes it
            self._connected = mode in (self.client.api.inspect_container(container)
                                       ["NetworkSettings"].get("Networks") or {})
        if enabled and not self._connected:
            self.client.api.connect_container_to_network(container, mode)
        elif not enabled and self._connected:
            self.client.api.disconnect_container_from_network(container, mode)
        self._connected = enabled
        return True

    def snapshot(self, name: str, labels: dict[str, str]) -> str:
        """Commit the container as image `name` (``repository:tag``), with the virtualenv first
        on PATH, so that containers of it run the environment as this sandbox did."""
        repository, tag = name.rsplit(":", 1)
        container = self.client.containers.get(self._ensure_started())
        container.commit(repository=repository, tag=tag, conf={
            # the base's layout: an environment made on an older base is made again
            "Labels": {LABEL: "1", "benchsmith.base_layout": BASE_LAYOUT, **labels},
            "WorkingDir": self.workdir,
            "Env": [f"VIRTUAL_ENV={VENV}", f"PATH={VENV}/bin:{SYSTEM_PATH}", "TZ=UTC",
                    "LC_ALL=C.UTF-8", "LANG=C.UTF-8"],
            "Cmd": ["sleep", "infinity"],
        })
        return name

    # -- exec --------------------------------------------------------------------------
    def _env(self, extra: dict[str, str] | None, use_venv: bool) -> dict[str, str]:
        env = {name: os.environ[name] for name in ALLOWED_ENV
               if name in os.environ and name not in _HOST_PATH_VARS}
        env.update({name: os.environ[name] for name in self.config.pass_env if name in os.environ})
        env.update(FIXED_ENV)
        env.update(HOME="/root", UV_CACHE_DIR=UV_CACHE_PATH, PATH=SYSTEM_PATH,
                   UV_LINK_MODE="copy")  # the cache is a volume: hard links cannot cross
        if ca_bundle(self.config):
            env.update(dict.fromkeys(_CA_VARS, self.config.ca_path))
        if use_venv and self._venv_ready:
            env["PATH"] = f"{VENV}/bin:{SYSTEM_PATH}"
            env["VIRTUAL_ENV"] = VENV
        env.update(self.config.env)
        env.update(extra or {})
        gateway = self._gateway() if "PIP_INDEX_URL" in env else None
        return reachable_from(env, gateway) if gateway else env

    def _gateway(self) -> str | None:
        """The address of this machine on the container's network (None: not connected, or
        the host's own network, where loopback is the host's)."""
        if self.container_id is None or self.config.network_mode == "host":
            return None
        networks = self.client.api.inspect_container(self.container_id)["NetworkSettings"][
            "Networks"] or {}
        return next((n["Gateway"] for n in networks.values() if n.get("Gateway")), None)

    def exec(self, command: str, *, cwd: str | None = None, env: dict[str, str] | None = None,
             timeout: float | None = None, stall_timeout: float | None = None,
             sweep: bool = False, use_venv: bool = True) -> ExecResult:
        """Run `command` with bash in the container; kill its whole session on timeout or
        once its output has not grown for `stall_timeout` seconds or it used more disk than
        the `disk` limit; with `sweep`, kill what it left running (see ExecResult.contained)."""
        import docker

        limit = command_timeout(timeout or self.config.timeout_s)
        container_id = self._ensure_started()
        if self._stream_client is None:
            self._stream_client = docker.from_env(timeout=None)
        self._counter += 1
        try:
            return run_command(
                self.client, self._stream_client, container_id, command,
                env=self._env(env, use_venv), cwd=container_path(cwd or ".", self.workdir),
                timeout=limit, seq=self._counter,
                max_output_bytes=self.config.max_output_bytes, stall_timeout=stall_timeout,
                disk_kib=self.config.disk_kib, sweep=sweep,
                closed=lambda: self._closed,  # closing (Ctrl-C): no waiting to tell why
            )
        except docker.errors.APIError as exc:
            if self._closed:
                raise BenchsmithError(f"sandbox {self.name} is closed") from None
            reason = why_unusable(self.client, container_id, exc)
            raise BenchsmithError(f"sandbox {self.name}: {reason}") from None

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


def clean_leftovers(client: Any, include_cache: bool = False,
                    dead_owners_only: bool = False) -> list[str]:
    """Remove benchsmith containers and volumes that no running benchsmith process uses.

    The shared uv cache volume stays unless `include_cache`. Returns what was removed.
    """
    live = {sandbox.container_id for sandbox in list(_LIVE) if sandbox.container_id}
    return remove_leftovers(client, live, include_cache, dead_owners_only)
