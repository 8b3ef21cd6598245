"""History that ends at the base commit: every checkout handed out (an environment, an instance
image, an export) keeps only the commits a developer had at that commit, so nothing in it —
a ref, a tag, a reflog, a stash, a packed or loose object, an alternates file — reaches the fix.

One shell script cuts a checkout (``git`` only, so it runs the same on the host, in a local
sandbox and in any container); another audits one and prints every trace of a later commit.
:func:`seal` runs both in a sandbox, :func:`seal_dir` on a host directory, and :func:`sealed`
cuts a sandbox's checkout only while a snapshot is taken, then gives its history back.
"""

from __future__ import annotations

import contextlib
import shlex
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

from benchsmith.core import BenchsmithError, History, Sandbox
from benchsmith.sandbox.tools import git_binary

# Run in a checkout's top directory as `sh -c CUT - COMMIT`. Keeps HEAD (detached) at COMMIT
# and the tags it contains that were made by then (setuptools_scm, versioneer and pbr read
# them); deletes every other ref, remote, reflog and state file; repacks only what HEAD, the
# kept tags and the index reach, borrowed objects included, then drops everything else.
CUT = r"""set -eu
base=$(git rev-parse --verify -q "$1^{commit}") || { echo "commit $1 is not in the checkout"; exit 3; }
when=$(git show -s --format=%ct "$base")
g=$(git rev-parse --git-dir)
git update-ref --no-deref HEAD "$base"
keep=$(git for-each-ref --merged "$base" --format='%(creatordate:unix) %(refname)' refs/tags |
       awk -v t="$when" '$1 <= t { print $2 }')
for remote in $(git remote); do git remote remove "$remote" >/dev/null 2>&1 || true; done
git for-each-ref --format='%(refname)' | while read -r ref; do
  case " $(echo $keep) " in *" $ref "*) ;; *) printf 'delete %s\n' "$ref" ;; esac
done | git update-ref --stdin
for key in $(git config --name-only --get-regexp '^branch\.' 2>/dev/null | sed 's/\.[^.]*$//' | sort -u); do
  git config --remove-section "$key" 2>/dev/null || true
done
rm -rf "$g/logs" "$g/FETCH_HEAD" "$g/ORIG_HEAD" "$g/MERGE_HEAD" "$g/MERGE_MSG" "$g/AUTO_MERGE" \
  "$g/CHERRY_PICK_HEAD" "$g/REVERT_HEAD" "$g"/BISECT_* "$g/sequencer" "$g/rebase-merge" \
  "$g/rebase-apply" "$g/rr-cache" "$g/refs/original" "$g/info/grafts" "$g/gitk.cache" \
  "$g/objects/info/commit-graph" "$g/objects/info/commit-graphs" "$g/objects/info/packs" \
  "$g/objects/pack/multi-pack-index"
if [ -f "$g/shallow" ]; then
  for c in $(cat "$g/shallow"); do
    git merge-base --is-ancestor "$c" "$base" 2>/dev/null && echo "$c"
  done > "$g/shallow.kept" || true
  mv "$g/shallow.kept" "$g/shallow"; [ -s "$g/shallow" ] || rm -f "$g/shallow"
fi
old=$(ls "$g/objects/pack/" 2>/dev/null | sed -n 's/\.pack$//p')
new=$( { echo "$base"; for ref in $keep; do echo "$ref"; done; } |
  git -c pack.writeBitmaps=false pack-objects --revs --indexed-objects --missing=allow-any -q \
    "$g/objects/pack/pack")
for name in $old; do
  [ "$name" = "pack-$new" ] || rm -f "$g/objects/pack/$name".*
done
rm -f "$g"/objects/pack/*.keep "$g"/objects/pack/*.bitmap "$g"/objects/pack/*.promisor
find "$g/objects" -mindepth 1 -maxdepth 1 -type d -name '[0-9a-f][0-9a-f]' -exec rm -rf {} +
rm -f "$g/objects/info/alternates" "$g/objects/info/http-alternates"
"""

