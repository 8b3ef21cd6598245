"""Whether a checkout installed at one commit needs its project installed again at another.

Moving an environment's checkout to another commit (an instance's base commit, the next
instance of a group) reinstalls the project only where the install would come out different:
uv's editable install imports the files where they are, so most moves need nothing. What does
count is decided from git alone, without running anything: files that build extensions and
their compiled sources, a module or package added or removed at the top, and the settings of
the top-level setup.py, setup.cfg and pyproject.toml that shape the install (compared as read,
so comments, descriptive metadata and other tools' settings do not count). Where only the
declared requirements changed, the reinstall is conditional: it runs only when one of the new
commit's requirements is not installed in the sandbox (`move_to` checks in the sandbox)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from benchsmith.core import BenchsmithError, Sandbox, output_tail
from benchsmith.harness.checkout import git
from benchsmith.parsing.setuptools_config import declared


class Reinstall(NamedTuple):
    """The command that reinstalls the project, and `unless`: requirements that, all
    installed already, make it unneeded (None: it runs whatever is installed)."""

    command: str
    unless: tuple[str, ...] | None = None


# files whose change makes an installed project stale even when it is installed editable: what
# builds its extensions and the sources compiled into them
_BUILD_FILES = {"setup_package.py", "meson.build", "meson_options.txt", "CMakeLists.txt",
                "Cargo.toml", "Cargo.lock", "build.rs"}
_CONFIG_FILES = ("setup.py", "setup.cfg", "pyproject.toml")
_COMPILED = {".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".pyx", ".pxd", ".pxi", ".f",
             ".f90", ".for", ".cu", ".rs", ".go"}
# folders whose compiled sources are test data or examples unless something builds them
_SIDE_DIRS = {"tests", "test", "testing", "doc", "docs", "examples", "example", "benchmarks"}
# an editable install by uv (PEP 660: its metadata in site-packages, none in the checkout,
# where `git clean` would remove what `setup.py develop` or pip's legacy path leave there)
# a requirement file, which setup.py or a dynamic pyproject field may read
_REQUIREMENT_FILE = re.compile(r"requirements[^/]*\.(?:txt|in)$|^requirements/", re.IGNORECASE)
_EDITABLE = re.compile(r"^(?:\S+=\S*\s+)*uv pip install\s.*(?:^|\s)(?:-e|--editable)\s+\.(?:\s|$)")


def reinstall_between(reinstall: str | None, git_dir: str | Path | None,
                      installed: str | None, commit: str) -> Reinstall | None:
    """How to move a checkout whose project `reinstall` installed at commit `installed` to
    `commit`: None when the install serves both, a conditional `Reinstall` where only the
    declared requirements changed, else the reinstall. Anything git cannot tell reinstalls.
    "Nothing changed" carries from one commit to the next, so a checkout moved several times
    may compare with its last commit."""
    if not reinstall:
        return None
    certain = Reinstall(reinstall)
    if not _EDITABLE.search(reinstall) or not git_dir or not installed:
        return certain
    try:
        tracked = _git(git_dir, "ls-tree", "-r", "--name-only", installed).splitlines()
        before = _build_files(git_dir, installed)
        builds = (any(PurePosixPath(path).name in _BUILD_FILES for path in tracked)
                  or "ext_modules" in (before.get("setup.py") or ""))
        if any(_compiled(path, builds) for path in tracked):
            return certain  # extensions built in place, untracked: rebuilt by a reinstall
        listed = _git(git_dir, "diff", "--name-status", "--no-renames", installed, commit)
        changes = [line.split("\t", 1) for line in listed.splitlines() if "\t" in line]
        if any(_changes_install(status, path, builds) for status, path in changes):
            return certain
        settings = [path for _, path in changes
                    if path in _CONFIG_FILES or _REQUIREMENT_FILE.search(path)]
        if not settings:
            return None
        after = _build_files(git_dir, commit)
    except BenchsmithError:
        return certain
    requires: list[str] = []
    changed = computed = False
    for name in _CONFIG_FILES:
        old, new = declared(name, before.get(name)), declared(name, after.get(name))
        if old.build is None or new.build is None or old.build != new.build:
            return certain
        if old.requires is None or new.requires is None:  # computed: unknown unless unchanged
            if before.get(name) != after.get(name):
                return certain
            computed = True
        else:
            changed = changed or old.requires != new.requires
            requires += new.requires
    if computed and any(_REQUIREMENT_FILE.search(path) for path in settings):
        return certain  # a requirement file that a computed list may read
    return Reinstall(reinstall, tuple(requires)) if changed else None


def _git(git_dir: str | Path, *args: str) -> str:
    return git("--git-dir", str(git_dir), *args, timeout=120)


def _build_files(git_dir: str | Path, commit: str) -> dict[str, str | None]:
    """The top-level setup.py, setup.cfg and pyproject.toml at `commit` (None: absent)."""
    present = _git(git_dir, "ls-tree", "--name-only", commit, "--", *_CONFIG_FILES).split()
    return {name: _git(git_dir, "show", f"{commit}:{name}") if name in present else None
            for name in _CONFIG_FILES}


def _compiled(path: str, builds: bool) -> bool:
    """A compiled source of the project's own (test data and examples count only where a
    build file or setup.py's ext_modules may build them)."""
    name = PurePosixPath(path)
    return name.suffix in _COMPILED and (builds or name.parts[0] not in _SIDE_DIRS)


