"""An instance's environment, prepared once and reused by every prediction evaluated on it.

Docker: the instance image (``benchsmith/inst...``, as built by `benchsmith build`), committed
from a freshly prepared container when it is missing. Local: a persistent directory under the
cache (checkout + virtualenv), locked while in use and reset to its pristine tree on reopening.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from benchsmith.core import BenchsmithError, Sandbox
from benchsmith.evaluation.apply import Worktree
from benchsmith.evaluation.inputs import EvalInstance
from benchsmith.mining.harness import PATCH_DIR, prepare_sandbox
from benchsmith.sandbox.config import LocalSandboxConfig, SandboxConfig
from benchsmith.sandbox.docker_config import DockerSandboxConfig
from benchsmith.setup.batch import resolve_source
from benchsmith.setup.checkout import cache_dir, resolve

if TYPE_CHECKING:
    from benchsmith.sandbox.docker import DockerSandbox

_META = "benchsmith-env.json"


@dataclass
class OpenedEnvironment:
    """A sandbox at the instance's base commit, ready to run its tests."""

    sandbox: Sandbox
    worktree: Worktree
    reused: bool  # False when it had to be prepared (checkout + install) first
    prepare_s: float = 0.0


class Environments:
    """Opens instance environments on one sandbox backend."""

    def __init__(self, config: SandboxConfig, sources: dict[str, str] | None = None,
                 mirrors: str | None = None, timeout: float = 1800, root: Path | None = None,
                 progress: Callable[[str], None] | None = None) -> None:
        self.config = config
        self.sources = sources or {}
        self.mirrors = mirrors
        self.timeout = timeout
        self.root = root or cache_dir() / "envs"
        self.progress = progress or (lambda message: None)
        self._warmer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="benchsmith-warm")
        self._warm: dict[str, Future[DockerSandbox]] = {}

    @contextmanager
    def open(self, instance: EvalInstance) -> Iterator[OpenedEnvironment]:
        """The instance's environment, pristine; closed (not deleted) afterwards."""
        opener = self._open_docker if self.config.type == "docker" else self._open_local
        with opener(instance) as env:
            yield env

    # -- local -----------------------------------------------------------------------
    @contextmanager
    def _open_local(self, instance: EvalInstance) -> Iterator[OpenedEnvironment]:
        key = environment_key(instance)
        root = self.root / f"{instance.instance_id}-{key}"
        root.parent.mkdir(parents=True, exist_ok=True)
        with open(root.parent / f"{root.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one evaluation at a time per environment
            config = LocalSandboxConfig.model_validate(
                {**self.config.model_dump(), "root": str(root)})
            meta = root / _META
            started = time.monotonic()
            reused = meta.is_file() and json.loads(meta.read_text()).get("key") == key
            if reused:
                from benchsmith.sandbox.local import LocalSandbox

                sandbox: Sandbox = LocalSandbox(config)
                worktree = _pristine(sandbox, json.loads(meta.read_text())["tree"])
            else:
                shutil.rmtree(root, ignore_errors=True)
                self.progress(f"{instance.instance_id}: preparing a local environment")
                try:
                    sandbox = self._prepare(instance, config)
                    worktree = Worktree(sandbox)
                except BaseException:
                    shutil.rmtree(root, ignore_errors=True)
                    raise
                meta.write_text(json.dumps({"key": key, "tree": worktree.base,
                                            "instance_id": instance.instance_id}))
            try:
                yield OpenedEnvironment(sandbox=sandbox, worktree=worktree, reused=reused,
                                        prepare_s=round(time.monotonic() - started, 3))
            finally:
                sandbox.close()

    # -- docker ----------------------------------------------------------------------
    @contextmanager
    def _open_docker(self, instance: EvalInstance) -> Iterator[OpenedEnvironment]:
        from benchsmith.sandbox.docker import DockerSandbox
        from benchsmith.sandbox.docker_base import docker_client
        from benchsmith.sandbox.docker_rootfs import image_exists
        from benchsmith.setup.images import commit_env_image, instance_image_name

        assert isinstance(self.config, DockerSandboxConfig)
        image = instance.image or instance_image_name(instance.repo, instance.base_commit)
        started = time.monotonic()
        reused = image_exists(docker_client(), image)
        if reused:
            sandbox = self._take_warm(instance.instance_id) or self._start(image)
            try:
                worktree = Worktree(sandbox)
            except BaseException:
                sandbox.close()
                raise
        else:
            self.progress(f"{instance.instance_id}: preparing the environment image {image}")
            prepared = self._prepare(instance, self.config)
            assert isinstance(prepared, DockerSandbox)
            sandbox = prepared
            try:
                worktree = Worktree(sandbox)
                commit_env_image(sandbox, instance.repo, instance.base_commit, name=image)
            except BaseException:
                sandbox.close()
                raise
        try:
            yield OpenedEnvironment(sandbox=sandbox, worktree=worktree, reused=reused,
                                    prepare_s=round(time.monotonic() - started, 3))
        finally:
            # Removing the container is not on the way of the next evaluation (a non-daemon
            # thread: the process still waits for it before exiting).
            threading.Thread(target=sandbox.close, name="benchsmith-close").start()

    def _start(self, image: str) -> DockerSandbox:
        """A running container of the environment image, its virtualenv adopted."""
        from benchsmith.sandbox.docker import DockerSandbox

        assert isinstance(self.config, DockerSandboxConfig)
        sandbox = DockerSandbox(self.config.model_copy(update={"base_image": image}))
        try:
            if not sandbox.adopt_venv():
                raise BenchsmithError(f"image {image} has no virtualenv at {sandbox.venv}")
        except BaseException:
            sandbox.close()
            raise
        return sandbox

    def warm(self, instance: EvalInstance) -> None:
        """Docker: start the instance's container in the background, so that opening it later
        does not wait for the start (evaluations are pipelined)."""
        if self.config.type != "docker" or instance.instance_id in self._warm:
            return
        from benchsmith.sandbox.docker_base import docker_client
        from benchsmith.sandbox.docker_rootfs import image_exists
        from benchsmith.setup.images import instance_image_name

        image = instance.image or instance_image_name(instance.repo, instance.base_commit)
        if image_exists(docker_client(), image):
            self._warm[instance.instance_id] = self._warmer.submit(self._start, image)

    def _take_warm(self, instance_id: str) -> DockerSandbox | None:
        future = self._warm.pop(instance_id, None)
        if future is None:
            return None
        try:
            return future.result()
        except BenchsmithError:
            return None  # started again the ordinary way, which reports the problem

    def close(self) -> None:
        """Remove containers started for evaluations that never came."""
        warmed, self._warm = self._warm, {}
        for future in warmed.values():
            if not future.cancel() and future.exception() is None:
                future.result().close()

    def _prepare(self, instance: EvalInstance, config: SandboxConfig) -> Sandbox:
        if not instance.python:
            raise BenchsmithError(f"instance {instance.instance_id} records no Python version")
        source = self.sources.get(instance.repo) or resolve_source(instance.repo, self.mirrors)
        checkout = resolve(source, rev=instance.base_commit, repo=instance.repo)
        return prepare_sandbox(config, checkout, instance.python, instance.install,
                               exclude_newer(instance), self.timeout)


def exclude_newer(instance: EvalInstance) -> str:
    """The instance's pinning timestamp (from `created_at` when it has none recorded)."""
    if instance.exclude_newer:
        return instance.exclude_newer
    if instance.created_at[:10]:
        return f"{instance.created_at[:10]}T00:00:00Z"
    raise BenchsmithError(f"instance {instance.instance_id} has neither exclude_newer nor created_at")


def environment_key(instance: EvalInstance) -> str:
    """What the environment depends on: repository, commit, Python, install commands, date."""
    fields = [instance.repo, instance.base_commit, instance.python, exclude_newer(instance),
              *instance.install]
    return hashlib.sha256("\0".join(fields).encode()).hexdigest()[:12]


def _pristine(sandbox: Sandbox, tree: str) -> Worktree:
    """Reset a reopened checkout to its recorded tree and forget old patch files."""
    result = sandbox.exec(f"rm -rf {PATCH_DIR} && git read-tree --reset -u {tree} && git clean -fdq",
                          timeout=300)
    if not result.ok:
        raise BenchsmithError(f"cannot reset the cached environment: {result.output.strip()[-200:]}")
    return Worktree(sandbox)
