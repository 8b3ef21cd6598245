"""The default executor: a pool of threads in the driver's own process (today's ``--jobs``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, TypeVar

from benchsmith.executor import ExecutorConfig, Resources, Task, TaskOutcome
from benchsmith.sandbox.deadline import (
    DeadlinePassed,
    deadline_passed,
    limit_reason,
    task_deadline,
)

R = TypeVar("R")


class LocalExecutor:
    """Runs tasks on `jobs` threads; resources and retries do not apply on one host. With a
    task timeout, a task's sandbox commands are cut to the time it has left (a thread cannot be
    killed, its commands can): past the limit no command starts, and the outcome carries the
    limit as its error, with whatever the task still returned (a setup's record of the rounds
    that ran)."""

    remote = False

    def __init__(self, config: ExecutorConfig) -> None:
        self.config = config
        self.cancelled = threading.Event()

    def run(self, task: Task[Any, R], payloads: Sequence[tuple[str, Any]], resources: Resources,
            on_outcome: Callable[[TaskOutcome[R]], None],
            on_interrupt: Callable[[], None] | None = None) -> None:
        """Run every task on the pool; outcomes are handed over in this thread as they end."""
        limit = self.config.task_timeout_s

        def call(key: str, payload: Any) -> TaskOutcome[R]:
            with task_deadline(limit):
                try:
                    value: R | None = task(payload, self.cancelled)
                except DeadlinePassed:
                    value = None
                if deadline_passed():  # what the task still returned (its partial record) stays
                    return TaskOutcome(key=key, value=value, finished_at=time.time(),
                                       error=limit_reason())
            return TaskOutcome(key=key, value=value, finished_at=time.time())

        with ThreadPoolExecutor(max_workers=self.config.jobs) as pool:
            futures = [pool.submit(call, key, payload) for key, payload in payloads]
            try:
                for future in as_completed(futures):
                    outcome = future.result()
                    outcome.received_at = time.time()
                    on_outcome(outcome)
            except KeyboardInterrupt:
                # Nothing half-done is written: stop new work, kill running commands, then leave.
                self.cancelled.set()
                if on_interrupt is not None:
                    on_interrupt()
                pool.shutdown(wait=True, cancel_futures=True)
                raise

    def require(self, resources: Resources) -> None:
        """This host runs whatever the chosen backend can."""

    def close(self) -> None:
        """Nothing to release."""