def _changes_install(status: str, path: str, builds: bool) -> bool:
    """Whether the change `status` (git's A, M, D...) of `path` makes an editable install stale
    whatever its lines: a file that builds extensions or a compiled source, or a module or
    package added or removed at the top (src/ or lib/ included), which an editable install's
    finder may map by name."""
    name = PurePosixPath(path)
    if name.name in _BUILD_FILES or _compiled(path, builds):
        return True
    parts = name.parts[1:] if name.parts[0] in ("src", "lib") and len(name.parts) > 1 else name.parts
    top_module = len(parts) == 1 and name.suffix == ".py" and name.name not in _CONFIG_FILES
    top_package = len(parts) == 2 and name.name == "__init__.py"
    return status.startswith(("A", "D")) and (top_module or top_package)


# Run by the sandbox's Python (2.7 included): the distributions on sys.path by name and
# version, and the environment that requirement markers are evaluated in.
_LIST_INSTALLED = r"""
import io, json, os, platform, sys
found = {}
for folder in sys.path:
    try:
        names = sorted(os.listdir(folder or "."))
    except Exception:
        continue
    for name in names:
        path = os.path.join(folder or ".", name)
        if name.endswith(".dist-info"):
            path = os.path.join(path, "METADATA")
        elif name.endswith(".egg-info"):
            path = os.path.join(path, "PKG-INFO") if os.path.isdir(path) else path
        else:
            continue
        try:
            with io.open(path, encoding="utf-8", errors="replace") as handle:
                head = handle.read(8192)
        except Exception:
            continue
        meta = {}
        for line in head.splitlines():
            if not line.strip():
                break
            key, _, value = line.partition(":")
            meta.setdefault(key.strip(), value.strip())
        if meta.get("Name"):
            found.setdefault(meta["Name"], meta.get("Version", ""))
impl = getattr(sys, "implementation", None)
def full(v):
    text = "%d.%d.%d" % (v[0], v[1], v[2])
    return text if v[3] == "final" else text + v[3][0] + str(v[4])
env = {"implementation_name": impl.name if impl else "cpython",
       "implementation_version": full(impl.version) if impl else full(sys.version_info),
       "os_name": os.name, "platform_machine": platform.machine(),
       "platform_release": platform.release(), "platform_system": platform.system(),
       "platform_version": platform.version(), "python_full_version": platform.python_version(),
       "platform_python_implementation": platform.python_implementation(),
       "python_version": ".".join(platform.python_version_tuple()[:2]),
       "sys_platform": sys.platform}
print("BENCHSMITH-INSTALLED " + json.dumps({"installed": found, "env": env}))
"""


def installed_in(sandbox: Sandbox, timeout: float = 120) -> tuple[dict[str, str], dict[str, str]] | None:
    """The distributions installed for the sandbox's Python (name: version) and its marker
    environment; None where the sandbox cannot tell."""
    quoted = _LIST_INSTALLED.replace("'", "'\"'\"'")
    result = sandbox.exec(f"python -c '{quoted}'", timeout=timeout)
    for line in result.output.splitlines() if result.ok else []:
        if line.startswith("BENCHSMITH-INSTALLED "):
            try:
                data = json.loads(line.split(" ", 1)[1])
                return dict(data["installed"]), dict(data["env"])
            except (ValueError, KeyError, TypeError):
                return None
    return None


def satisfied(requires: Iterable[str], installed: Mapping[str, str],
              env: Mapping[str, str]) -> bool:
    """Whether every requirement of `requires` whose marker holds in `env` is met by a
    distribution of `installed`; a requirement that cannot be checked (a URL, extras, an
    unreadable line or version) is not met."""
    versions = {canonicalize_name(name): version for name, version in installed.items()}
    for line in requires:
        try:
            requirement = Requirement(line)
            if requirement.marker and not requirement.marker.evaluate({**env, "extra": ""}):
                continue
            version = versions.get(canonicalize_name(requirement.name))
            if version is None or requirement.url or requirement.extras:
                return False
            if not requirement.specifier.contains(Version(version), prereleases=True):
                return False
        except (InvalidRequirement, InvalidMarker, InvalidVersion, UndefinedComparison,
                UndefinedEnvironmentName):
            return False
    return True


def move_to(sandbox: Sandbox, commit: str, reinstall: Reinstall | None, env: dict[str, str],
            timeout: float, connect: bool = False) -> None:
    """Check `commit` out in the sandbox's checkout and reinstall the project alone there as
    `reinstall` says (None: the installed project stays); a conditional reinstall runs only
    where a requirement is not installed. With `connect`, the sandbox is given the network
    where a reinstall runs (and only there)."""
    checkout = f"git checkout -f -q {commit} && git clean -fdq"
    if reinstall is not None and reinstall.unless is not None:
        _run(sandbox, checkout, commit, env, timeout)
        found = installed_in(sandbox)
        if found is not None and satisfied(reinstall.unless, *found):
            return
        command = reinstall.command
    elif reinstall is not None:  # certain: in the checkout's own exec
        command = f"{checkout} && ({reinstall.command})"
    else:
        _run(sandbox, checkout, commit, env, timeout)
        return
    if connect:
        sandbox.set_network(True)
    _run(sandbox, command, commit, env, timeout)


def _run(sandbox: Sandbox, command: str, commit: str, env: dict[str, str],
         timeout: float) -> None:
    result = sandbox.exec(command, env=env, timeout=timeout)
    if not result.ok:
        raise BenchsmithError(f"install failed at {commit[:12]}: {output_tail(result.output)}")
