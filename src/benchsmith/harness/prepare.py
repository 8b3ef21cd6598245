"""A fresh sandbox with a checkout and an environment installed by recorded commands."""

from __future__ import annotations

import os
import re
import shlex
import shutil
from pathlib import Path, PurePosixPath

from benchsmith.core import BenchsmithError, Diagnosis, NodePlan, Sandbox, output_tail
from benchsmith.harness.checkout import Checkout, git, materialize
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


def move_to(sandbox: Sandbox, commit: str, reinstall: str | None, env: dict[str, str],
            timeout: float) -> None:
    """Check `commit` out in the sandbox's checkout and reinstall the project alone there
    (`reinstall`; None: the installed project stays)."""
    for command in filter(None, (f"git checkout -f -q {commit} && git clean -fdq", reinstall)):
        result = sandbox.exec(command, env=env, timeout=timeout)
        if not result.ok:
            raise BenchsmithError(f"install failed at {commit[:12]}: {output_tail(result.output)}")


def network_for_tests(sandbox: Sandbox, network: str, offline: bool) -> str:
    """Give `sandbox` the network a prediction's tests get, and say which: with `offline` none
    where the backend can cut it, else package indexes offline and proxies at one that reaches
    loopback only (`evaluate` and `prepare`'s label check both use this)."""
    if not offline:
        return network if sandbox.set_network(True) else "none"
    if sandbox.set_network(False):
        return "none (loopback only)"
    return f"{network} (package indexes offline, proxies reach loopback only)"


# files whose change makes an installed project stale even when it is installed editable: what
# builds its extensions and the sources compiled into them; its build configuration where a
# changed line concerns what the install made (entry points, extensions, the version...)
_BUILD_FILES = {"setup_package.py", "meson.build", "meson_options.txt", "CMakeLists.txt",
                "Cargo.toml", "Cargo.lock", "build.rs"}
_CONFIG_FILES = {"setup.py", "setup.cfg", "pyproject.toml"}
_COMPILED = {".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".pyx", ".pxd", ".pxi", ".f",
             ".f90", ".for", ".cu", ".rs", ".go"}
_INSTALLED_KEYS = re.compile(
    r"ext_modules|Extension\b|cythoni[sz]e|entry[_.-]points|console_scripts|gui_scripts|"
    r"\bscripts\b|package[_-]dir|cmdclass|build_ext|\bversion\s*[=:]|setup_requires|build-system|"
    r"\bdynamic\b|\bwhere\b|py_modules|\[options\]", re.IGNORECASE)
# a changed line of a build configuration that reads as a requirement ("wcwidth",
# '"numpy>=1.15",') or names a list of them: the editable install adds what it declares
_REQUIREMENT_LINE = re.compile(
    r"""^\s*["']?[A-Za-z0-9][\w.-]*\s*(?:\[[\w,\s-]*\])?\s*(?:(?:===|[<>=!~]=|[<>])\s*[\w.*+!-]+\s*,?\s*)*"""
    r"""(?:;.*|["']?\s*,?\s*(?:#.*)?)$|install_requires|\bdependencies\b|extras_require|"""
    r"""optional-dependencies|\brequires\b""", re.IGNORECASE)
# an editable install by uv (PEP 660: its metadata in site-packages, none in the checkout,
# where `git clean` would remove what `setup.py develop` or pip's legacy path leave there)
_EDITABLE = re.compile(r"^(?:\S+=\S*\s+)*uv pip install\s.*(?:^|\s)(?:-e|--editable)\s+\.(?:\s|$)")


def reinstall_between(reinstall: str | None, git_dir: str | Path | None,
                      installed: str | None, commit: str) -> str | None:
    """`reinstall` for moving a checkout installed at commit `installed` to `commit`, or None
    when the install serves both: it is uv's editable install (the files are imported where
    they are) of a project without compiled sources, and between the two commits no top-level
    package and nothing of the build configuration that the install made (see
    `_INSTALLED_KEYS`) changed. Anything git cannot tell keeps the reinstall. "Nothing such
    changed" carries from one commit to the next and the next, so a checkout moved several
    times may diff from its last commit."""
    if not reinstall or not _EDITABLE.search(reinstall) or not git_dir or not installed:
        return reinstall
    try:
        # a project with compiled sources has extensions built in place, untracked: reinstalled
        tracked = git("--git-dir", str(git_dir), "ls-tree", "-r", "--name-only", installed,
                      timeout=120)
        if any(PurePosixPath(path).suffix in _COMPILED for path in tracked.splitlines()):
            return reinstall
        listed = git("--git-dir", str(git_dir), "diff", "--name-status", "--no-renames",
                     installed, commit, timeout=120)
        changes = [line.split("\t", 1) for line in listed.splitlines() if "\t" in line]
        if any(_changes_install(status, path) for status, path in changes):
            return reinstall
        configs = [path for _, path in changes if PurePosixPath(path).name in _CONFIG_FILES]
        lines = git("--git-dir", str(git_dir), "diff", "-U0", "--no-renames", installed, commit,
                    "--", *configs, timeout=120) if configs else ""
    except BenchsmithError:
        return reinstall
    changed = [line[1:] for line in lines.splitlines()
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    stale = any(_INSTALLED_KEYS.search(line) or _REQUIREMENT_LINE.search(line) for line in changed)
    return reinstall if stale else None


def _changes_install(status: str, path: str) -> bool:
    """Whether the change `status` (git's A, M, D...) of `path` makes an editable install stale
    whatever its lines: a file that builds extensions or a compiled source, or a module or
    package added or removed at the top (src/ or lib/ included), which an editable install's
    finder may map by name."""
    name = PurePosixPath(path)
    if name.name in _BUILD_FILES or name.suffix in _COMPILED:
        return True
    parts = name.parts[1:] if name.parts[0] in ("src", "lib") and len(name.parts) > 1 else name.parts
    top_module = len(parts) == 1 and name.suffix == ".py" and name.name not in _CONFIG_FILES
    top_package = len(parts) == 2 and name.name == "__init__.py"
    return status.startswith(("A", "D")) and (top_module or top_package)
