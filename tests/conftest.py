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
        if not (path / ".git").exists():  # else: go on building an existing fixture repository
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


# -- the Docker engine: started by the suite itself when a collected test needs it -----------
_engine: dict[str, object] = {}


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start (and, if needed, install) a Docker engine when a `docker` test will run."""
    if any(item.get_closest_marker("docker") for item in session.items):
        from .docker_engine import start_engine

        _engine["process"], _engine["problem"] = start_engine()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop the engine the suite started (never one that was already running)."""
    from .docker_engine import stop_engine

    stop_engine(_engine.get("process"))  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _docker_engine_available(request: pytest.FixtureRequest) -> None:
    """A Docker test fails with one clear line when no engine could be had."""
    if request.node.get_closest_marker("docker") and _engine.get("problem"):
        pytest.fail(f"Docker engine unavailable: {_engine['problem']}", pytrace=False)


@pytest.fixture(scope="session")
def node_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache of Node builds and managers for the whole test run."""
    return tmp_path_factory.mktemp("node-cache")


@pytest.fixture
def shared_node(node_cache: Path) -> None:
    """Node builds and managers fetched once per run: each test's own cache links them."""
    cache = Path(os.environ["BENCHSMITH_CACHE"])
    cache.mkdir(parents=True, exist_ok=True)
    for name in ("node", "npm-packages"):
        (node_cache / name).mkdir(exist_ok=True)
        (cache / name).symlink_to(node_cache / name)
