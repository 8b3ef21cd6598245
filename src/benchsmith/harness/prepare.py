"""A fresh sandbox with a checkout and an environment installed by recorded commands."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from benchsmith.core import BenchsmithError, Diagnosis, NodePlan, Sandbox, output_tail
from benchsmith.harness.checkout import Checkout, materialize
from benchsmith.harness.node_stage import node_install_env, stage_node
from benchsmith.harness.render import uses_pip
from benchsmith.harness.vendored import DEPS_DIR, vendor
from benchsmith.sandbox.config import SandboxConfig, make_sandbox
from benchsmith.sandbox.dated_index import dated_index_url
from benchsmith.sandbox.tools import scratch_dir


def install_env(python: str, exclude_newer: str, packages: dict[str, str] | None = None
                ) -> dict[str, str]:
    """The environment of install commands: uv's date pin, and for pip (Python 2.7) an index
    that shows PyPI as it was at that date, with no machine pip configuration in the way."""
    env = {"UV_EXCLUDE_NEWER": exclude_newer}
    if uses_pip(python):
        env.update({"PIP_INDEX_URL": dated_index_url(exclude_newer, packages),
                    "PIP_CONFIG_FILE": os.devnull, "PIP_NO_PYTHON_VERSION_WARNING": "1",
                    "PIP_NO_INPUT": "1"})
    return env


def absent_packages(sandbox: Sandbox, packages: list[str]) -> list[str]:
    """Of the Debian `packages`, those the sandbox's system has not installed (all of them
    where dpkg cannot tell)."""
    if not packages:
        return []
    query = sandbox.exec("dpkg-query -W -f='${Package} ${db:Status-Status}\\n' "
                         + " ".join(shlex.quote(p) for p in packages) + " 2>/dev/null; true",
                         timeout=60)
    installed = {line.split()[0].split(":")[0] for line in query.output.splitlines()
                 if line.strip().endswith(" installed")}
    return [p for p in packages if p not in installed]


def stage(sandbox: Sandbox, repo_dir: Path, python: str, install: list[str]) -> Diagnosis | None:
    """Put the checkout `repo_dir`, with the sources its `install` commands name, into the
    sandbox and create its Python `python` environment; the diagnosis when either cannot be."""
    try:
        vendor(repo_dir, install)
    except BenchsmithError as exc:  # a reused plan names a source this machine cannot reach
        return Diagnosis(category="installation", kind="direct_url_unreachable", reason=str(exc),
                         facts={"urls": [word for command in install for word in command.split()
                                         if DEPS_DIR in word]})
    sandbox.upload(repo_dir, sandbox.workdir)
    try:
        sandbox.setup_python(python)
    except BenchsmithError as exc:
        return Diagnosis(category="python", kind="python_unavailable", reason=str(exc))
    return None


def prepare_sandbox(config: SandboxConfig, checkout: Checkout, python: str,
                    install: list[str], exclude_newer: str, timeout: float,
                    node: NodePlan | None = None) -> Sandbox:
    """A fresh sandbox with the checkout, a Python `python` venv and the `install` commands run;
    with `node`, that plan's Node and package manager are staged first (:func:`stage_node`).

    Raises BenchsmithError (after closing the sandbox) when a command fails.
    """
    sandbox = make_sandbox(config)
    workspace = scratch_dir("src")
    try:
        repo_dir = materialize(checkout, workspace / "repo", portable=config.portable_checkout)
        staged = (stage_node(sandbox, repo_dir, python, node) if node is not None
                  else stage(sandbox, repo_dir, python, install))
        if staged:
            raise BenchsmithError(staged.reason)
        env = install_env(python, exclude_newer) | (node_install_env(node) if node else {})
        for command in install:
            result = sandbox.exec(command, env=env, timeout=timeout)
            if not result.ok:
                tail = output_tail(result.output) if result.output.strip() else ""
                raise BenchsmithError(f"install failed at {checkout.commit[:12]}: {tail}")
    except BaseException:
        sandbox.close()
        raise
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    return sandbox


def network_for_tests(sandbox: Sandbox, network: str, offline: bool) -> str:
    """Give `sandbox` the network a prediction's tests get, and say which: with `offline` none
    where the backend can cut it, else package indexes offline and proxies at one that reaches
    loopback only (`evaluate` and `prepare`'s label check both use this)."""
    if not offline:
        return network if sandbox.set_network(True) else "none"
    if sandbox.set_network(False):
        return "none (loopback only)"
    return f"{network} (package indexes offline, proxies reach loopback only)"
