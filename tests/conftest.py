"""Shared fixtures: self-built git repositories and an isolated benchsmith cache."""

from __future__ import annotations

import os
import signal
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

# A suite started as a background job of a non-interactive shell inherits an ignored SIGINT,
# which its subprocesses inherit too; the interrupt tests need Ctrl-C to work wherever it runs.
signal.signal(signal.SIGINT, signal.default_int_handler)

# Every fixture repository pins its dependencies to this date (pytest 7.3.1, Python 3.11).
PIN_DATE = "2023-06-01"


def _git(cwd: Path, *args: str, date: str | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Fixture", "GIT_AUTHOR_EMAIL": "fixture@example.com",
           "GIT_COMMITTER_NAME": "Fixture", "GIT_COMMITTER_EMAIL": "fixture@example.com"}
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


class RepoBuilder:
    """Builds a real git repository commit by commit."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True)
        _git(path, "init", "-q", "-b", "main")

    def commit(self, files: dict[str, str | None], message: str = "change",
               date: str = "2023-05-01T12:00:00+00:00") -> str:
        """Write (or delete, for None) files and commit them at `date`; return the sha."""
        for name, content in files.items():
            target = self.path / name
            if content is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(textwrap.dedent(content).lstrip("\n"))
        _git(self.path, "add", "-A")
        _git(self.path, "commit", "-q", "-m", message, date=date)
        return _git(self.path, "rev-parse", "HEAD")


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., RepoBuilder]:
    """Factory: make_repo("name", files) -> RepoBuilder with a first commit."""

    def build(name: str, files: dict[str, str | None], date: str = "2023-05-01T12:00:00+00:00") -> RepoBuilder:
        builder = RepoBuilder(tmp_path / "repos" / name)
        builder.commit(files, "initial", date=date)
        return builder

    return build


@pytest.fixture(autouse=True)
def isolated_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the reference database and clone cache of each test to itself."""
    monkeypatch.setenv("BENCHSMITH_REFDB", str(tmp_path / "state" / "reference.sqlite"))
    monkeypatch.setenv("BENCHSMITH_CACHE", str(tmp_path / "state" / "cache"))
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret_should_not_leak")
