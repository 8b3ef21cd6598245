"""Instance images built off the critical path: an instance's image (its checkout, history cut,
on top of the environment image) is built while the next instance of its group runs its
tests. The instance's record is handed on once its image is there, in the order the
instances were judged."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from benchsmith.core import History

if TYPE_CHECKING:
    from benchsmith.datasets.prepare import Published
    from benchsmith.datasets.verdict import Verdict

Found = tuple["Published", "Verdict", dict[str, Any]]
Build = Callable[[], tuple[str | None, History | None]]
Judged = tuple["Published", "Verdict", dict[str, Any], Build | None]  # and how its image is built


class ImageBuilds:
    """One group's instance images, built one at a time on a thread of their own."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="benchsmith-image")
        self._waiting: deque[Future[Found]] = deque()

    def add(self, found: Found, build: Build | None) -> None:
        """Build the instance's image, if its environment has one, after those added before."""
        if build is None:
            done: Future[Found] = Future()
            done.set_result(found)
            self._waiting.append(done)
        else:
            self._waiting.append(self._pool.submit(_built, found, build))

    def ready(self) -> Iterator[Found]:
        """The instances at the head of the queue whose images are built (an error in a build
        is raised here, as it would have been without the thread)."""
        while self._waiting and self._waiting[0].done():
            yield self._waiting.popleft().result()

    def rest(self) -> Iterator[Found]:
        """Every instance left, waiting for its image."""
        while self._waiting:
            yield self._waiting.popleft().result()

    def close(self) -> None:
        """Drop the builds not started (an interrupted run redoes their instances)."""
        self._pool.shutdown(wait=True, cancel_futures=True)


def _built(found: Found, build: Build) -> Found:
    _, verdict, record = found
    started = time.monotonic()
    image, history = build()
    record["image"] = image
    record["history"] = history.model_dump(mode="json") if history else None
    verdict.image_s = round(time.monotonic() - started, 2)
    record["prepare"] = verdict.model_dump(mode="json")
    return found
