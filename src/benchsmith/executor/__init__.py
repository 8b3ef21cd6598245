"""Where batch work runs: threads on this host (the default) or tasks on a Ray cluster.

A command cuts its input into tasks (a repository for ``setup-batch`` and ``build``, an
instance for ``evaluate``) and hands them to an :class:`Executor` with the function that does
one task. The function runs on a worker (a thread here, a process on some node of a cluster)
and returns a picklable result. Every result comes back to the driver through `on_outcome`,
in the driver's own thread: only the driver appends to result files and writes the reference
database, so a worker that dies can never leave a torn or duplicate line.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from benchsmith.core import BenchsmithError

__all__ = ["EXECUTORS", "Executor", "ExecutorConfig", "Resources", "Task", "TaskOutcome",
           "make_executor"]

P = TypeVar("P")
R = TypeVar("R")

# One task: its payload and an event set when the driver cancels it -> a picklable result.
Task = Callable[[P, threading.Event], R]
EXECUTORS = ("local", "ray")


class Resources(BaseModel):
    """What one task needs of a node; Ray places tasks only where these are free."""

    model_config = ConfigDict(extra="forbid")

    cpus: float = 1.0
    memory_mb: int | None = None
    custom: dict[str, float] = Field(default_factory=dict)
    """Custom node resources, e.g. ``{"docker": 1}`` for tasks that start containers."""


class ExecutorConfig(BaseModel):
    """How a batch command spreads its tasks."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["local", "ray"] = "local"
    jobs: int = Field(default=1, ge=1)
    """Local: tasks run at once, one thread each."""
    address: str | None = None
    """Ray: the cluster to join (default: ``$RAY_ADDRESS``, else the cluster on this machine)."""
    max_retries: int = Field(default=2, ge=0)
    """Ray: re-runs of a task whose worker process or node died, before it is an error."""
    task_timeout_s: float | None = Field(default=None, gt=0)
    """Wall-clock limit per task; a task past it is cancelled and reported as an error (Ray
    cancels the task; local threads stop running its commands)."""
    cancel_grace_s: float = 60.0
    """Ray: how long cancelled tasks get to remove their sandboxes after Ctrl-C."""


@dataclass
class TaskOutcome(Generic[R]):
    """What came back for one task: its result, or why there is none (an infrastructure
    failure: the worker died more often than retries allow, the wall-clock limit passed)."""

    key: str
    value: R | None
    error: str | None = None
    node: str = "local"
    finished_at: float = 0.0  # the worker's clock when the task returned
    received_at: float = 0.0  # the driver's clock when the result was in its hands


class Executor(Protocol):
    """Runs tasks somewhere and hands their outcomes to the driver one by one."""

    config: ExecutorConfig

    @property
    def remote(self) -> bool:
        """True when tasks run in other processes: they share no objects with the driver."""
        ...

    def run(self, task: Task[Any, R], payloads: Sequence[tuple[str, Any]], resources: Resources,
            on_outcome: Callable[[TaskOutcome[R]], None],
            on_interrupt: Callable[[], None] | None = None) -> None:
        """Run `task` on every (key, payload); call `on_outcome` in this thread as each ends.
        On Ctrl-C: cancel the running tasks, let them clean up, call `on_interrupt`, re-raise."""
        ...

    def require(self, resources: Resources) -> None:
        """Raise a one-line BenchsmithError now when no worker could ever run such tasks."""
        ...

    def close(self) -> None:
        """Release the executor's connections."""
        ...


def make_executor(config: ExecutorConfig) -> Executor:
    """The executor for `config`; Ray is imported (and the cluster joined) only when chosen."""
    if config.type == "ray":
        from benchsmith.executor.ray_cluster import RayExecutor

        return RayExecutor(config)
    from benchsmith.executor.local import LocalExecutor

    return LocalExecutor(config)


def parse_executor(name: str) -> Literal["local", "ray"]:
    """`name` if it is a known executor; a one-line error naming the known ones otherwise."""
    if name == "ray":
        return "ray"
    if name in EXECUTORS:
        return "local"
    raise BenchsmithError(f"unknown executor {name!r}: available executors are: "
                          f"{', '.join(EXECUTORS)}")
