"""Evaluating in the environment `prepare` validated, where the backend keeps one (see
:class:`~benchsmith.sandbox.store.PreparedStore`): no dependency is installed again, so the
prediction meets the very environment its instance was validated in.

The kept checkout holds the files of the environment's commit (with what its install built
in place) but no git directory; each evaluation gets one cut at its instance's base commit
(made once per base commit and kept beside the environment), moves the files there and
reinstalls the project alone when the base is another commit, as `prepare` did.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from benchsmith.core import History
from benchsmith.harness.checkout import materialize, resolve
from benchsmith.harness.history import seal_dir
from benchsmith.harness.prepare import install_env
from benchsmith.harness.reinstall import move_to, reinstall_between
from benchsmith.harness.worktree import Worktree
from benchsmith.instance import TaskInstance
from benchsmith.sandbox.store import EnvironmentKey, Leased, prepared_key
from benchsmith.sandbox.tools import scratch_dir


def prepared_environment_key(instance: TaskInstance) -> EnvironmentKey | None:
    """The key `prepare` kept the instance's environment under (None for an instance no
    `prepare` validated): the setup commit its verdict names, not the base commit."""
    verdict = (instance.model_extra or {}).get("prepare")
    setup_commit = verdict.get("setup_commit") if isinstance(verdict, dict) else None
    if not setup_commit or not instance.install or not instance.python or not instance.pin():
        return None
    return prepared_key(instance.repo, str(setup_commit), instance.python, instance.pin(),
                        instance.install)


def check_out(leased: Leased, key: EnvironmentKey, instance: TaskInstance,
              source: Callable[[], str], timeout: float) -> tuple[Worktree, History]:
    """Put the instance's base commit, history cut there, into the leased environment's
    checkout; reinstall the project alone when the environment was set up at another commit."""
    git_dir, history = _sealed_git(leased.cache, instance, source)
    sandbox = leased.sandbox
    sandbox.upload(git_dir, ".git")
    reinstall = None
    if instance.reinstall and instance.base_commit != key.commit:
        known = resolve(source(), rev=instance.base_commit, repo=instance.repo)
        reinstall = reinstall_between(instance.reinstall, known.git_dir, key.commit,
                                      instance.base_commit)
    move_to(sandbox, instance.base_commit, reinstall, install_env(instance.python, instance.pin()),
            timeout)
    return Worktree(sandbox), history


def _sealed_git(cache: Path, instance: TaskInstance, source: Callable[[], str]
                ) -> tuple[Path, History]:
    """A git directory at the base commit with nothing later in it, made once per commit."""
    where = cache / "git" / instance.base_commit
    described = where.with_suffix(".json")
    if where.is_dir() and described.is_file():
        return where, History.model_validate_json(described.read_text())
    checkout = resolve(source(), rev=instance.base_commit, repo=instance.repo)
    workspace = scratch_dir("src")
    try:
        repo_dir = materialize(checkout, workspace / "repo")
        history = seal_dir(repo_dir, instance.base_commit, f"{instance.instance_id}'s checkout")
        shutil.rmtree(where, ignore_errors=True)
        where.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(repo_dir / ".git"), where)
        described.write_text(history.model_dump_json())
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    return where, history
