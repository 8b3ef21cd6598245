"""The Ray executor: every task a Ray task on some node of a cluster, results back to the driver.

Ray is an optional extra, imported only here. The cluster is joined, never started: nodes run
``ray start`` with the benchsmith version of the driver installed, their own uv cache and
Docker images, and reach repositories by URL or a shared mirror path.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from benchsmith.core import BenchsmithError
from benchsmith.executor import ExecutorConfig, Resources, Task, TaskOutcome

R = TypeVar("R")
_CLEANUP_S = 60.0  # how long a cancelled task's thread gets to remove its sandboxes


@dataclass
class _Envelope:
    """A task's answer as it travels back: a result, or the reason there is none."""

    value: Any = None
    error: str | None = None
    node: str = ""
    finished_at: float = 0.0


def _execute(task: Task[Any, Any], payload: Any, timeout_s: float | None) -> _Envelope:
    """Worker side: run `task` in a thread so this one can enforce the wall-clock limit and
    answer Ray's cancellation (a KeyboardInterrupt here) by closing the task's sandboxes."""
    import ray

    from benchsmith.sandbox.config import close_all_sandboxes

    node = ray.get_runtime_context().get_node_id()
    cancelled = threading.Event()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = task(payload, cancelled)
        except BaseException as exc:  # handed to the waiting thread, which decides
            box["error"] = exc

    def stop() -> None:
        cancelled.set()
        close_all_sandboxes()
        thread.join(_CLEANUP_S)

    thread = threading.Thread(target=target, name="benchsmith-task", daemon=True)
    thread.start()
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    try:
        # Short joins: Ray's cancellation arrives as an interrupt between bytecodes.
        while thread.is_alive() and (deadline is None or time.monotonic() < deadline):
            thread.join(0.2)
    except KeyboardInterrupt:
        stop()
        raise
    if thread.is_alive():
        stop()
        return _Envelope(error=f"exceeded the wall-clock limit of {timeout_s:.0f}s; cancelled",
                         node=node, finished_at=time.time())
    if "error" in box:
        error = box["error"]
        return _Envelope(error=f"internal error: {error!r}", node=node, finished_at=time.time())
    return _Envelope(value=box["value"], node=node, finished_at=time.time())


def _check_reachable(address: str) -> None:
    """Fail in a second, not after Ray's long connection retries, when nothing listens."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise BenchsmithError(f"invalid Ray address {address!r}: expected HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=3).close()
    except OSError as exc:
        raise BenchsmithError(f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}"
                              ) from None


def connect(address: str | None) -> str:
    """Join the cluster at `address` (``$RAY_ADDRESS``, else this machine's); return it."""
    try:
        import ray
    except ImportError:
        raise BenchsmithError("--executor ray needs the optional extra: "
                              "pip install 'benchsmith[ray]'") from None
    target = address or os.environ.get("RAY_ADDRESS") or "auto"
    if target != "auto" and "://" not in target:
        _check_reachable(target)
    if ray.is_initialized():
        return target
    try:
        ray.init(address=target, logging_level=logging.ERROR, log_to_driver=False,
                 configure_logging=True)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = "on this machine (start one with `ray start --head`, or give --ray-address)" \
            if target == "auto" else f"at {target}"
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BenchsmithError(f"cannot join a Ray cluster {where}: {reason}") from None
    return target


class RayExecutor:
    """Submits every task to the cluster at once; Ray queues them and places each on a node
    with the resources it declares, re-running it elsewhere when its worker or node dies."""

    remote = True

    def __init__(self, config: ExecutorConfig) -> None:
        self.config = config
        self.address = connect(config.address)
        self.nodes = _node_names()

    def run(self, task: Task[Any, R], payloads: Sequence[tuple[str, Any]], resources: Resources,
            on_outcome: Callable[[TaskOutcome[R]], None],
            on_interrupt: Callable[[], None] | None = None) -> None:
        """Submit, then hand over outcomes in this thread in the order tasks end."""
        import ray

        self.require(resources)
        options: dict[str, Any] = {"num_cpus": resources.cpus, "max_retries": self.config.max_retries,
                                   "retry_exceptions": False}
        if resources.memory_mb:
            options["memory"] = resources.memory_mb * 1024 * 1024
        if resources.custom:
            options["resources"] = dict(resources.custom)
        remote = ray.remote(_execute).options(**options)
        pending: dict[Any, str] = {}
        try:
            for key, payload in payloads:
                pending[remote.remote(task, payload, self.config.task_timeout_s)] = key
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
                for ref in ready:
                    on_outcome(self._outcome(pending.pop(ref), ref))
        except KeyboardInterrupt:
            self._cancel(list(pending))
            if on_interrupt is not None:
                on_interrupt()
            raise

    def _outcome(self, key: str, ref: Any) -> TaskOutcome[Any]:
        import ray

        try:
            envelope: _Envelope = ray.get(ref)
        except ray.exceptions.RayError as exc:
            first = (str(exc).strip().splitlines() or [""])[0][:300]
            reason = (f"task lost after {self.config.max_retries} retries: "
                      f"{type(exc).__name__}: {first}")
            return TaskOutcome(key=key, value=None, error=reason, node="?",
                               received_at=time.time())
        node = self.nodes.get(envelope.node) or _node_names().get(envelope.node, envelope.node[:8])
        return TaskOutcome(key=key, value=envelope.value, error=envelope.error, node=node,
                           finished_at=envelope.finished_at, received_at=time.time())

    def _cancel(self, refs: list[Any]) -> None:
        """Interrupt running tasks (they close their sandboxes), drop queued ones, and give the
        interrupted ones the grace period before they are killed."""
        import ray

        for ref in refs:
            ray.cancel(ref, force=False)
        if refs:
            _, stuck = ray.wait(refs, num_returns=len(refs), timeout=self.config.cancel_grace_s)
            for ref in stuck:  # never a finished task: Ray 2.60 aborts on that
                ray.cancel(ref, force=True)

    def require(self, resources: Resources) -> None:
        """One line instead of tasks that wait forever: no node offers a resource they need."""
        _check_feasible(resources)

    def close(self) -> None:
        """Leave the cluster (it keeps running)."""
        import ray

        if ray.is_initialized():
            ray.shutdown()


def _node_names() -> dict[str, str]:
    """Node ID -> a short name: its address and the start of its ID (many nodes share a host)."""
    import ray

    return {node["NodeID"]: f"{node['NodeManagerAddress']}/{node['NodeID'][:6]}"
            for node in ray.nodes()}


def _check_feasible(resources: Resources) -> None:
    import ray

    offered = ray.cluster_resources()
    for name, amount in {"CPU": resources.cpus, **resources.custom}.items():
        if offered.get(name, 0.0) < amount:
            hint = (f" (start nodes with --resources '{{\"{name}\": N}}')" if name != "CPU" else "")
            raise BenchsmithError(f"no node of the Ray cluster offers {amount:g} {name}"
                                  f" (the cluster has {offered.get(name, 0.0):g}){hint}")
