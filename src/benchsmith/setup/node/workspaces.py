"""A monorepo whose root package has no test script of its own: its tests are those of its
workspaces, each run by its own `test` script with the project's manager, one after the other,
as `npm test --workspaces` runs them. The mocha runs among them report per test (the "script"
runner's hook); the rest are read from the console."""

from __future__ import annotations

import fnmatch
import json
import posixpath
import shlex
from collections.abc import Callable, Sequence
from typing import Any

from benchsmith.setup.node.runners import NodeTestRunner

__all__ = ["workspace_packages", "workspace_tests"]

_NPM_DEFAULT = "no test specified"


def _tests(package: dict[str, Any]) -> str | None:
    scripts = package.get("scripts")
    script = scripts.get("test") if isinstance(scripts, dict) else None
    return script if isinstance(script, str) and script.strip() and _NPM_DEFAULT not in script \
        else None


def workspace_packages(globs: Sequence[str], files: Sequence[str]) -> list[str]:
    """The directories of the workspaces `globs` name (package.json's `workspaces`, pnpm's or
    lerna's `packages`) among the tracked `files`, in the globs' order; `!` globs exclude."""
    directories = sorted(posixpath.dirname(path) for path in files
                         if posixpath.basename(path) == "package.json" and "/" in path
                         and "node_modules/" not in path)
    found: list[str] = []
    for glob in globs:
        pattern = glob.strip().removeprefix("./").rstrip("/")
        if not pattern or pattern.startswith("!"):
            continue
        for directory in directories:
            deep = "**" in pattern or directory.count("/") == pattern.count("/")
            if directory not in found and deep and fnmatch.fnmatchcase(directory, pattern):
                found.append(directory)
    excluded = [g.strip()[1:].removeprefix("./").rstrip("/") for g in globs if g.strip().startswith("!")]
    return [d for d in found if not any(fnmatch.fnmatchcase(d, e) for e in excluded)]


def workspace_tests(package: dict[str, Any], globs: Sequence[str], files: Sequence[str],
                    read: Callable[[str], str | None], manager: str) -> NodeTestRunner | None:
    """The workspaces' test scripts run one after the other with `manager` (npm, yarn, pnpm),
    when the root package.json has no test script and a workspace has one; None otherwise."""
    if _tests(package) is not None or not globs:
        return None
    tested: list[str] = []
    for directory in workspace_packages(globs, files):
        try:
            data = json.loads(read(f"{directory}/package.json") or "{}")
        except ValueError:
            continue
        if isinstance(data, dict) and _tests(data) is not None:
            tested.append(directory)
    if not tested:
        return None
    each = f"{manager} run test"
    loop = (f"rc=0; for d in {shlex.join(tested)}; do echo \"== $d: {each}\"; "
            f"(cd \"$d\" && {each}) || rc=1; done; exit $rc")
    spec = NodeTestRunner(runner="script", command=["sh", "-c", loop], report_format="script",
                          sources=["workspaces"])
    spec.notes.append(f"the root package.json has no test script: the test scripts of "
                      f"{len(tested)} workspace(s) run one after the other ({', '.join(tested[:5])}"
                      f"{', ...' if len(tested) > 5 else ''}), their mocha runs reported, else "
                      "their console read")
    return spec
