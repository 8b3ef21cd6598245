"""Apply patches robustly: git apply, then 3-way, then fuzzy patch, resetting between tries.

The work tree's state is checkpointed in git's index (`git add -A` + `git write-tree`), so a
failed try is undone exactly, including an earlier patch (the test patch under a code patch).
"""

from __future__ import annotations

import shlex

from pydantic import BaseModel, Field

from benchsmith.core import BenchsmithError, ExecResult, Sandbox

# Patch files are written next to the checkout, never inside it.
PATCH_DIR = "../benchsmith-patches"
METHODS = ("git apply", "git apply --3way", "patch --fuzz")
_CHECKPOINT = "git add -A && git write-tree"
_COMMANDS = {
    "git apply": "git apply --whitespace=nowarn {p}",
    "git apply --3way": "git apply --3way --whitespace=nowarn {p}",
    # --forward: never guess that a patch is reversed; dry run first so nothing is half-applied
    "patch --fuzz": ("patch --batch --forward --fuzz=3 -p1 --dry-run -i {p} >/dev/null && "
                     "patch --batch --forward --fuzz=3 -p1 --no-backup-if-mismatch -i {p}"),
}


class ApplyResult(BaseModel):
    """Whether a patch applied, how, and (for custom diffs) the unified diff that was applied."""

    applied: bool
    method: str | None = None  # one of METHODS, "already applied", or None
    error: str = ""
    tried: list[str] = Field(default_factory=list)
    custom_diff: bool = False  # the patch was converted from another format first
    unified_diff: str | None = None  # the conversion that was applied


class Worktree:
    """The checkout in a sandbox, with checkpoints to return to."""

    def __init__(self, sandbox: Sandbox, timeout: float = 300) -> None:
        self.sandbox = sandbox
        self.timeout = timeout
        self.current: str | None = None  # the last checkpoint, while nothing else changed files
        self.base = self.checkpoint()

    def _git(self, command: str) -> ExecResult:
        return self.sandbox.exec(command, timeout=self.timeout)

    def checkpoint(self, before: str = "") -> str:
        """Record the current files (tracked and new, not ignored); return the tree's ID.

        `before` is a shell command run first in the same call (one round trip fewer).
        """
        result = self._git(f"{before} && {_CHECKPOINT}" if before else _CHECKPOINT)
        tree = result.output.strip().splitlines()[-1] if result.ok and result.output.strip() else ""
        if not result.ok or len(tree) not in (40, 64):
            raise BenchsmithError(f"cannot checkpoint the work tree: {result.output.strip()[-200:]}")
        self.current = tree
        return tree

    def restore(self, tree: str) -> None:
        """Make the work tree exactly `tree` again (new files removed, ignored files kept)."""
        result = self._git(f"git read-tree --reset -u {tree} && git clean -fdq")
        if not result.ok:
            raise BenchsmithError(f"cannot reset the work tree: {result.output.strip()[-200:]}")
        self.current = tree

    def restore_paths(self, paths: list[str]) -> None:
        """Put `paths` back as they were at the base (deleting files the base did not have)."""
        if paths:
            self.checkpoint(" && ".join(
                f"{{ if git cat-file -e {self.base}:{shlex.quote(p)} 2>/dev/null; then "
                f"git checkout -q {self.base} -- {shlex.quote(p)}; else rm -f {shlex.quote(p)}; fi; }}"
                for p in paths))

    def reset(self) -> None:
        """Back to the state the work tree had when this object was made."""
        self.restore(self.base)

    def apply(self, name: str, patch: str) -> ApplyResult:
        """Apply the unified diff `patch` on top of the current state; on success the new state
        is checkpointed."""
        if not patch.strip():
            return ApplyResult(applied=False, error="the patch is empty")
        return self._apply_unified(name, patch if patch.endswith("\n") else patch + "\n")

    def read(self, path: str) -> str | None:
        """The text of a file in the checkout, or None when it does not exist."""
        try:
            return self.sandbox.read_file(path).decode("utf-8", errors="surrogateescape")
        except (FileNotFoundError, BenchsmithError, OSError):
            return None

    def _apply_unified(self, name: str, patch: str) -> ApplyResult:
        start = self.current or self.checkpoint()
        path = f"{PATCH_DIR}/{name}.patch"
        self.sandbox.write_file(path, patch.encode("utf-8", errors="surrogateescape"))
        quoted = shlex.quote(path)
        tried: list[str] = []
        errors: list[str] = []
        for method in METHODS:
            tried.append(method)
            result = self._git(f"{_COMMANDS[method].format(p=quoted)} && {_CHECKPOINT}")
            tree = result.output.strip().splitlines()[-1] if result.output.strip() else ""
            if result.ok and "conflict" not in result.output.lower() and len(tree) in (40, 64):
                self.current = tree
                return ApplyResult(applied=True, method=method, tried=tried)
            errors.append(_last_line(result.output))
            if method != "git apply":  # plain git apply changes nothing when it fails
                self.restore(start)
            elif self._git(f"git apply --reverse --check {quoted}").ok:
                return ApplyResult(applied=True, method="already applied", tried=tried)
        return ApplyResult(applied=False, tried=tried, error=f"does not apply: {errors[0]}")


def _last_line(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    for line in lines:  # git's first "error:" line says what is wrong
        if line.startswith("error:"):
            return line[:300]
    return (lines[-1] if lines else "no output")[:300]
