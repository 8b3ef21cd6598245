"""What a backend can do, asked by capability instead of by backend name.

Every backend's configuration model derives from :class:`SandboxCapabilities`; the defaults
describe the plainest backend (the host), and backends that can do more override them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from benchsmith.core import History


class SandboxCapabilities(BaseModel):
    """Capabilities of a backend, answered by its configuration."""

    @property
    def apt(self) -> bool:
        """Whether commands may install Debian packages (and start services from them)."""
        return False

    @property
    def portable_checkout(self) -> bool:
        """Whether checkouts must be self-contained (no links to the host's git objects)."""
        return False

    @property
    def snapshots(self) -> bool:
        """Whether a sandbox can be saved as a reusable environment image (`Sandbox.snapshot`)."""
        return False

    @property
    def network(self) -> str:
        """The network its commands have: the host's, or a container network's name."""
        return "host"

    @property
    def network_cutoff(self) -> bool:
        """Whether a sandbox can be cut off from the network for its tests (loopback stays);
        where it cannot, `set_network(False)` points package managers and proxies at nothing."""
        return False

    def phases(self, tests_offline: bool) -> dict[str, str]:
        """The network each phase had: installs the backend's, tests none when cut off."""
        return {"install": self.network,
                "tests": "none (loopback only)" if tests_offline else self.network}

    @property
    def snapshot_stash(self) -> str | None:
        """A directory inside sandboxes that snapshots leave out (None: there is none), where a
        checkout's full history waits while a snapshot is taken with it cut."""
        return None

    @property
    def node_resources(self) -> dict[str, float]:
        """Custom resources a cluster node must offer to run this backend's sandboxes (a Ray
        node started with ``--resources '{"docker": N}'`` runs N Docker tasks at a time)."""
        return {}

    def for_image(self, image: str, progress: Callable[[str], None] | None = None
                  ) -> tuple[SandboxCapabilities, str, str] | None:
        """This configuration with sandboxes started from the OS image `image` (pulled or stood
        in for), the image used and how it was obtained; None where a backend has no images."""
        return None

    def image_recipe(self, repo: str, commit: str, python: str, exclude_newer: str,
                     install: list[str]) -> str | None:
        """A recipe that rebuilds a snapshot of this backend from scratch (None: no snapshots)."""
        return None

    def derive_image(self, base: str, repo: str, commit: str, checkout_dir: Path,
                     reinstall: str | None, history: History, squash: bool) -> str | None:
        """An image of `commit`'s checkout (its history cut as `history` says) on top of
        snapshot `base`, squashed when `base` holds a commit outside `commit`'s past (None: no
        snapshots)."""
        return None
