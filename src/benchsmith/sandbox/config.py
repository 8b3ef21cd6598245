"""Sandbox backend configuration: one model per backend, discriminated by `type`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import ConfigDict, Field

from benchsmith.sandbox.capabilities import SandboxCapabilities
from benchsmith.sandbox.docker.config import DockerSandboxConfig

if TYPE_CHECKING:
    from benchsmith.core import Sandbox


class LocalSandboxConfig(SandboxCapabilities):
    """Run in a temporary directory on this machine with a uv virtualenv."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["local"] = "local"
    tmp_dir: str | None = None
    """Parent directory for sandboxes (default: the system temp dir)."""
    timeout_s: float = 1800
    """Default per-command timeout in seconds."""
    max_output_bytes: int = 20 * 1024 * 1024
    """Captured output above this size is cut in the middle."""
    pass_env: list[str] = Field(default_factory=list)
    """Host environment variables to pass through beyond the built-in allow-list."""
    env: dict[str, str] = Field(default_factory=dict)
    """Extra variables set in every command."""
    keep: bool = False
    """Keep the sandbox directory after closing (for debugging)."""
    root: str | None = None
    """Use this directory (created if missing, never deleted) instead of a fresh temporary one:
    a persistent environment that later sandboxes reopen."""
    system_packages: bool = False
    """Let commands install Debian packages and start services on this machine with apt-get
    (root on a Debian-like host only; see :func:`host_apt_problem`)."""

    @property
    def apt(self) -> bool:
        """Whether commands may install Debian packages on this machine (`system_packages`)."""
        return self.system_packages


SandboxConfig = Annotated[LocalSandboxConfig | DockerSandboxConfig, Field(discriminator="type")]
BACKENDS = ("local", "docker")


def parse_backend(name: str) -> str:
    """`name` if it is a known backend; a one-line error naming the known ones otherwise."""
    if name not in BACKENDS:
        from benchsmith.core import BenchsmithError

        raise BenchsmithError(f"unknown backend {name!r}: available backends are: {', '.join(BACKENDS)}")
    return name


def host_apt_problem() -> str | None:
    """Why this machine cannot install Debian packages for its sandboxes (None: it can): it
    must be Debian-like, have apt-get, and run benchsmith as root."""
    import os
    import shutil

    if not Path("/etc/debian_version").is_file() or shutil.which("apt-get") is None:
        return "this host is not Debian-like (no /etc/debian_version or apt-get)"
    if os.geteuid() != 0:
        return "installing Debian packages needs root"
    return None


def check_backend(config: LocalSandboxConfig | DockerSandboxConfig) -> list[str]:
    """Raise a one-line BenchsmithError when the backend cannot run here (no Docker engine).

    Also removes what runs that were killed (no clean-up ran) left behind: their scratch
    directories and, on Docker, their containers; returns what was removed."""
    from benchsmith.sandbox.tools import remove_stale_scratch

    if config.type == "local" and config.system_packages and (problem := host_apt_problem()):
        from benchsmith.core import BenchsmithError

        raise BenchsmithError(f"--system-packages: {problem}; run as root on a Debian-like host, "
                              "or use --backend docker")
    removed = remove_stale_scratch((config.tmp_dir,) if config.type == "local" and config.tmp_dir
                                   else ())
    if config.type == "docker":
        from benchsmith.sandbox.docker.base import docker_client
        from benchsmith.sandbox.docker.sandbox import clean_leftovers

        removed += clean_leftovers(docker_client(), dead_owners_only=True)
    return removed


def make_sandbox(config: LocalSandboxConfig | DockerSandboxConfig) -> Sandbox:
    """Create a sandbox for `config`, importing the backend (and its SDK) lazily."""
    if config.type == "local":
        from benchsmith.sandbox.local import LocalSandbox

        return LocalSandbox(config)
    if config.type == "docker":
        from benchsmith.sandbox.docker.sandbox import DockerSandbox

        return DockerSandbox(config)
    raise ValueError(f"unknown sandbox backend {config.type!r}")


def close_all_sandboxes() -> None:
    """Close every open sandbox of every backend that was used (Ctrl-C, SIGTERM)."""
    import sys

    for module in ("benchsmith.sandbox.local", "benchsmith.sandbox.docker.sandbox"):
        if module in sys.modules:
            sys.modules[module].close_all()
