"""Instance images built while the next instance runs: records come out in order, each once its
image is built, with the image, its history and the build's time."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from benchsmith.core import BenchsmithError, History
from benchsmith.datasets.instance_images import ImageBuilds
from benchsmith.datasets.prepare import Published, fingerprint
from benchsmith.datasets.verdict import Verdict
from benchsmith.instance import TaskInstance


def _found(iid: str) -> tuple[Published, Verdict, dict[str, object]]:
    instance = TaskInstance(instance_id=iid, repo="fixture/calc", base_commit="a" * 40,
                            patch="p", test_patch="t")
    item = Published(instance=instance, raw={"instance_id": iid}, fingerprint=fingerprint(instance))
    verdict = Verdict(status="reproduced")
    return item, verdict, {"instance_id": iid, "image": None, "history": None}


def test_records_wait_for_their_image_and_come_out_in_order() -> None:
    release = threading.Event()
    started: list[str] = []

    def build(name: str, wait: bool) -> Callable[[], tuple[str, History]]:
        def run() -> tuple[str, History]:
            started.append(name)
            if wait:
                assert release.wait(30)
            return f"benchsmith/inst.fixture__calc:{name}", History(base_commit="a" * 40, commits=3,
                                                                   newest_commit_date="2023-01-01T00:00:00Z")
        return run

    builds = ImageBuilds()
    try:
        builds.add(_found("one"), build("one", wait=True))
        builds.add(_found("two"), None)  # no environment image: nothing to build
        builds.add(_found("three"), build("three", wait=False))
        assert list(builds.ready()) == []  # "one" is still building: nothing overtakes it
        time.sleep(0.05)  # the build takes a while
        release.set()
        records = [record for _, _, record in builds.rest()]
    finally:
        builds.close()
    assert [r["instance_id"] for r in records] == ["one", "two", "three"]
    assert started == ["one", "three"]  # one build at a time, in order
    assert records[0]["image"] == "benchsmith/inst.fixture__calc:one"
    assert records[0]["history"]["commits"] == 3
    assert records[0]["prepare"]["image_s"] > 0
    assert records[1]["image"] is None and "prepare" not in records[1]


def test_a_build_that_fails_is_raised_where_its_record_is_taken() -> None:
    def broken() -> tuple[str, History]:
        raise BenchsmithError("building benchsmith/inst.fixture__calc:one failed: no space left")

    builds = ImageBuilds()
    try:
        builds.add(_found("one"), broken)
        with pytest.raises(BenchsmithError, match="no space left"):
            list(builds.rest())
    finally:
        builds.close()
