"""Validated environments reused across the commits of one repository: set up once, then a
sandbox at another commit is the same install with the project reinstalled, for as long as no
dependency file changes. Task mining (`build`) and dataset preparation (`prepare`) share it."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from benchsmith.core import BenchsmithError, History, Plan, Sandbox
from benchsmith.harness.checkout import Checkout, git, materialize
from benchsmith.harness.history import seal_dir
from benchsmith.harness.prepare import install_env, prepare_sandbox
from benchsmith.harness.reinstall import move_to, reinstall_between
from benchsmith.harness.render import render_reinstall
from benchsmith.harness.vendored import vendor
from benchsmith.sandbox.tools import scratch_dir
from benchsmith.setup.ecosystems import ecosystem_of
from benchsmith.setup.engine import SetupEngine
from benchsmith.setup.record import SetupRecord

T = TypeVar("T")

DEPENDENCY_FILES = ("setup.py", "setup.cfg", "pyproject.toml", "tox.ini", "noxfile.py", "Pipfile",
                    "requirements*.txt", "requirements", "*requirements*.txt",
                    # Node: the manifests, lockfiles, version files and manager settings
                    "package.json", "*/package.json", "package-lock.json", "npm-shrinkwrap.json",
                    "yarn.lock", "pnpm-lock.yaml", "pnpm-workspace.yaml", ".nvmrc",
                    ".node-version", ".npmrc", ".yarnrc", ".yarnrc.yml")


class Environment:
    """A validated plan and, while dependencies do not change, a live sandbox to reuse."""

    def __init__(self, plan: Plan, commit: str, setup_commit: str, record: SetupRecord) -> None:
        self.plan, self.commit, self.setup_commit = plan, commit, setup_commit
        self.record = record  # the validating setup (its image is the environment image)
        self.sandbox: Sandbox | None = None
        self.sandbox_commit: str | None = None  # the commit the live sandbox's project was installed at

    def close(self) -> None:
        """Close the live sandbox, if any (the plan stays usable)."""
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None


def set_up(engine: SetupEngine, source: str, commit: str, on_date: str,
           repo: str, focus: list[str] | None = None) -> Environment | SetupRecord:
    """Set `source` up at `commit`; the environment (its validating sandbox kept live, at that
    commit), or the record of a setup that did not validate. `focus`: see
    :meth:`SetupEngine.setup`."""
    kept: list[Sandbox] = []
    record = engine.setup(source, rev=commit, on_date=on_date, repo=repo, keep=kept.append,
                          focus=focus)
    if record.status != "validated" or record.plan is None:
        for sandbox in kept:
            sandbox.close()
        return record
    environment = Environment(record.plan, commit, commit, record)
    for sandbox in kept[:-1]:  # a later round validated better (setup/optional.py)
        sandbox.close()
    environment.sandbox = kept[-1] if kept else None
    environment.sandbox_commit = commit
    return environment


def same_dependencies(checkout: Checkout, previous: str) -> bool:
    """True when no dependency file differs between `previous` and the checkout's commit."""
    if checkout.git_dir is None:
        return False
    try:
        changed = git("diff", "--name-only", previous, checkout.commit, "--", *DEPENDENCY_FILES,
                      cwd=checkout.git_dir)
    except BenchsmithError:
        return False
    return not changed.strip()


def sandbox_at(engine: SetupEngine, environment: Environment, plan: Plan, checkout: Checkout) -> Sandbox:
    """A sandbox at `checkout`'s commit with the environment installed: the live one, reset and
    the project reinstalled, else a fresh one installed from the plan."""
    if environment.sandbox is not None:
        sandbox = environment.sandbox
        same = environment.sandbox_commit == checkout.commit
        try:
            reinstall = None if same else reinstall_between(
                render_reinstall(plan), checkout.git_dir, environment.sandbox_commit, checkout.commit)
            # an instance's tests before may have left it without the network
            move_to(sandbox, checkout.commit, reinstall,
                    install_env(plan.python, plan.exclude_newer, plan.exclude_newer_packages), 900,
                    connect=True)
        except BenchsmithError:
            environment.close()
        else:
            environment.sandbox_commit = checkout.commit
            return sandbox
    options = engine.options
    sandbox = prepare_sandbox(options.sandbox, checkout, plan.python, install_commands(engine, plan),
                              plan.exclude_newer, options.install_timeout_s, node=plan.node)
    environment.sandbox, environment.sandbox_commit = sandbox, checkout.commit
    return sandbox


def install_commands(engine: SetupEngine, plan: Plan) -> list[str]:
    """The install commands of `plan`, rendered by its ecosystem (what an instance records)."""
    return ecosystem_of(plan, engine.apt).render(plan)[0]


def instance_image(engine: SetupEngine, record: SetupRecord, checkout: Checkout
                   ) -> tuple[str | None, History]:
    """The per-instance image (the commit's checkout on top of the environment image) and what
    its checkout keeps of git history, cut at the commit. An environment image of a commit
    outside the instance's past is squashed away underneath (no layer keeps that commit)."""
    assert record.image is not None and record.commit
    workspace = scratch_dir("src")
    try:
        repo_dir = materialize(checkout, workspace / "repo")
        vendor(repo_dir, record.install)
        history = seal_dir(repo_dir, checkout.commit, f"{record.repo} at {checkout.commit[:12]}")
        past = record.commit == checkout.commit or is_ancestor(checkout, record.commit)
        image = engine.options.sandbox.derive_image(
            record.image, record.repo, checkout.commit, repo_dir, render_reinstall(record.plan),
            history, squash=not past)
        return image, history
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def is_ancestor(checkout: Checkout, commit: str) -> bool:
    """True when `commit` is in the past of the checkout's commit."""
    if checkout.git_dir is None:
        return False
    try:
        git("merge-base", "--is-ancestor", commit, checkout.commit, cwd=checkout.git_dir)
    except BenchsmithError:
        return False
    return True


def run_groups(engine: SetupEngine, work: Callable[[T], None], groups: Iterable[T], jobs: int) -> None:
    """`work` on every group, `jobs` at a time (each group's items stay in order, one thread);
    on Ctrl-C the engine's running setups are cancelled before it is raised again."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures: list[Future[None]] = []
        try:
            for group in groups:
                futures.append(pool.submit(work, group))
            for future in futures:
                future.result()
        except KeyboardInterrupt:
            for future in futures:  # first: a group that ends on the cancel starts no other
                future.cancel()
            engine.cancel()
            pool.shutdown(wait=True)
            raise