# Run like CUT. Prints one line per trace of history past COMMIT (nothing when there is
# none), then a last line "history COMMITS NEWEST-UNIX-TIME REF..." describing what is kept.
AUDIT = r"""set -u
base=$(git rev-parse --verify -q "$1^{commit}") || { echo "problem: commit $1 is not in the checkout"; exit 0; }
g=$(git rev-parse --git-dir)
for f in logs FETCH_HEAD ORIG_HEAD MERGE_HEAD CHERRY_PICK_HEAD REVERT_HEAD info/grafts \
         objects/info/alternates objects/info/http-alternates objects/info/commit-graph \
         objects/info/commit-graphs refs/original; do
  [ -e "$g/$f" ] && echo "problem: $f exists"
done
[ -n "$(git remote)" ] && echo "problem: remotes: $(git remote | tr '\n' ' ')"
[ "$(git rev-parse HEAD)" = "$base" ] || echo "problem: HEAD is not at the commit"
git for-each-ref --no-merged "$base" --format='problem: %(refname) reaches past the commit'
git for-each-ref --format='%(refname) %(objecttype) %(*objecttype)' |
  awk '{ t = ($3 == "") ? $2 : $3; if (t != "commit") print "problem: " $1 " points at a " t }'
if [ -f "$g/shallow" ]; then
  for c in $(cat "$g/shallow"); do
    git merge-base --is-ancestor "$c" "$base" 2>/dev/null || echo "problem: shallow graft $c"
  done
fi
later=$(git rev-list --all --not "$base" 2>/dev/null | head -n 3 | tr '\n' ' ')
[ -n "$later" ] && echo "problem: commits past the commit: $later"
tmp=${TMPDIR:-/tmp}/benchsmith-audit.$$
git rev-list --objects --all --indexed-objects --missing=allow-any 2>/dev/null | cut -d' ' -f1 | sort -u > "$tmp.reach"
git cat-file --batch-all-objects --batch-check='%(objectname) %(objecttype)' | sort -u > "$tmp.all"
cut -d' ' -f1 "$tmp.all" | comm -23 - "$tmp.reach" > "$tmp.stray"
if [ -s "$tmp.stray" ]; then
  echo "problem: $(wc -l < "$tmp.stray") object(s) no kept ref reaches, e.g. $(head -n 1 "$tmp.stray")"
fi
rm -f "$tmp.reach" "$tmp.all" "$tmp.stray"
echo "history $(git rev-list --all --count) $(git log --all --format=%ct | sort -n | tail -n 1) $(git for-each-ref --format='%(refname)' | tr '\n' ' ')"
"""

# Where :func:`sealed` keeps a checkout's full git directory while a snapshot is taken: a
# path the backend leaves out of snapshots (see `Sandbox.stash_dir`), else next to the checkout.
_FULL = "benchsmith-full-git"


Run = Callable[[str], tuple[int, str]]


def _script(script: str, commit: str) -> str:
    return f"sh -c {shlex.quote(script)} benchsmith {shlex.quote(commit)}"


def _cut_and_audit(run: Run, commit: str, what: str) -> History:
    """Cut the checkout `run` works in at `commit` (its submodules at theirs) and audit it."""
    code, output = run(_script(CUT, commit))
    if code != 0:
        tail = (output.strip().splitlines() or ["no output"])[-1]
        raise BenchsmithError(f"cannot cut the history of {what} at {commit[:12]}: {tail}")
    submodules = 0
    code, listed = run("git submodule status --recursive 2>/dev/null || true")
    paths = [line.split()[1] for line in listed.splitlines() if len(line.split()) >= 2
             and not line.startswith("-")]
    for path in paths:
        sub = f"cd {shlex.quote(path)} && "
        code, output = run(sub + _script(CUT, "HEAD"))
        if code != 0:
            raise BenchsmithError(f"cannot cut the history of submodule {path} of {what}: "
                                  f"{(output.strip().splitlines() or ['no output'])[-1]}")
        submodules += 1
    history = audit(run, commit, what)
    for path in paths:
        audit(_inside(run, path), "HEAD", f"submodule {path} of {what}")
    return history.model_copy(update={"submodules": submodules})


