"""Docker reusable environments: one image per key (the instance image ``benchsmith/inst...``),
committed from the prepared container; containers of it are started ahead of use."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager

from benchsmith.core import BenchsmithError, History, Sandbox
from benchsmith.sandbox.docker.base import BASE_LAYOUT, docker_client
from benchsmith.sandbox.docker.config import DockerSandboxConfig
from benchsmith.sandbox.docker.images import HISTORY_LABEL, start_from_image
from benchsmith.sandbox.docker.rootfs import image_exists
from benchsmith.sandbox.docker.sandbox import DockerSandbox
from benchsmith.sandbox.store import EnvironmentKey, Stored, instance_name


class DockerStore:
    """Environments as images; a fresh container of one is already pristine."""

    def __init__(self, config: DockerSandboxConfig) -> None:
        self.config = config
        self._warmer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="benchsmith-warm")
        self._warm: dict[str, Future[tuple[DockerSandbox, str | None]]] = {}
        # evaluations on several threads warm and take containers: one at a time, or a
        # container started twice for the same key would be lost and never removed
        self._lock = threading.Lock()

    @staticmethod
    def image(key: EnvironmentKey) -> str:
        """The image that holds `key`'s environment."""
        return key.image or instance_name(key.repo, key.commit)

    def reserve(self, key: EnvironmentKey) -> AbstractContextManager[None]:
        """Containers never share state: nothing to lock."""
        return contextlib.nullcontext()

    def open(self, key: EnvironmentKey) -> Stored | None:
        """A running container of the image (started ahead by :meth:`warm` when it was)."""
        image = self.image(key)
        client = docker_client()
        labels = (client.images.get(image).labels or {}) if image_exists(client, image) else {}
        history = labels.get(HISTORY_LABEL)
        if labels.get("benchsmith.base_layout") != BASE_LAYOUT or not history:
            return None  # none yet, made on an older base image, or its history not cut
        sandbox, tree = self._take_warm(key.name) or (start_from_image(image, self.config), None)
        return Stored(sandbox=sandbox, tree=tree, history=History.model_validate_json(history),
                      pristine=tree is not None)

    def config_for(self, key: EnvironmentKey) -> DockerSandboxConfig:
        """New environments are prepared from the ordinary base images."""
        return self.config

    def save(self, sandbox: Sandbox, key: EnvironmentKey, tree: str, history: History) -> None:
        """Commit the prepared container (its history cut already) as the environment's image."""
        sandbox.snapshot(self.image(key), {"benchsmith.repo": key.repo,
                                           "benchsmith.commit": key.commit,
                                           HISTORY_LABEL: history.model_dump_json()})

    def discard(self, key: EnvironmentKey) -> None:
        """Nothing is committed before :meth:`save`."""

    def release(self, sandbox: Sandbox) -> None:
        """Remove the container off the critical path (a non-daemon thread: the process still
        waits for it before exiting)."""
        threading.Thread(target=sandbox.close, name="benchsmith-close").start()

    def warm(self, key: EnvironmentKey, prime: Callable[[Sandbox], str | None]) -> None:
        """Start a container of `key`'s image in the background and `prime` it (its first
        look at the checkout is the slow one), so opening it does not wait."""
        image = self.image(key)
        with self._lock:
            if key.name in self._warm or not image_exists(docker_client(), image):
                return
            self._warm[key.name] = self._warmer.submit(_primed, image, self.config, prime)

    def _take_warm(self, name: str) -> tuple[DockerSandbox, str | None] | None:
        with self._lock:
            future = self._warm.pop(name, None)
        if future is None:
            return None
        try:
            return future.result()
        except BenchsmithError:
            return None  # started again the ordinary way, which reports the problem

    def close(self) -> None:
        """Remove containers started for evaluations that never came."""
        with self._lock:
            warmed, self._warm = self._warm, {}
        for future in warmed.values():
            if not future.cancel() and future.exception() is None:
                future.result()[0].close()


def _primed(image: str, config: DockerSandboxConfig, prime: Callable[[Sandbox], str | None]
            ) -> tuple[DockerSandbox, str | None]:
    sandbox = start_from_image(image, config)
    try:
        return sandbox, prime(sandbox)
    except BaseException:
        sandbox.close()
        raise
