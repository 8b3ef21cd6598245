"""Reusable environments: a prepared sandbox saved once and reopened by later runs.

The evaluation harness asks a store for an environment by :class:`EnvironmentKey`; how it is
kept is the backend's business: a persistent directory (local) or an image (Docker).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    from benchsmith.core import History, Sandbox
    from benchsmith.sandbox.config import SandboxConfig


def _image_slug(repo: str) -> str:
    return re.sub(r"[^a-z0-9_.-]+", "_", repo.lower().replace("/", "__"))


def environment_name(repo: str, commit: str) -> str:
    """``benchsmith/env.<owner>__<name>:<commit12>``: one repository's validated environment."""
    return f"benchsmith/env.{_image_slug(repo)}:{commit[:12].lower()}"


def instance_name(repo: str, commit: str) -> str:
    """``benchsmith/inst.<owner>__<name>:<commit12>``: one commit on top of an environment."""
    return f"benchsmith/inst.{_image_slug(repo)}:{commit[:12].lower()}"


@dataclass(frozen=True)
class EnvironmentKey:
    """What identifies a stored environment."""

    name: str  # unique and file-name safe, e.g. "<instance_id>-<digest>"
    digest: str  # of everything the environment depends on (commit, Python, install commands)
    repo: str
    commit: str
    image: str | None = None  # a recorded image name to use instead of the derived one


@dataclass
class Stored:
    """A reopened environment; `tree` is the git tree to reset the checkout to, if any."""

    sandbox: Sandbox
    tree: str | None
    history: History | None = None  # what its checkout keeps of git history (cut when saved)
    # the checkout is `tree` already (recorded while it was opened ahead): no reset needed
    pristine: bool = False


class EnvironmentStore(Protocol):
    """Keeps prepared environments of one backend."""

    def reserve(self, key: EnvironmentKey) -> AbstractContextManager[None]:
        """Exclusive use of the environment while the context lasts (where that matters)."""

    def open(self, key: EnvironmentKey) -> Stored | None:
        """The stored environment, running and pristine; None when there is none."""

    def config_for(self, key: EnvironmentKey) -> SandboxConfig:
        """The sandbox configuration to prepare a new environment for `key` with."""

    def save(self, sandbox: Sandbox, key: EnvironmentKey, tree: str, history: History) -> None:
        """Keep the prepared `sandbox` (its checkout at git tree `tree`, its git history cut
        as `history` says) for later runs."""

    def discard(self, key: EnvironmentKey) -> None:
        """Remove what a failed preparation left."""

    def release(self, sandbox: Sandbox) -> None:
        """Done with a sandbox this store opened or prepared (the environment stays)."""

    def warm(self, key: EnvironmentKey, prime: Callable[[Sandbox], str | None]) -> None:
        """Start opening `key` in the background, if that saves time later; `prime`, run there
        too, returns the checkout's tree as it is (the reopened one's `tree`)."""

    def close(self) -> None:
        """Stop background work and remove what was started for nothing."""


def prepared_key(repo: str, commit: str, python: str, exclude_newer: str, install: list[str]
                 ) -> EnvironmentKey:
    """The key of an environment `prepare` validated: repository, the commit its install ran
    at, Python, date pin and install commands (every instance that shares these shares it)."""
    digest = hashlib.sha256("\0".join(["prepared-1", repo, commit, python, exclude_newer, *install])
                            .encode()).hexdigest()[:12]
    return EnvironmentKey(name=f"{_image_slug(repo)}-{commit[:12].lower()}-{digest}",
                          digest=digest, repo=repo, commit=commit)


@dataclass
class Leased:
    """A kept environment handed to one evaluation: the sandbox, back to how it was kept but
    for its checkout's git directory, and a host directory for the harness's own files."""

    sandbox: Sandbox
    cache: Path


class PreparedStore(Protocol):
    """Keeps the environments `prepare` validated, one per :func:`prepared_key`, for
    `evaluate` (a backend whose instance images already serve has none)."""

    def sandbox_config(self) -> SandboxConfig:
        """The configuration to prepare sandboxes with that this store may keep."""

    def keep(self, sandbox: Sandbox, key: EnvironmentKey) -> None:
        """Keep the validated `sandbox` (its checkout at `key.commit`) as `key`'s environment."""

    def lease(self, key: EnvironmentKey) -> AbstractContextManager[Leased | None]:
        """`key`'s environment, exclusively and pristine while the context lasts; None when
        none was kept."""


def make_prepared_store(config: SandboxConfig, root: Path) -> PreparedStore | None:
    """The store of validated environments of `config`'s backend, or None where `prepare`
    leaves instance images instead (Docker)."""
    if config.type == "docker":
        return None
    from benchsmith.sandbox.local_prepared import LocalPreparedStore

    return LocalPreparedStore(config, root / "prepared")


def make_store(config: SandboxConfig, root: Path) -> EnvironmentStore:
    """The store of `config`'s backend (`root`: where a local store keeps its directories)."""
    if config.type == "docker":
        from benchsmith.sandbox.docker.store import DockerStore

        return DockerStore(config)
    from benchsmith.sandbox.local_store import LocalStore

    return LocalStore(config, root)