def _inside(run: Run, path: str) -> Run:
    """`run` in the subdirectory `path` of the checkout."""
    return lambda command: run(f"cd {shlex.quote(path)} && {command}")


def audit(run: Run, commit: str, what: str) -> History:
    """Check that nothing in the checkout reaches past `commit`; raise a BenchsmithError naming
    the first traces found, else describe what is kept."""
    from datetime import datetime, timezone

    code, output = run(_script(AUDIT, commit))
    lines = output.strip().splitlines()
    problems = [line.removeprefix("problem: ") for line in lines if line.startswith("problem: ")]
    summary = next((line.split() for line in reversed(lines) if line.startswith("history ")), None)
    if problems or summary is None or len(summary) < 3:
        found = "; ".join(problems[:3]) or (lines[-1] if lines else "no output")
        raise BenchsmithError(f"the history of {what} reaches past {commit[:12]}: {found}")
    base = next(iter(run(f"git rev-parse {shlex.quote(commit)}")[1].split()), commit)
    newest = datetime.fromtimestamp(int(summary[2]), tz=timezone.utc) if summary[2].isdigit() else None
    return History(base_commit=base, commits=int(summary[1]),
                   newest_commit_date=newest.strftime("%Y-%m-%dT%H:%M:%SZ") if newest else "",
                   refs=summary[3:])


def _sandbox_run(sandbox: Sandbox) -> Run:
    def run(command: str) -> tuple[int, str]:
        result = sandbox.exec(command, timeout=1800)
        return result.returncode, result.output
    return run


def _dir_run(path: Path) -> Run:
    def run(command: str) -> tuple[int, str]:
        proc = subprocess.run(["sh", "-c", command], cwd=path, capture_output=True, text=True,
                              env={"PATH": str(Path(git_binary()).parent) + ":/usr/bin:/bin",
                                   "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(path),
                                   "LC_ALL": "C"},
                              timeout=1800, stdin=subprocess.DEVNULL)
        return proc.returncode, proc.stdout + proc.stderr
    return run


def seal(sandbox: Sandbox, commit: str, what: str = "the checkout") -> History:
    """Cut the sandbox's checkout at `commit` for good and audit it (see the module doc)."""
    return _cut_and_audit(_sandbox_run(sandbox), commit, what)


def check(sandbox: Sandbox, commit: str, what: str = "the checkout") -> History:
    """The audit alone: raises when the sandbox's checkout reaches past `commit`."""
    return audit(_sandbox_run(sandbox), commit, what)


def seal_dir(path: Path, commit: str, what: str | None = None) -> History:
    """Cut the checkout in host directory `path` at `commit` and audit it."""
    if not (path / ".git").exists():
        raise BenchsmithError(f"{what or path} is not a git checkout: its history cannot be cut")
    return _cut_and_audit(_dir_run(path), commit, what or str(path))


@contextlib.contextmanager
def sealed(sandbox: Sandbox, commit: str, stash: str, what: str = "the checkout"
           ) -> Iterator[History]:
    """The sandbox's checkout cut at `commit` while the context lasts (a snapshot is taken in
    it); its full git directory waits in `stash` (a path no snapshot includes) and comes back
    afterwards, so the live sandbox can still move to other commits."""
    full = f"{stash.rstrip('/')}/{_FULL}"
    move = sandbox.exec(f"rm -rf {full} && mkdir -p {stash} && cp -a .git {full}", timeout=1800)
    if not move.ok:
        raise BenchsmithError(f"cannot set the history of {what} aside: {move.output.strip()[-200:]}")
    try:
        yield seal(sandbox, commit, what)
    finally:
        sandbox.exec(f"rm -rf .git && mv {full} .git", timeout=1800)
