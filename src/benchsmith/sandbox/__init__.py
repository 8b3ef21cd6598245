"""Where commands run: sandbox backends behind the `Sandbox` protocol."""

from benchsmith.sandbox.config import LocalSandboxConfig, SandboxConfig, make_sandbox

__all__ = ["LocalSandboxConfig", "SandboxConfig", "make_sandbox"]
