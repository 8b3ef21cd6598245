"""Mining dependency-conflict tasks from repository history (`setupbench mine-conflicts
--from-git`): commits that change a Python manifest and whose message speaks of a resolver
conflict. The task starts at the commit's parent (the conflicting state); the reference solution
is the commit's own manifest change; the success command asks pip whether the manifest now
resolves and the installed set is consistent. `verify_conflict` keeps a task only when the
conflict reproduces in a fresh container.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from benchsmith.core import BenchsmithError
from benchsmith.harness.checkout import git
from benchsmith.setupbench.tasks import SetupTask

MANIFESTS = re.compile(r"(^|/)(requirements[^/]*\.(txt|in)|constraints[^/]*\.txt)$")
# Words of commit messages that fix resolver errors (pip's "ResolutionImpossible", "conflicting
# dependencies", "cannot install ... because these package versions have conflicting ...").
CONFLICT_WORDS = re.compile(
    r"resolutionimpossible|conflicting dependenc|dependency conflict|version conflict|"
    r"resolver|incompatible (?:version|requirement|pin)|conflict(?:s|ing)? (?:with|between)|"
    r"fix(?:es|ed)? (?:the )?(?:dependenc|requirement|pin)", re.IGNORECASE)
RESOLVER_ERRORS = ("ResolutionImpossible", "conflicting dependencies",
                   "Cannot install", "No matching distribution found")
_STATEMENT = (
    "You are operating inside a fresh Ubuntu 22.04 environment with no tools or packages "
    "preinstalled, not even python3. Install everything globally, non-interactively, with no "
    "virtual environments.\n\nTask:\nThe repository in /testbed cannot be installed: "
    "`pip install -r {manifest}` fails with a dependency conflict. Change {manifest} so that it "
    "resolves, keeping every requirement it names, and install it system-wide with pip.\n")


def success_command(manifest: str) -> str:
    """The manifest resolves (pip's dry run) and what is installed is consistent (pip check)."""
    path = shlex.quote(manifest)
    return (f"cd /testbed && python3 -m pip install --dry-run --break-system-packages -q -r {path}"
            " >/dev/null 2>&1 && python3 -m pip check >/dev/null 2>&1 && echo \"Setup successful\""
            " || echo \"Setup failed\"")


def find_conflict_fixes(git_dir: str, repo_url: str, limit: int = 20) -> list[SetupTask]:
    """Tasks from the commits of `git_dir` that fix a conflict in one Python manifest."""
    log = git("log", "--no-merges", "--format=%x00%H%x01%P%x01%s%n%b", "--name-only",
              cwd=git_dir, timeout=600)
    found: list[SetupTask] = []
    for entry in log.split("\x00")[1:]:
        head, _, rest = entry.partition("\x01")
        parents, _, message_and_files = rest.partition("\x01")
        lines = message_and_files.strip().splitlines()
        files = [line for line in lines if MANIFESTS.search(line)]
        if len(parents.split()) != 1 or len(files) != 1 or not CONFLICT_WORDS.search(
                "\n".join(line for line in lines if line not in files)):
            continue
        manifest, parent = files[0], parents.split()[0]
        diff = git("diff", parent, head, "--", manifest, cwd=git_dir)
        solution = (f"set -e\napt-get update -qq\napt-get install -y -qq --no-install-recommends "
                    f"python3-pip git\ncd /testbed\ngit apply <<'BENCHSMITH_PATCH'\n{diff}"
                    f"BENCHSMITH_PATCH\npip install --break-system-packages -q -r "
                    f"{shlex.quote(manifest)}\n")
        slug = repo_url.rstrip("/").split("/")[-1]
        found.append(SetupTask.model_validate(dict(
            instance_id=f"{slug}-conflict-{parent[:7]}", task_type="dependency_resolution",
            ecosystem="pip-conflict", manifest=manifest, lockfiles_found=[], repo_url=repo_url,
            base_commit=parent, fix_commit=head, problem_statement=_STATEMENT.format(
                manifest=manifest), success_command=success_command(manifest), solution=solution)))
        if len(found) >= limit:
            break
    return found


def reproduces(sandbox: Any, task: SetupTask, timeout: float = 900) -> tuple[bool, str]:
    """Whether the conflict shows in `sandbox` (the task's testbed, nothing installed): pip's
    dry run of the manifest fails with a resolver error. Returns (reproduced, one line)."""
    manifest = shlex.quote(str(getattr(task, "manifest", "requirements.txt")))
    result = sandbox.exec(
        "apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-pip "
        f">/dev/null && python3 -m pip install --dry-run --break-system-packages -r {manifest}",
        cwd="/testbed", timeout=timeout, env={"DEBIAN_FRONTEND": "noninteractive"})
    if result.ok:
        return False, "the manifest resolves at base_commit: no conflict"
    hit = next((mark for mark in RESOLVER_ERRORS if mark in result.output), None)
    if hit is None:
        tail = result.output.strip().splitlines()[-1:] or ["no output"]
        return False, f"pip failed without a resolver error: {tail[0][-160:]}"
    return True, f"reproduced: {hit}"


def check_repo(git_dir: str) -> str:
    """The git directory of a local repository, or a one-line error."""
    try:
        return git("rev-parse", "--absolute-git-dir", cwd=git_dir).strip()
    except BenchsmithError:
        raise BenchsmithError(f"not a git repository: {git_dir}") from None


def verify_conflicts(tasks: list[SetupTask], sandbox_config: Any, mirrors: str | None,
                     progress: Any = None) -> list[tuple[SetupTask, bool, str]]:
    """Each task with whether its conflict reproduces in a fresh container (and why not)."""
    from benchsmith.sandbox import make_sandbox
    from benchsmith.setupbench.testbed import fill_testbed

    say = progress or (lambda message: None)
    checked = []
    for task in tasks:
        try:
            provided = sandbox_config.for_image(task.base_image, say)
            if provided is None:
                raise BenchsmithError("this sandbox backend cannot start task images")
            sandbox = make_sandbox(provided[0])
            try:
                fill_testbed(sandbox, task, mirrors, None)
                kept, why = reproduces(sandbox, task)
            finally:
                sandbox.close()
        except BenchsmithError as exc:
            kept, why = False, str(exc).splitlines()[0][:200]
        say(f"{task.instance_id}: {'kept' if kept else 'dropped'} ({why})")
        checked.append((task, kept, why))
    return checked
