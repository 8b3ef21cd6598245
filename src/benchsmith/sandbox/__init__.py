"""Where commands run: sandbox backends behind the `Sandbox` protocol."""

from benchsmith.sandbox.config import (
    BACKENDS,
    LocalSandboxConfig,
    SandboxConfig,
    close_all_sandboxes,
    make_sandbox,
)
from benchsmith.sandbox.docker.config import DockerSandboxConfig

__all__ = [
    "BACKENDS",
    "DockerSandboxConfig",
    "LocalSandboxConfig",
    "SandboxConfig",
    "close_all_sandboxes",
    "make_sandbox",
]
