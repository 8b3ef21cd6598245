"""Dependencies as of a date, against a fake npm registry with known publish times."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from benchsmith.setup.node.context import read_node_context
from benchsmith.setup.node.dating import (
    apply_dating,
    choose_dating,
    dated_install_command,
    times_trust,
)
from benchsmith.setup.node.managers import choose_manager
from benchsmith.testing.fake_npm_registry import FakeNpmRegistry, FakePackage


def _day(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc)


REAL = FakePackage("tiny-dep", {"1.0.0": _day("2020-01-10"), "1.1.0": _day("2021-02-03"),
                                "1.2.0": _day("2022-03-04"), "2.0.0": _day("2022-09-09"),
                                "1.2.1": _day("2022-10-01")})  # a backport after 2.0.0 is normal
# As a mirror that took old versions in late reports them: all on two days, out of order.
MIRRORED = FakePackage("mirrored-dep", {
    "1.0.0": _day("2024-12-05T10:00:03"), "1.1.0": _day("2024-12-05T09:58:40"),
    "1.2.0": _day("2024-12-06T01:00:00"), "1.3.0": _day("2024-12-05T09:59:10"),
    "1.4.0": _day("2024-12-05T10:00:01")})


def _npm_env(registry: str, home: Path) -> dict[str, str]:
    return {**os.environ, "npm_config_registry": registry, "npm_config_cache": str(home / "cache"),
            "npm_config_audit": "false", "npm_config_fund": "false",
            "npm_config_update_notifier": "false"}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout.strip()


def _commit(repo: Path, message: str, files: dict[str, str | None]) -> str:
    for name, text in files.items():
        if text is None:
            (repo / name).unlink()
        else:
            (repo / name).write_text(text, encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-qm", message)
    return _git(repo, "rev-parse", "HEAD")


def _installed(repo: Path, name: str) -> str:
    return str(json.loads((repo / "node_modules" / name / "package.json").read_text())["version"])


def test_times_trust_tells_real_publish_times_from_a_mirrors() -> None:
    with FakeNpmRegistry([REAL, MIRRORED]) as registry:
        real = times_trust(registry.packument(REAL))
        mirrored = times_trust(registry.packument(MIRRORED))
    assert real.trustworthy and not real.reasons
    assert not mirrored.trustworthy
    assert any("versions dated on" in reason for reason in mirrored.reasons)
    assert any("published after the next one" in reason for reason in mirrored.reasons)


def test_npm_before_resolves_as_of_the_date_when_times_are_trusted(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "package.json").write_text(json.dumps(
        {"name": "app", "version": "1.0.0", "dependencies": {"tiny-dep": "^1.0.0"}}))
    with FakeNpmRegistry([REAL, MIRRORED]) as registry:
        plan = choose_dating(repo, read_node_context(repo), "2021-06-01", registry=registry.url)
        assert (plan.method, plan.dated, plan.before) == ("before", True, "2021-06-01")
        command = dated_install_command(plan, choose_manager(read_node_context(repo), "20"))
        assert command == ["npm", "install", "--before=2021-06-01"]
        subprocess.run(command, cwd=repo, env=_npm_env(registry.url, tmp_path), check=True,
                       capture_output=True, timeout=300)
        assert _installed(repo, "tiny-dep") == "1.1.0"  # 1.2.0 came out in 2022
        assert "/tiny-dep" in registry.requests


def test_untrusted_times_take_the_nearest_earlier_lockfile_from_history(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    with FakeNpmRegistry([REAL, MIRRORED]) as registry:
        doc = registry.packument(MIRRORED)["versions"]["1.1.0"]  # type: ignore[index]
        lock = {"name": "app", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
                "packages": {"": {"name": "app", "version": "1.0.0",
                                  "dependencies": {"mirrored-dep": "^1.0.0"}},
                             "node_modules/mirrored-dep": {
                                 "version": "1.1.0", "resolved": doc["dist"]["tarball"],
                                 "integrity": doc["dist"]["integrity"]}}}
        package = {"name": "app", "version": "1.0.0", "dependencies": {"mirrored-dep": "^1.0.0"}}
        locked = _commit(repo, "lock", {"package.json": json.dumps(package),
                                        "package-lock.json": json.dumps(lock)})
        _commit(repo, "drop the lockfile", {"package-lock.json": None})
        package["description"] = "changed after the lockfile went"
        head = _commit(repo, "describe", {"package.json": json.dumps(package)})
        ctx = read_node_context(repo)
        plan = choose_dating(repo, ctx, "2023-01-01", commit=head, registry=registry.url)
        assert (plan.method, plan.history_commit, plan.lockfile) == (
            "history-lockfile", locked, "package-lock.json")
        assert [t.package for t in plan.untrusted] == ["mirrored-dep"]
        apply_dating(repo, plan)
        command = dated_install_command(plan, choose_manager(read_node_context(repo), "20"))
        assert command == ["npm", "install"]
        subprocess.run(command, cwd=repo, env=_npm_env(registry.url, tmp_path), check=True,
                       capture_output=True, timeout=300)
        assert _installed(repo, "mirrored-dep") == "1.1.0"  # the lockfile's, not the newest 1.4.0


def test_without_trusted_times_or_history_the_install_is_not_dated(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    head = _commit(repo, "start", {"package.json": json.dumps(
        {"name": "app", "dependencies": {"mirrored-dep": "^1.0.0", "absent-dep": "^1"}})})
    with FakeNpmRegistry([MIRRORED]) as registry:
        plan = choose_dating(repo, read_node_context(repo), "2023-01-01", commit=head,
                             registry=registry.url)
    assert (plan.method, plan.dated) == ("not-dated", False)
    assert sorted(t.package for t in plan.untrusted) == ["absent-dep", "mirrored-dep"]


def test_the_projects_lockfile_comes_first(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text(json.dumps({"name": "app"}))
    (tmp_path / "yarn.lock").write_text("# yarn lockfile v1\n")
    plan = choose_dating(tmp_path, read_node_context(tmp_path), "2020-01-01")
    assert (plan.method, plan.lockfile) == ("lockfile", "yarn.lock")
    manager = choose_manager(read_node_context(tmp_path), "12")
    assert dated_install_command(plan, manager) == ["yarn", "install", "--frozen-lockfile"]


@pytest.fixture(autouse=True)
def _needs_npm() -> None:
    assert shutil.which("npm"), "npm is needed (Debian's `npm` package)"
