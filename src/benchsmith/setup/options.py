"""The setup engine's knobs."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from benchsmith.sandbox.config import LocalSandboxConfig, SandboxConfig


class SetupOptions(BaseModel):
    """Knobs of one setup run."""

    model_config = ConfigDict(extra="forbid")

    max_iterations: int = 4
    """Repair rounds after the first attempt."""
    threshold: float = 0.95
    """Share of executed tests that must pass."""
    install_timeout_s: float = 1200
    test_timeout_s: float = 1800
    stall_timeout_s: float = Field(default=120, ge=1)
    """A test run whose output does not grow for this long is stopped (a hung test)."""
    offline_tests: bool = True
    """Cut the sandbox off the network for the tests where the backend can (Docker on a
    network other than the host's); installs keep it."""
    sandbox: SandboxConfig = Field(default_factory=LocalSandboxConfig)
    commit_images: bool = True
    """Docker backend: commit a validated environment as benchsmith/env.<repo>:<commit12>."""
    refdb: str | None = None
    """Reference database path (default: ~/.cache/benchsmith/reference.sqlite)."""
    use_refdb: bool = True
    model: str | None = None
    """PROVIDER:MODEL asked for a change to the plan where no rule repairs (None: rules only)."""
    base_url: str | None = None
    ecosystem: str | None = None
    """Set the repository up as a project of this ecosystem ("python", "node"); None: the
    one its files and CI say (:func:`benchsmith.setup.ecosystems.choose_ecosystem`)."""
