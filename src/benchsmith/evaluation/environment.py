"""An instance's environment, prepared once and reused by every prediction evaluated on it.

Where it is kept is the backend's store (:mod:`benchsmith.sandbox.store`): on Docker the
instance image (``benchsmith/inst...``, as built by `benchsmith build`), committed from a
freshly prepared container when missing; locally the environment `prepare` validated when it
kept one (:mod:`benchsmith.evaluation.prepared`), else a persistent checkout + virtualenv under
the cache, installed from the instance's commands, locked while in use and reset to its
pristine tree on reopening.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from benchsmith.core import BenchsmithError, History, Sandbox
from benchsmith.evaluation.prepared import check_out, prepared_environment_key
from benchsmith.harness.checkout import cache_dir, resolve, resolve_source
from benchsmith.harness.history import seal
from benchsmith.harness.prepare import install_env, network_for_tests, prepare_sandbox
from benchsmith.harness.reinstall import move_to, reinstall_between
from benchsmith.harness.testrun import install_guard
from benchsmith.harness.worktree import PATCH_DIR, Worktree, checkpoint_tree
from benchsmith.instance import TaskInstance
from benchsmith.sandbox.config import SandboxConfig
from benchsmith.sandbox.store import EnvironmentKey, make_prepared_store, make_store


@dataclass
class OpenedEnvironment:
    """A sandbox at the instance's base commit, ready to run its tests."""

    sandbox: Sandbox
    worktree: Worktree
    reused: bool  # False when it had to be prepared (checkout + install) first
    environment: str = "installed"  # "prepared": the one `prepare` validated, nothing installed
    prepare_s: float = 0.0
    history: History | None = None  # its checkout's git history, cut at the base commit
    network: dict[str, str] | None = None  # the network each phase had (prepare, tests)


