"""No image benchsmith builds holds a commit after the one it is for: a self-written repository's
later commit adds a unique string, and every layer of every image (files, loose and packed git
objects) is searched for it. Real git, real uv installs, a real Docker engine."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchsmith.evaluation.environment import Environments
from benchsmith.evaluation.run import EvalOptions, Evaluation
from benchsmith.harness.checkout import resolve
from benchsmith.sandbox import DockerSandboxConfig
from benchsmith.sandbox.docker.dependency_images import dependency_image, dependency_name
from benchsmith.sandbox.docker.images import start_from_image
from benchsmith.sandbox.docker.rootfs import image_exists
from benchsmith.setup.engine import SetupEngine
from benchsmith.setup.environments import instance_image, set_up
from benchsmith.setup.options import SetupOptions
from benchsmith.setup.record import SetupRecord

from .conftest import PIN_DATE, RepoBuilder
from .evaluation_fixture import CODE_FILE, TEST_FILE, build_instances, prediction, write_instances
from .leaks import image_contains, tree_contains
from .test_cli_batch import run_cli

pytestmark = [pytest.mark.slow, pytest.mark.docker]

SECRET = "FIX-FROM-THE-FUTURE-c41d2e"


@pytest.fixture
def client() -> Iterator[Any]:
    from benchsmith.sandbox.docker.base import docker_client

    client = docker_client()
    yield client
    for image in client.images.list():  # the fixture repository's images (not the base images)
        for tag in image.tags:
            if tag.startswith(("benchsmith/env.fixture__calc", "benchsmith/inst.fixture__calc")):
                client.images.remove(tag, force=True)


def later_commit(repo: Path) -> str:
    """A commit after the instances' base that holds SECRET in its code, tests and message."""
    code = (repo / CODE_FILE).read_text()
    return RepoBuilder(repo).commit({CODE_FILE: code + f"\n# {SECRET}\n",
                                     TEST_FILE: (repo / TEST_FILE).read_text() + f"\n# {SECRET}\n"},
                                    f"the fix {SECRET}", date="2023-05-20T12:00:00+00:00")


def test_environment_and_instance_images_end_at_their_commit(make_repo, client: Any) -> None:
    repo, instances = build_instances(make_repo)
    base = instances["fixture__calc-1"].base_commit
    later = later_commit(repo)
    engine = SetupEngine(SetupOptions(sandbox=DockerSandboxConfig(), use_refdb=False))
    # An environment set up at the base commit, its sandbox kept live (as `build` keeps it).
    environment = set_up(engine, str(repo), base, PIN_DATE, "fixture/calc")
    assert not isinstance(environment, SetupRecord), environment.failure_reason
    try:
        record = environment.record
        assert record.image and record.history is not None
        assert record.history.base_commit == base and record.history.commits == 2
        assert image_contains(client, record.image, SECRET) == []
        # the live sandbox got its whole history back after the snapshot: it can still move on
        assert environment.sandbox is not None
        assert environment.sandbox.exec(f"git cat-file -e {later}").ok
        # An instance image at the later commit on top of it: its past, so layers are shared.
        image, history = instance_image(engine, record, resolve(str(repo), rev=later))
        assert image and history.base_commit == later and history.commits == 3
        assert client.images.get(record.image).id in {layer for layer in
                                                      _ancestors(client, image)}
    finally:
        environment.close()
    # An environment at the later commit, and an instance image at the base commit from it:
    # not the base's past, so the environment's layers must not be underneath.
    newer = set_up(engine, str(repo), later, PIN_DATE, "fixture/calc")
    assert not isinstance(newer, SetupRecord), newer.failure_reason
    try:
        assert newer.record.image  # the later commit's own files hold it: the search finds it
        assert any("calc/__init__.py" in hit for hit in image_contains(client, newer.record.image,
                                                                       SECRET))
        image, history = instance_image(engine, newer.record, resolve(str(repo), rev=base))
        assert image and history.commits == 2
        assert image_contains(client, image, SECRET) == []
        assert client.images.get(newer.record.image).id not in _ancestors(client, image)
        labels = client.images.get(image).labels
        assert json.loads(labels["benchsmith.history"])["base_commit"] == base
        assert labels["benchsmith.base_layout"]  # the environment's own labels carried over
        # what it shares instead: the environment without its checkout, squashed once
        dependencies = dependency_name(newer.record.image)
        assert client.images.get(dependencies).id in _ancestors(client, image)
        assert image_contains(client, dependencies, SECRET) == []
        _runs_its_tests(image, base)
        # a project installed as a copy keeps the later commit's code in site-packages: no
        # dependency image then, the instance image is squashed on its own
        copied = _installed_as_a_copy(newer.record.image)
        image, _ = instance_image(engine, newer.record.model_copy(update={"image": copied}),
                                  resolve(str(repo), rev=base))
        assert dependency_image(copied) is None and not image_exists(client, dependency_name(copied))
        assert image_contains(client, image, SECRET) == []
        assert client.images.get(copied).id not in _ancestors(client, image)
        _runs_its_tests(image, base)
    finally:
        newer.close()


