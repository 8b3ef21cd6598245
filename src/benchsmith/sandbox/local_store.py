"""Local reusable environments: a persistent directory (checkout + virtualenv) per key under a
root, locked while in use, reset to its recorded git tree when reopened."""

from __future__ import annotations

import fcntl
import json
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from benchsmith.core import History, Sandbox
from benchsmith.sandbox.config import LocalSandboxConfig
from benchsmith.sandbox.store import EnvironmentKey, Stored

_META = "benchsmith-env.json"


class LocalStore:
    """Environments as directories ``<root>/<key.name>`` with a small metadata file."""

    def __init__(self, config: LocalSandboxConfig, root: Path) -> None:
        self.config = config
        self.root = root

    def _dir(self, key: EnvironmentKey) -> Path:
        return self.root / key.name

    @contextmanager
    def reserve(self, key: EnvironmentKey) -> Iterator[None]:
        """One user at a time per environment, across processes (an flock)."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / f"{key.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def _config(self, key: EnvironmentKey) -> LocalSandboxConfig:
        return self.config.model_copy(update={"root": str(self._dir(key))})

    def open(self, key: EnvironmentKey) -> Stored | None:
        """The directory's sandbox, when its metadata says it was prepared for this digest."""
        meta = self._dir(key) / _META
        try:
            data = json.loads(meta.read_text()) if meta.is_file() else {}
        except (OSError, ValueError):
            data = {}
        if data.get("key") != key.digest or not data.get("tree") or not data.get("history"):
            return None  # none yet, or kept by a version that did not cut its history
        from benchsmith.sandbox.local import LocalSandbox

        return Stored(sandbox=LocalSandbox(self._config(key)), tree=str(data["tree"]),
                      history=History.model_validate(data["history"]))

    def config_for(self, key: EnvironmentKey) -> LocalSandboxConfig:
        """A fresh (emptied) directory for the environment."""
        shutil.rmtree(self._dir(key), ignore_errors=True)
        return self._config(key)

    def save(self, sandbox: Sandbox, key: EnvironmentKey, tree: str, history: History) -> None:
        """Record the digest, pristine tree and history; the directory is the environment."""
        (self._dir(key) / _META).write_text(json.dumps({
            "key": key.digest, "tree": tree, "name": key.name,
            "history": history.model_dump(mode="json")}))

    def discard(self, key: EnvironmentKey) -> None:
        """Remove a half-prepared directory."""
        shutil.rmtree(self._dir(key), ignore_errors=True)

    def release(self, sandbox: Sandbox) -> None:
        """Close the sandbox; its directory (a persistent root) stays."""
        sandbox.close()

    def warm(self, key: EnvironmentKey, prime: Callable[[Sandbox], str | None]) -> None:
        """Nothing to start ahead locally."""

    def close(self) -> None:
        """Nothing runs in the background."""
