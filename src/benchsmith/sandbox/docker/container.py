"""Creating sandbox containers: limits, labels, the CA bundle and the shared uv cache."""

from __future__ import annotations

import contextlib
import os
import socket
from typing import Any

from benchsmith.core import CHECKOUT_PATH, BenchsmithError
from benchsmith.sandbox.docker.config import DockerSandboxConfig
from benchsmith.sandbox.docker.rootfs import raise_for_disk
from benchsmith.sandbox.tools import host_ca_bundle

LABEL = "benchsmith"
_STORAGE_OPT_REFUSED: list[str] = []  # the engine's storage driver cannot size a container
UV_CACHE_VOLUME = "benchsmith-uv-cache"
UV_CACHE_PATH = "/root/.cache/uv"
CA_PATH = "/etc/ssl/certs/ca-certificates.crt"
WORKDIR = CHECKOUT_PATH
# A tmpfs in every container: snapshots (`docker commit`) leave mounts out, so what waits
# here while one is taken (a checkout's full history) never lands in an image.
STASH_PATH = "/run/benchsmith-stash"


def ca_bundle(config: DockerSandboxConfig) -> str | None:
    """The host CA bundle to mount: the configured one, else the one the host trusts."""
    path = config.ca_bundle or host_ca_bundle()
    if path and not os.path.isfile(path):
        raise BenchsmithError(f"CA bundle {path} not found: fix `ca_bundle` in the sandbox config")
    return path


def ensure_cache_volume(client: Any) -> None:
    """Create the uv cache volume shared by all sandboxes, once."""
    import docker.errors

    try:
        client.volumes.get(UV_CACHE_VOLUME)
    except docker.errors.NotFound:
        client.volumes.create(UV_CACHE_VOLUME, labels={LABEL: "1"})


def create_container(client: Any, image: str, name: str, labels: dict[str, str],
                     config: DockerSandboxConfig) -> Any:
    """Create (not start) a container that sleeps until commands are exec'd in it."""
    import docker.errors
    from docker.types import Mount

    ensure_cache_volume(client)
    mounts = [Mount(UV_CACHE_PATH, UV_CACHE_VOLUME, type="volume")]
    bundle = ca_bundle(config)
    if bundle:  # mounted, never baked in: images stay valid when the proxy's CA changes
        mounts.append(Mount(config.ca_path, os.path.realpath(bundle), type="bind", read_only=True))
    options: dict[str, Any] = dict(
        command=["sleep", "infinity"], name=name, detach=True, labels=labels,
        init=True,  # an init reaps orphans, so killed processes do not linger as zombies
        network_mode=config.network_mode, working_dir=WORKDIR, mounts=mounts,
        tmpfs={STASH_PATH: "mode=0700"},
        nano_cpus=int(config.cpus * 1e9), mem_limit=config.memory,
        pids_limit=config.pids_limit, environment={"HOME": "/root"},
    )
    if config.network_cutoff:  # a network namespace of its own: IPv6 loopback as on a host
        # (tests that listen on ::1 fail with EADDRNOTAVAIL where Docker turned IPv6 off)
        options["sysctls"] = {"net.ipv6.conf.all.disable_ipv6": "0",
                              "net.ipv6.conf.lo.disable_ipv6": "0"}
    if config.disk and not _STORAGE_OPT_REFUSED:
        options["storage_opt"] = {"size": config.disk}
    try:
        return client.containers.create(image, **options)
    except docker.errors.APIError as exc:
        reason = str(getattr(exc, "explanation", None) or exc)
        if "storage_opt" not in options or "storage" not in reason.lower():
            raise_for_disk(reason, f"creating a container from {image}")
            raise BenchsmithError(f"creating a container from {image} failed: {reason}") from None
        # the commands' own disk watch still applies (see DockerSandboxConfig.disk)
        _STORAGE_OPT_REFUSED.append(reason)
        del options["storage_opt"]
        return client.containers.create(image, **options)


def why_unusable(client: Any, container_id: str, error: Exception) -> str:
    """One line on why commands cannot run in the container (stopped, OOM-killed, gone)."""
    try:
        state = client.api.inspect_container(container_id)["State"]
    except Exception:
        return f"the container is gone ({getattr(error, 'explanation', None) or error})"
    if state.get("Running"):
        return str(getattr(error, "explanation", None) or error)
    hint = "; raise the `memory` limit" if state.get("OOMKilled") else ""
    return (f"the container stopped (exit code {state.get('ExitCode')}, "
            f"OOM-killed: {bool(state.get('OOMKilled'))}){hint}")


def owner_label() -> str:
    """The value of the `benchsmith.owner` label: this host and process."""
    return f"{socket.gethostname()}:{os.getpid()}"


def remove_leftovers(client: Any, live: set[str], include_cache: bool,
                     dead_owners_only: bool = False) -> list[str]:
    """Remove labelled containers not in `live` nor owned by another running process,
    and labelled volumes (the uv cache only if `include_cache`). With `dead_owners_only` (what
    every run does at its start), only sandboxes (``benchsmith-...``) whose owner on this host
    has died: a build's intermediate containers inherit the label but are no sandboxes."""
    import docker.errors

    removed = []
    for container in client.containers.list(all=True, filters={"label": f"{LABEL}=1"}):
        owner = container.labels.get("benchsmith.owner", "")
        if container.id in live or _owner_alive(owner):
            continue
        if dead_owners_only and not (container.name.startswith("benchsmith-")
                                     and owner.rpartition(":")[0] == socket.gethostname()):
            continue
        with contextlib.suppress(docker.errors.NotFound):
            container.remove(force=True)
            removed.append(f"container {container.name}")
    for volume in [] if dead_owners_only else client.volumes.list(filters={"label": f"{LABEL}=1"}):
        if volume.name == UV_CACHE_VOLUME and not include_cache:
            continue
        with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):  # in use
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