def _installed_as_a_copy(env_image: str) -> str:
    """`env_image` with its project's package copied into site-packages and recorded there as
    installed (what a non-editable install leaves, and the next install of it removes)."""
    sandbox = start_from_image(env_image)
    try:
        copied = sandbox.exec(
            "site=$(python -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])') && "
            "cp -r src/calc \"$site/\" && record=$(ls \"$site\"/calc-*.dist-info/RECORD) && "
            "(cd \"$site\" && find calc -type f | sed 's/$/,,/') >> \"$record\"")
        assert copied.ok, copied.output
        return sandbox.snapshot("benchsmith/env.fixture__calc:copied", {})
    finally:
        sandbox.close()


def _runs_its_tests(image: str, base: str) -> None:
    sandbox = start_from_image(image)
    try:
        assert sandbox.exec("git rev-parse HEAD").output.strip() == base
        tests = sandbox.exec("python -m pytest -q -p no:cacheprovider tests")
        assert tests.returncode == 0, tests.output[-2000:]
    finally:
        sandbox.close()


def _ancestors(client: Any, image: str) -> set[str]:
    return {layer["Id"] for layer in client.api.history(image) if layer["Id"] != "<missing>"}


def test_published_instances_installed_at_a_later_commit_leak_nothing(
        make_repo, tmp_path: Path, client: Any) -> None:
    repo, instances = build_instances(make_repo)
    later = later_commit(repo)
    calc1 = instances["fixture__calc-1"].model_copy(update={
        "environment_setup_commit": later,
        "reinstall": "uv pip install --no-deps --reinstall -e '.[test]'"})
    # `evaluate` prepares the environment at the later commit, moves to the base, commits it
    environments = Environments(DockerSandboxConfig(), {"fixture/calc": str(repo)}, timeout=600)
    evaluation = Evaluation(EvalOptions(mode="fix", run_dir=tmp_path / "runs"), environments)
    [report] = evaluation.run({calc1.instance_id: calc1},
                              [prediction(calc1.instance_id, calc1.patch)])
    assert report.resolved, report.error or report.infrastructure_reason
    assert report.history is not None and report.history.commits == 2
    from benchsmith.sandbox.store import instance_name

    stored = instance_name(calc1.repo, calc1.base_commit)
    assert image_contains(client, stored, SECRET) == []
    # `export --build`: the build context's checkout and the image it makes
    mirrors = tmp_path / "mirrors"
    (mirrors / "fixture+calc").mkdir(parents=True)
    (mirrors / "fixture+calc" / "repo").symlink_to(repo)
    file = write_instances(tmp_path / "instances.jsonl", {calc1.instance_id: calc1})
    client.images.remove(stored, force=True)
    result = run_cli("export", str(file), "--out", str(tmp_path / "export"), "--mirrors",
                     str(mirrors), "--id", calc1.instance_id, "--build")
    assert result.returncode == 0, result.stderr
    target = tmp_path / "export" / calc1.instance_id
    assert tree_contains(target / "repo", SECRET) == []
    assert json.loads((target / "instance.json").read_text())["history"]["commits"] == 2
    assert image_contains(client, stored, SECRET) == []
    sandbox = start_from_image(stored)
    try:
        assert sandbox.exec("git rev-parse HEAD").output.strip() == calc1.base_commit
        assert sandbox.exec("git log --all --oneline | wc -l").output.strip() == "2"
        assert sandbox.exec("python -m pytest -q -p no:cacheprovider tests").returncode == 0
    finally:
        sandbox.close()
