"""A wall-clock limit for everything one thread runs in sandboxes (a batch task on the local
executor): each command's timeout is cut to the time left, and once it is spent no command
starts. The thread's own code between commands is short; its commands are what take time."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from benchsmith.core import BenchsmithError

_LOCAL = threading.local()


class DeadlinePassed(BenchsmithError):
    """The task this thread runs is past its wall-clock limit."""


@contextlib.contextmanager
def task_deadline(seconds: float | None) -> Iterator[None]:
    """Limit the commands this thread runs to `seconds` from now (None: no limit)."""
    previous = getattr(_LOCAL, "deadline", None), getattr(_LOCAL, "seconds", None)
    _LOCAL.deadline = None if seconds is None else time.monotonic() + seconds
    _LOCAL.seconds = seconds
    try:
        yield
    finally:
        _LOCAL.deadline, _LOCAL.seconds = previous


def limit_reason() -> str:
    """What a task past its limit records."""
    return f"exceeded the wall-clock limit of {getattr(_LOCAL, 'seconds', 0) or 0:.0f}s; cancelled"


def deadline_passed() -> bool:
    """Whether this thread's task limit is spent."""
    deadline = getattr(_LOCAL, "deadline", None)
    return deadline is not None and time.monotonic() >= deadline


def command_timeout(timeout: float) -> float:
    """`timeout` cut to the time left of this thread's task; raise when none is left."""
    deadline = getattr(_LOCAL, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise DeadlinePassed(limit_reason())
    return min(timeout, left)
