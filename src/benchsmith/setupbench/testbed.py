"""Filling a task's container before the agent starts: the repository at `base_commit` in
/testbed (a shallow clone from a local mirror or the URL), the fixture folder, the problem
statement, and the pre-runner."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from benchsmith.core import BenchsmithError, ExecResult, Sandbox
from benchsmith.harness.checkout import git, resolve_source
from benchsmith.setupbench.agents import HARNESS_DIR, PROBLEM_FILE
from benchsmith.setupbench.tasks import SetupTask, fixture_folder, repo_slug

TESTBED = "/testbed"


def clone_at(task: SetupTask, mirrors: str | None, dest: Path) -> Path:
    """A clone of the task's repository at `base_commit` in `dest`: one commit deep (the
    history of a large project would be most of the harness's time), `origin` set to the
    published URL."""
    assert task.repo_url is not None
    slug = repo_slug(task.repo_url)
    source = resolve_source(slug, mirrors)
    if "://" in source:  # not in `mirrors`: the mirrors next to the tasks file, else the URL
        source = resolve_source(slug, str(Path(task.source_dir or ".") / "mirrors"))
    if "://" in source and "github.com/" in source:
        source = task.repo_url
    if Path(source).is_dir():  # a bundle file is fetched from its path
        source = f"file://{Path(source).resolve()}"
    rev = task.base_commit or "HEAD"
    git("init", "--quiet", str(dest))
    try:
        git("fetch", "--quiet", "--depth", "1", source, rev, cwd=dest, timeout=900)
    except BenchsmithError as exc:
        raise BenchsmithError(f"cloning {task.repo_url} at {rev} from {source} failed: "
                              f"{str(exc).splitlines()[-1][-200:]}") from None
    git("-c", "advice.detachedHead=false", "checkout", "--quiet", "FETCH_HEAD", cwd=dest)
    git("remote", "add", "origin", task.repo_url, cwd=dest)
    return dest


def fill_testbed(sandbox: Sandbox, task: SetupTask, mirrors: str | None,
                 fixtures_root: Path | None) -> None:
    """Put the repository, the fixtures and the problem statement into the container."""
    folder = fixture_folder(task, fixtures_root)  # a missing folder fails before any clone
    sandbox.write_file(PROBLEM_FILE, task.problem_statement.encode())
    if task.repo_url:
        host = Path(tempfile.mkdtemp(prefix="benchsmith-setupbench-"))
        try:
            clone_at(task, mirrors, host / "testbed")
            sandbox.upload(host / "testbed", TESTBED)
        finally:
            shutil.rmtree(host, ignore_errors=True)
    if folder is not None:
        sandbox.upload(folder, TESTBED)
    made = sandbox.exec(f"mkdir -p {TESTBED} {HARNESS_DIR}", cwd="/", timeout=60, use_venv=False)
    if not made.ok:
        raise BenchsmithError(f"preparing {TESTBED} failed: {made.output.strip()[-200:]}")


def run_pre_runner(sandbox: Sandbox, task: SetupTask, timeout: float) -> ExecResult | None:
    """Run the task's pre-runner script as root in /testbed (None when it has none)."""
    script = task.script("pre_runner")
    if script is None:
        return None
    sandbox.write_file(f"{HARNESS_DIR}/pre_runner.sh", script.encode())
    return sandbox.exec(f"bash {HARNESS_DIR}/pre_runner.sh", cwd=TESTBED, timeout=timeout,
                        env={"DEBIAN_FRONTEND": "noninteractive"}, use_venv=False)