class Environments:
    """Opens instance environments on one sandbox backend."""

    def __init__(self, config: SandboxConfig, sources: dict[str, str] | None = None,
                 mirrors: str | None = None, timeout: float = 1800, root: Path | None = None,
                 progress: Callable[[str], None] | None = None, test_network: bool = False
                 ) -> None:
        self.config = config
        self.test_network = test_network  # keep the network for the predictions' tests
        self.sources = sources or {}
        self.mirrors = mirrors
        self.timeout = timeout
        self.store = make_store(config, root or cache_dir() / "envs")
        self.prepared = make_prepared_store(config, root or cache_dir() / "envs")
        self.progress = progress or (lambda message: None)

    @contextmanager
    def open(self, instance: TaskInstance, tools: Callable[[Sandbox], object] | None = None,
             chosen: Callable[[str], None] | None = None) -> Iterator[OpenedEnvironment]:
        """The instance's environment, pristine; released (not deleted) afterwards: the one
        `prepare` validated when the backend kept it, else one installed from the instance's
        commands. `tools` installs what the harness itself needs there (coverage) while it
        still has the network; `chosen` hears which ("prepared" or "installed") before it is
        opened."""
        with ExitStack() as stack:
            started = time.monotonic()
            opened = (self._open_prepared(instance, stack, chosen or (lambda kind: None))
                      or self._open_installed(instance, stack, chosen or (lambda kind: None)))
            sandbox = opened.sandbox
            opened.prepare_s = round(time.monotonic() - started, 3)
            # the prediction's tests run without the network (where it cannot be taken away,
            # package managers and proxies point at nothing): nothing to fetch, nobody to tell
            if tools is not None:
                tools(sandbox)
            tests = network_for_tests(sandbox, self.config.network, offline=not self.test_network)
            opened.network = {"prepare": self.config.network, "tests": tests}
            yield opened

    def _open_prepared(self, instance: TaskInstance, stack: ExitStack,
                       chosen: Callable[[str], None]) -> OpenedEnvironment | None:
        """The environment `prepare` validated and kept, at the instance's base commit."""
        key = prepared_environment_key(instance)
        if self.prepared is None or key is None:
            return None
        leased = stack.enter_context(self.prepared.lease(key))
        if leased is None:
            return None
        chosen("prepared")
        source = lambda: self.sources.get(instance.repo) or resolve_source(  # noqa: E731
            instance.repo, self.mirrors)
        worktree, history = check_out(leased, key, instance, source, self.timeout)
        return OpenedEnvironment(sandbox=leased.sandbox, worktree=worktree, reused=True,
                                 history=history, environment="prepared")

    def _open_installed(self, instance: TaskInstance, stack: ExitStack,
                        chosen: Callable[[str], None]) -> OpenedEnvironment:
        """The instance's own environment from the store, installed first when missing."""
        chosen("installed")
        key = environment_key(instance)
        stack.enter_context(self.store.reserve(key))
        stored = self.store.open(key)
        history = stored.history if stored is not None else None
        if stored is not None:
            sandbox = stored.sandbox
            try:
                worktree = (Worktree(sandbox, base=stored.tree) if stored.pristine and stored.tree
                            else _pristine(sandbox, stored.tree) if stored.tree
                            else Worktree(sandbox))
            except BaseException:
                sandbox.close()
                raise
        else:
            self.progress(f"{instance.instance_id}: installing its environment (none kept by "
                          "prepare)")
            try:
                sandbox, history = self._prepare(instance, self.store.config_for(key))
            except BaseException:
                self.store.discard(key)
                raise
            try:
                worktree = Worktree(sandbox)
                self.store.save(sandbox, key, worktree.base, history)
            except BaseException:
                sandbox.close()
                self.store.discard(key)
                raise
        stack.callback(self.store.release, sandbox)
        return OpenedEnvironment(sandbox=sandbox, worktree=worktree, history=history,
                                 reused=stored is not None, environment="installed")

    def warm(self, instance: TaskInstance, tools: bool = False) -> None:
        """Start opening the instance's environment in the background where the backend can
        (evaluations are pipelined): its checkout's tree recorded, pytest's version read there
        (:func:`~benchsmith.harness.testrun.install_guard`) and, unless the harness
        installs `tools` there first or the tests keep the network, the network taken away."""
        offline = not (tools or self.test_network)

        def prime(sandbox: Sandbox) -> str | None:
            tree = checkpoint_tree(sandbox)
            if instance.test_runner == "pytest":  # the version its test commands are fit to
                install_guard(sandbox)
            if offline:  # opening it asks again, of a sandbox that knows the answer
                sandbox.set_network(False)
            return tree

        self.store.warm(environment_key(instance), prime)

    def close(self) -> None:
        """Remove what was started ahead for evaluations that never came."""
        self.store.close()

    def _prepare(self, instance: TaskInstance, config: SandboxConfig) -> tuple[Sandbox, History]:
        """A sandbox at the instance's base commit with its environment installed, and its
        checkout's history cut there (a prediction's tests cannot read the fix from it)."""
        if not instance.python:
            raise BenchsmithError(f"instance {instance.instance_id} records no Python version")
        source = self.sources.get(instance.repo) or resolve_source(instance.repo, self.mirrors)
        pin = exclude_newer(instance)
        at = instance.environment_commit()
        checkout = resolve(source, rev=at, repo=instance.repo)
        sandbox = prepare_sandbox(config, checkout, instance.python, instance.install, pin,
                                  self.timeout, node=instance.node)
        try:
            if at != instance.base_commit and instance.reinstall:
                # the environment as built at its setup commit, the project at base_commit
                reinstall = reinstall_between(instance.reinstall, checkout.git_dir, at,
                                              instance.base_commit)
                move_to(sandbox, instance.base_commit, reinstall,
                        install_env(instance.python, pin), self.timeout)
            history = seal(sandbox, instance.base_commit, f"{instance.instance_id}'s checkout")
        except BaseException:
            sandbox.close()
            raise
        return sandbox, history


HISTORY_CUT = "history-cut-1"


def exclude_newer(instance: TaskInstance) -> str:
    """The instance's pinning timestamp (from `created_at` when it has none recorded)."""
    if pin := instance.pin():
        return pin
    raise BenchsmithError(f"instance {instance.instance_id} has neither exclude_newer nor created_at")


def environment_key(instance: TaskInstance) -> EnvironmentKey:
    """What the environment depends on: repository, commit, Python, install commands, date."""
    # HISTORY_CUT: environments kept before checkouts were cut at their base are made again
    fields = [HISTORY_CUT, instance.repo, instance.base_commit, instance.python,
              exclude_newer(instance), *instance.install]
    if instance.node is not None:  # the Node and manager staged before the install
        fields += [instance.node.version, instance.node.manager, instance.node.manager_version]
    if instance.reinstall:  # installed at another commit first
        fields += [instance.environment_commit(), instance.reinstall]
    digest = hashlib.sha256("\0".join(fields).encode()).hexdigest()[:12]
    return EnvironmentKey(name=f"{instance.instance_id}-{digest}", digest=digest,
                          repo=instance.repo, commit=instance.base_commit, image=instance.image)


def _pristine(sandbox: Sandbox, tree: str) -> Worktree:
    """Reset a reopened checkout to its recorded tree and forget old patch files."""
    result = sandbox.exec(f"rm -rf {PATCH_DIR} && git read-tree --reset -u {tree} && git clean -fdq",
                          timeout=300)
    if not result.ok:
        raise BenchsmithError(f"cannot reset the cached environment: {result.output.strip()[-200:]}")
    return Worktree(sandbox)
