"""Apply patches robustly: git apply, then 3-way, then fuzzy patch, resetting between tries.

The work tree's state is checkpointed in git's index (`git add -A` + `git write-tree`), so a
failed try is undone exactly, including an earlier patch (the test patch under a code patch).
"""

from __future__ import annotations

import shlex
import tempfile
import uuid
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, Field

from benchsmith.core import BenchsmithError, ExecResult, Sandbox
from benchsmith.harness.patches import (
    SECTIONED_SETTINGS,
    is_test_setting,
    patch_paths,
    pytest_settings,
    touched_files,
)

# Patch files are written next to the checkout, never inside it.
PATCH_DIR = "../benchsmith-patches"
METHODS = ("git apply", "git apply --3way", "patch --fuzz")
_CHECKPOINT = "git add -A && git write-tree"
# A checkpoint that also lists what differs from the tree {base}: after a marker line, git's
# NUL-separated status letters and paths, then the new tree on a line of its own.
_MARK = "benchsmith-changes-since-base"
_LISTING = ("tree=$(git add -A && git write-tree) && echo && echo " + _MARK
            + " && git diff-tree -r -z --no-renames --name-status {base} $tree"
            + " && printf '\\n%s\\n' $tree")
_COMMANDS = {
    "git apply": "git apply --whitespace=nowarn {p}",
    "git apply --3way": "git apply --3way --whitespace=nowarn {p}",
    # --forward: never guess that a patch is reversed; dry run first so nothing is half-applied
    "patch --fuzz": ("patch --batch --forward --fuzz=3 -p1 --dry-run -i {p} >/dev/null && "
                     "patch --batch --forward --fuzz=3 -p1 --no-backup-if-mismatch -i {p}"),
}


# Prints those of the module names (after the checkout's path) that import from outside it.
_FIND_ELSEWHERE = """import importlib.util, os, sys
root = os.path.realpath(sys.argv[1]) + os.sep
for name in sys.argv[2:]:
    try:
        spec = importlib.util.find_spec(name)
    except Exception:
        continue
    if spec is not None:
        places = list(spec.submodule_search_locations or []) or [spec.origin or ""]
        if any(not os.path.realpath(place).startswith(root) for place in places):
            print(name)
"""


def checkpoint_tree(sandbox: Sandbox) -> str | None:
    """The checkout's tree as :meth:`Worktree.checkpoint` records it (None: it cannot be)."""
    return _tree(sandbox.exec(_CHECKPOINT, timeout=300))


