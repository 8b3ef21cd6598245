"""`benchsmith docker clean --images LEVEL` and `docker du` on the real engine, with tiny images
tagged and labelled as benchsmith tags its own, and the instance image sizes `evaluate` shows."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import tarfile
import uuid

import pytest

from .test_cli_batch import run_cli

pytestmark = pytest.mark.docker


def _tiny_image(tag: str, size: int = 0) -> None:
    """Import a one-file image (no registry needed) labelled benchsmith=1, `size` bytes of
    random data more than a marker."""
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        body = b"benchsmith test image\n" + os.urandom(size)
        info = tarfile.TarInfo("marker.txt")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    subprocess.run(["docker", "import", "--change", "LABEL benchsmith=1", "-", tag],
                   input=data.getvalue(), check=True, capture_output=True)


def _exists(tag: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", tag], capture_output=True).returncode == 0


def test_clean_images_removes_benchsmith_images_and_du_counts_them() -> None:
    name = f"benchsmith/env.clitest-{uuid.uuid4().hex[:8]}"
    kept, gone = f"{name}:000000000001", f"{name}:000000000002"
    other = f"clitest-{uuid.uuid4().hex[:8]}:latest"  # not benchsmith's: never touched
    for tag in (kept, gone, other):
        _tiny_image(tag)
    try:
        du = run_cli("docker", "du")
        assert du.returncode == 0, du.stderr
        row = next(line for line in du.stdout.splitlines() if "images: env" in line)
        assert int(row.split("│")[2]) >= 2, du.stdout
        without = run_cli("docker", "clean")
        assert without.returncode == 0 and _exists(gone), without.stderr  # images only with --images
        cleaned = run_cli("docker", "clean", "--images", "env", "--match", gone)
        assert cleaned.returncode == 0, cleaned.stderr
        assert f"image {gone}" in cleaned.stdout
        assert not _exists(gone) and _exists(kept) and _exists(other)
        refused = run_cli("docker", "clean", "--match", kept)
        assert refused.returncode == 2 and "needs --images" in refused.stderr and _exists(kept)
    finally:
        subprocess.run(["docker", "rmi", "-f", kept, gone, other], capture_output=True)


def _du_rows() -> dict[str, list[str]]:
    du = run_cli("docker", "du")
    assert du.returncode == 0, du.stderr
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in du.stdout.splitlines()
            if line.count("│") == 5]
    return {row[0]: row[1:] for row in rows}


def _megabytes(text: str) -> float:
    number, unit = text.split()
    return float(number) * {"B": 1e-6, "kB": 1e-3, "MB": 1.0, "GB": 1e3}[unit]


def test_clean_images_by_level_and_du_per_layer_kind() -> None:
    mark = f"clitest{uuid.uuid4().hex[:8]}"
    base, env, instance = (f"benchsmith/base:{mark}", f"benchsmith/env.{mark}:000000000001",
                           f"benchsmith/inst.{mark}:000000000001")
    _tiny_image(base, 3_000_000)
    _tiny_image(env, 2_000_000)
    _tiny_image(instance, 1_000_000)
    try:
        # other runs may share the engine: each row holds at least what was just made
        rows = _du_rows()
        for kind, added in (("base", 3.0), ("env", 2.0), ("instance", 1.0)):
            count, size, detail = rows[f"images: {kind}"]
            assert int(count) >= 1 and _megabytes(size) >= added, (kind, rows)
            assert _megabytes(" ".join(detail.split()[:2])) >= added, (kind, rows)
        assert set(rows) >= {"images: other", "containers", "volumes"}
        glob = f"*{mark}*"
        nothing = run_cli("docker", "clean", "--images", "none")
        assert nothing.returncode == 0 and all(_exists(t) for t in (base, env, instance))
        first = run_cli("docker", "clean", "--images", "instance", "--match", glob)
        assert first.returncode == 0, first.stderr
        assert not _exists(instance) and _exists(env) and _exists(base), first.stdout
        second = run_cli("docker", "clean", "--images", "env", "--match", glob)
        assert not _exists(env) and _exists(base), second.stdout
        third = run_cli("docker", "clean", "--images", "base", "--match", glob)
        assert not _exists(base) and f"image {base}" in third.stdout, third.stdout
        wrong = run_cli("docker", "clean", "--images", "everything")
        assert wrong.returncode == 2 and wrong.stderr.startswith("error: unknown --images level")
    finally:
        subprocess.run(["docker", "rmi", "-f", base, env, instance], capture_output=True)


@pytest.mark.slow
def test_evaluate_on_docker_shows_each_instance_image_size(make_repo, tmp_path) -> None:
    from benchsmith.sandbox.store import instance_name

    from .evaluation_fixture import build_instances, write_instances

    repo, instances = build_instances(make_repo)
    calc1 = instances["fixture__calc-1"]
    file = write_instances(tmp_path / "instances.jsonl", {calc1.instance_id: calc1})
    image = instance_name(calc1.repo, calc1.base_commit)
    try:
        result = run_cli("evaluate", str(file), "--predictions", "gold", "--backend", "docker",
                         "--source", f"fixture/calc={repo}", "--out", str(tmp_path / "runs"))
        assert result.returncode == 0, result.stderr[-2000:]
        size = json.loads(subprocess.run(["docker", "image", "inspect", image], capture_output=True,
                                         text=True, check=True).stdout)[0]["Size"]
        line = next(line for line in result.stdout.splitlines() if line.startswith("instance image"))
        found = re.fullmatch(rf"instance image {calc1.instance_id}: {re.escape(image)} "
                             r"(\S+ \w?B) \((\S+ \w?B) its own\)", line)
        assert found, line
        total, own = (_megabytes(text) for text in found.groups())
        assert abs(total - size / 1e6) < 0.1 + size / 1e8, (line, size)
        assert 0 < own <= total, line  # all its own when squashed (its history cut)
    finally:
        subprocess.run(["docker", "rmi", "-f", image], capture_output=True)


def test_disk_usage_waits_for_one_the_engine_is_already_computing(monkeypatch) -> None:
    """Two clients asking for `system df` at once: the engine answers the second with 500
    "a disk usage operation is already running"; that is waited for, never a failed command."""
    import docker

    from benchsmith.cli import docker as cli_docker
    from benchsmith.core import BenchsmithError

    monkeypatch.setattr(cli_docker.time, "sleep", lambda seconds: None)

    class Busy:
        def __init__(self, busy: int, message: str = "a disk usage operation is already running"):
            self.busy, self.message = busy, message

        def df(self):
            if self.busy:
                self.busy -= 1
                raise docker.errors.APIError("500 Server Error", explanation=self.message)
            return {"Images": [{"RepoTags": ["benchsmith/env.x:1"], "Size": 10, "SharedSize": 4}]}

    assert cli_docker.image_sizes(Busy(2)) == {"benchsmith/env.x:1": (10, 6)}
    with pytest.raises(BenchsmithError, match="disk usage: no such thing"):
        cli_docker.disk_usage(Busy(1, "no such thing"))
    with pytest.raises(BenchsmithError, match="already running"):
        cli_docker.disk_usage(Busy(9), tries=3)