def _tree(result: ExecResult) -> str | None:
    tree = result.output.strip().splitlines()[-1] if result.ok and result.output.strip() else ""
    return tree if len(tree) in (40, 64) else None


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

    def __init__(self, sandbox: Sandbox, timeout: float = 300, base: str | None = None) -> None:
        """`base`: the checkout's tree as it is, when a checkpoint just recorded it
        (:func:`checkpoint_tree`), else one is taken now."""
        self.sandbox = sandbox
        self.timeout = timeout
        self.current: str | None = base  # the last checkpoint, while nothing else changed files
        self._staged: dict[str, tuple[str, str]] = {}  # name -> (patch, its path): stage()
        self._listed: tuple[str, dict[str, str]] | None = None  # a tree, its changes since base
        self.base = base or self.checkpoint()

    def _git(self, command: str) -> ExecResult:
        return self.sandbox.exec(command, timeout=self.timeout)

    def checkpoint(self, before: str = "") -> str:
        """Record the current files (tracked and new, not ignored); return the tree's ID.

        `before` is a shell command run first in the same call (one round trip fewer).
        """
        result = self._git(f"{before} && {_CHECKPOINT}" if before else _CHECKPOINT)
        tree = _tree(result)
        if tree is None:
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
            self.checkpoint(self._restoring(paths))

    def _restoring(self, paths: list[str]) -> str:
        """The shell command of :meth:`restore_paths` ("" for no paths)."""
        return " && ".join(
            f"{{ if git cat-file -e {self.base}:{shlex.quote(p)} 2>/dev/null; then "
            f"git checkout -q {self.base} -- {shlex.quote(p)}; else rm -f {shlex.quote(p)}; fi; }}"
            for p in paths)

    def reset(self) -> None:
        """Back to the state the work tree had when this object was made."""
        self.restore(self.base)

    def reset_test_settings(self, patch: str, gold: str) -> list[str]:
        """Put back every test file and test setting (:func:`~benchsmith.harness.patches.is_test_setting`)
        that `patch`, applied on the base, changed or added, and every module it added at the
        top of the checkout (or of ``src/``) that hides one the environment has (``pytest.py``,
        ``xml/``): the base's version, or none. A file stays when it is what the instance's own
        fix `gold` makes it. Returns the paths put back."""
        statuses = self._changed_paths()
        changed = list(dict.fromkeys([*statuses, *patch_paths(patch)]))
        gold_paths = set(touched_files(gold))
        reset = []
        for path in changed:
            whole = is_test_setting(path)
            if not whole and PurePosixPath(path).name not in SECTIONED_SETTINGS:
                continue
            current = self.read(path) if not whole or path in gold_paths else None
            if not whole and pytest_settings(path, current) == pytest_settings(
                    path, self._base_text(path)):
                continue  # its pytest section is the base's
            if path in gold_paths:
                fixed = self._text_after(gold, path)
                if (fixed == current if whole else
                        pytest_settings(path, fixed) == pytest_settings(path, current)):
                    continue
            reset.append(path)
        reset += [path for path in self._shadowing([p for p in changed if p not in reset], statuses)
                  if path not in gold_paths or self._text_after(gold, path) != self.read(path)]
        self.restore_paths(reset)
        return reset

    def _changed_paths(self) -> dict[str, str]:
        """Paths whose files differ between the base and the current checkpoint, with git's
        status letter for each (A added, D deleted, M modified, T type changed)."""
        current = self.current or self.checkpoint()
        if self._listed is not None and self._listed[0] == current:  # listed as it was made
            return self._listed[1]
        result = self._git(f"git diff-tree -r -z --no-renames --name-status {self.base} {current}")
        if not result.ok:
            raise BenchsmithError(f"cannot list the changed files: {result.output.strip()[-200:]}")
        return _statuses(result.output)

    def _base_text(self, path: str) -> str | None:
        result = self._git(f"git cat-file blob {self.base}:{shlex.quote(path)} 2>/dev/null")
        return result.output if result.ok else None

    def _text_after(self, patch: str, path: str) -> str | None:
        """The file `path` as `patch` applied to the base makes it (None: no such file, or the
        patch does not apply exactly), computed in an index of its own."""
        self.sandbox.write_file(f"{PATCH_DIR}/gold.patch",
                                patch.encode("utf-8", errors="surrogateescape"))
        index = f'GIT_INDEX_FILE="$PWD/{PATCH_DIR}/gold.index"'
        result = self._git(f"{index} git read-tree {self.base} && {index} git apply --cached "
                           f"{PATCH_DIR}/gold.patch && {index} git show :{shlex.quote(path)}; "
                           f"status=$?; rm -f {PATCH_DIR}/gold.index; exit $status")
        return result.output if result.ok else None

    def _shadowing(self, paths: list[str], statuses: dict[str, str]) -> list[str]:
        """Those of `paths` that make a new module at the top of the checkout or of ``src/``
        named like one the environment imports from elsewhere (the standard library, pytest,
        the project's own package). `statuses`: git's status of the changed paths (a top with
        a path the base had, modified or deleted, is not new)."""
        tops: dict[str, list[str]] = {}
        for path in paths:
            parts = PurePosixPath(path).parts
            top = "/".join(parts[:2 if parts[0] == "src" and len(parts) > 1 else 1])
            tops.setdefault(top, []).append(path)
        maybe_new = [top for top, under in tops.items() if _module_name(top).isidentifier()
                     and all(statuses.get(path, "A") == "A" for path in under)]
        names: dict[str, list[str]] = {}
        existing = self._in_base(maybe_new)
        for top in (top for top in maybe_new if top not in existing):
            names.setdefault(_module_name(top), []).append(top)
        if not names:
            return []
        # Run from the root directory: the checkout's own files are not what is looked for.
        found = self.sandbox.exec(f"python -c {shlex.quote(_FIND_ELSEWHERE)} "
                                  f"{shlex.quote(self.sandbox.workdir)} {' '.join(names)}",
                                  cwd="/", timeout=self.timeout)
        hidden = set(found.output.split()) & set(names) if found.ok else set()
        return [path for name in sorted(hidden) for top in names[name] for path in tops[top]]

    def _in_base(self, paths: list[str]) -> set[str]:
        """Those of `paths` (files or directories) that the base has (none where git cannot
        tell: each is then looked at as new)."""
        if not paths:
            return set()
        listed = self._git(f"git ls-tree -z --name-only {self.base} -- "
                           + " ".join(shlex.quote(path) for path in paths))
        return set(listed.output.split("\0")) & set(paths) if listed.ok else set()

    def stage(self, patches: dict[str, str]) -> None:
        """Copy patches that :meth:`apply` will be given (name -> text) into the sandbox in one
        go; each is then applied without being written again."""
        patches = {name: _terminated(patch) for name, patch in patches.items() if patch.strip()}
        if not patches:
            return
        with tempfile.TemporaryDirectory(prefix="benchsmith-patches-") as directory:
            for name, patch in patches.items():
                Path(directory, f"{name}.patch").write_bytes(
                    patch.encode("utf-8", errors="surrogateescape"))
            target = f"{PATCH_DIR}/staged-{uuid.uuid4().hex[:12]}"
            self.sandbox.upload(Path(directory), target)
        self._staged.update({name: (patch, f"{target}/{name}.patch")
                             for name, patch in patches.items()})

    def apply(self, name: str, patch: str, restoring: list[str] | None = None) -> ApplyResult:
        """Apply the unified diff `patch` on top of the current state; on success the new state
        is checkpointed. `restoring`: paths put back as they were at the base first
        (:meth:`restore_paths`), in the same command."""
        if not patch.strip():
            if restoring:
                self.restore_paths(restoring)
            return ApplyResult(applied=False, error="the patch is empty")
        return self._apply_unified(name, _terminated(patch), self._restoring(restoring or []))

    def read(self, path: str) -> str | None:
        """The text of a file in the checkout, or None when it does not exist."""
        try:
            return self.sandbox.read_file(path).decode("utf-8", errors="surrogateescape")
        except (FileNotFoundError, BenchsmithError, OSError):
            return None

    def _apply_unified(self, name: str, patch: str, before: str = "") -> ApplyResult:
        """`before`: a shell command run first, in the first try's command."""
        # the state a failed try goes back to (with `before`: known once it has run)
        start = None if before else self.current or self.checkpoint()
        staged, path = self._staged.pop(name, (None, f"{PATCH_DIR}/{name}.patch"))
        if staged != patch:
            path = f"{PATCH_DIR}/{name}.patch"
            self.sandbox.write_file(path, patch.encode("utf-8", errors="surrogateescape"))
        quoted = shlex.quote(path)
        tried: list[str] = []
        errors: list[str] = []
        for method in METHODS:
            tried.append(method)
            command = f"{_COMMANDS[method].format(p=quoted)} && {_LISTING.format(base=self.base)}"
            result = self._git(f"{before} && {command}" if start is None else command)
            said, marked, listing = result.output.rpartition(f"\n{_MARK}\n")
            changes, _, tree = listing.rstrip("\n").rpartition("\n")
            if (result.ok and marked and "conflict" not in said.lower()
                    and len(tree) in (40, 64)):
                self.current = tree
                self._listed = (tree, _statuses(changes))
                return ApplyResult(applied=True, method=method, tried=tried)
            errors.append(_last_line(said or result.output))
            if start is None:  # `before` ran (again: it puts files back) and nothing applied
                start = self.checkpoint(before)
            if method != "git apply":  # plain git apply changes nothing when it fails
                self.restore(start)
            elif self._git(f"git apply --reverse --check {quoted}").ok:
                return ApplyResult(applied=True, method="already applied", tried=tried)
        return ApplyResult(applied=False, tried=tried, error=f"does not apply: {errors[0]}")


def _statuses(listing: str) -> dict[str, str]:
    """Path -> status letter, from ``git diff-tree -z --name-status`` output."""
    fields = listing.split("\0")
    return {path: status[:1] for status, path in zip(fields[::2], fields[1::2], strict=False)
            if path.strip()}


def _terminated(patch: str) -> str:
    """`patch` ending in a newline, as git and patch want it."""
    return patch if patch.endswith("\n") else patch + "\n"


def _module_name(top: str) -> str:
    """The module name a top-level path (``pkg``, ``src/pkg``, ``mod.py``) gives."""
    return top.rsplit("/", 1)[-1].removesuffix(".py")


def _last_line(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    for line in lines:  # git's first "error:" line says what is wrong
        if line.startswith("error:"):
            return line[:300]
    return (lines[-1] if lines else "no output")[:300]
