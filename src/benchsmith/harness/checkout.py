"""Resolve a repository source and a revision or date, and check it out without touching the source."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
from datetime import date, datetime, timezone
from pathlib import Path

from pydantic import BaseModel

from benchsmith.core import BenchsmithError
from benchsmith.sandbox.tools import git_binary

_URL = re.compile(r"^(https?://|git@|ssh://|git://|file://)")


class Checkout(BaseModel):
    """A resolved source: where its git data is, which commit, and the pinning date."""

    source: str
    repo: str  # "owner/name" when it can be told, else the directory name
    git_dir: str | None  # None for a plain directory that is not a git repository
    commit: str
    commit_date: str  # ISO 8601
    exclude_newer: str  # RFC 3339 timestamp passed to uv --exclude-newer

    @property
    def pin_date(self) -> str:
        """The pinning date as YYYY-MM-DD."""
        return self.exclude_newer[:10]


def instant(stamp: str) -> datetime:
    """An ISO 8601 timestamp as git and GitHub write them ("Z" accepted), UTC when it names
    no zone."""
    moment = datetime.fromisoformat(stamp.strip().replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def git(*args: str, cwd: str | Path | None = None, timeout: float = 600) -> str:
    """Run git and return stdout; raise a one-line BenchsmithError on failure."""
    try:
        proc = subprocess.run(
            [git_binary(), *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true"},
        )
    except subprocess.TimeoutExpired as exc:
        raise BenchsmithError(f"git {args[0]} timed out after {timeout:.0f}s") from exc
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise BenchsmithError(f"git {args[0]} failed: {tail}")
    return proc.stdout


def repo_name_from(source: str) -> str:
    """Guess "owner/name" from a URL or path (mirror dirs named "owner+name/repo" too)."""
    text = source.rstrip("/")
    if _URL.match(text) or text.startswith("git@"):
        text = re.sub(r"\.git$", "", text)
        parts = re.split(r"[/:]", text)
        return "/".join(parts[-2:])
    path = Path(text).resolve()
    name = path.name
    if name in {"repo", ".git"} or name.endswith(".git"):
        name = path.parent.name if name in {"repo", ".git"} else name[: -len(".git")]
    return name.replace("+", "/", 1) if "+" in name else name


def cache_dir() -> Path:
    """Where benchsmith keeps bare clones of remote repositories."""
    root = os.environ.get("BENCHSMITH_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "benchsmith"
    )
    return Path(root)


def resolve_remote(url: str) -> str:
    """The bare clone of `url` in benchsmith's cache (cloned on first use)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "+", repo_name_from(url))
    digest = hashlib.sha1(url.encode()).hexdigest()[:8]
    target = cache_dir() / "repos" / f"{slug}-{digest}.git"
    if target.exists():
        return str(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        git("clone", "--bare", "--quiet", url, str(partial), timeout=1800)
    except BenchsmithError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise BenchsmithError(f"cannot clone {url}: {exc}") from None
    partial.rename(target)
    return str(target)


def _git_dir_of(path: Path) -> str | None:
    try:
        inside = git("rev-parse", "--git-dir", cwd=path).strip()
    except BenchsmithError:
        return None
    top = Path(inside) if Path(inside).is_absolute() else path / inside
    # Only accept a repository rooted at `path` itself, not a parent directory's.
    try:
        toplevel = git("rev-parse", "--show-toplevel", cwd=path).strip()
        if Path(toplevel).resolve() != path.resolve():
            return None
    except BenchsmithError:
        pass  # bare repository: no work tree
    return str(top.resolve())


def _parse_day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise BenchsmithError(f"invalid date {value!r}: expected YYYY-MM-DD") from None


def resolve(source: str, rev: str | None = None, on_date: str | None = None,
            repo: str | None = None) -> Checkout:
    """Find the git data for `source` and the commit for `rev` or the last one before `on_date`."""
    day = _parse_day(on_date) if on_date else None
    if _URL.match(source):
        git_dir: str | None = resolve_remote(source)
    else:
        path = Path(source).expanduser()
        if not path.exists():
            raise BenchsmithError(f"repository path does not exist: {source}")
        if not path.is_dir():
            if path.suffix == ".bundle":
                git_dir = resolve_remote(f"file://{path.resolve()}")
            else:
                raise BenchsmithError(f"not a directory or git bundle: {source}")
        else:
            git_dir = _git_dir_of(path)
    name = repo or repo_name_from(source)
    if git_dir is None:
        if rev:
            raise BenchsmithError(f"{source} is not a git repository, so --rev cannot be used")
        stamp = (day or datetime.now(timezone.utc).date()).isoformat()
        return Checkout(source=str(Path(source).resolve()), repo=name, git_dir=None,
                        commit="worktree", commit_date=stamp,
                        exclude_newer=f"{stamp}T00:00:00Z")
    if rev:
        try:
            commit = git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", cwd=git_dir).strip()
        except BenchsmithError:
            raise BenchsmithError(f"revision {rev!r} not found in {source}") from None
    elif day:
        commit = git("rev-list", "-1", "--first-parent", f"--before={day.isoformat()}T00:00:00Z",
                     "HEAD", cwd=git_dir).strip()
        if not commit:
            first = git("log", "--reverse", "--format=%cs", "HEAD", cwd=git_dir).split("\n", 1)[0]
            raise BenchsmithError(
                f"no commit on the default branch of {source} before {day} (first commit: {first})"
            )
    else:
        try:
            commit = git("rev-parse", "--verify", "HEAD^{commit}", cwd=git_dir).strip()
        except BenchsmithError:
            raise BenchsmithError(f"{source} has no commits") from None
    commit_date = git("show", "-s", "--format=%cI", commit, cwd=git_dir).strip()
    if day:
        exclude_newer = f"{day.isoformat()}T00:00:00Z"
    else:
        committed = datetime.fromisoformat(commit_date).astimezone(timezone.utc)
        exclude_newer = committed.strftime("%Y-%m-%dT%H:%M:%SZ")
    return Checkout(source=source, repo=name, git_dir=git_dir, commit=commit,
                    commit_date=commit_date, exclude_newer=exclude_newer)


def day_not_before_commit(source: str, rev: str, day: str, repo: str | None = None) -> str:
    """`day` (YYYY-MM-DD), but never before commit `rev`'s own day: a task dated before the
    commit it is set up at (a PR opened long before the commit it was merged onto) needs that
    commit's requirements, which the earlier day lacks."""
    return max(day[:10], resolve(source, rev=rev, repo=repo).pin_date)


def materialize(checkout: Checkout, dest: Path, portable: bool = False) -> Path:
    """Write the files of the checkout's commit into `dest` (a new directory) with git metadata.

    `portable` copies the git objects in (instead of borrowing them from the source), so the
    checkout still works when moved into a container or an image. A checkout whose history is
    cut afterwards (:func:`benchsmith.harness.history.seal_dir`) needs none: the cut packs the
    objects it keeps, borrowed ones included, and drops the borrowing.
    """
    if checkout.git_dir is None:
        shutil.copytree(checkout.source, dest, symlinks=True,
                        ignore=shutil.ignore_patterns(".venv", "__pycache__", "*.pyc"))
        return dest
    # --shared borrows objects through alternates: fast, and the source is never written.
    git("clone", "--quiet", "--shared", "--no-checkout", checkout.git_dir, str(dest))
    git("-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", checkout.commit,
        cwd=dest)
    if (dest / ".gitmodules").is_file():
        init_submodules(dest, local_source=not _URL.match(checkout.source),
                        until=checkout.exclude_newer)
    if portable:
        try:
            git("repack", "-a", "-d", "-q", cwd=dest, timeout=1800)
        except BenchsmithError:
            # A source with objects missing (a partial mirror lacking some large old blob):
            # pack the objects that are there; the checked-out commit is complete already.
            git("pack-objects", "--revs", "--all", "--missing=allow-any", "-q",
                ".git/objects/pack/pack", cwd=dest, timeout=1800)
        (dest / ".git" / "objects" / "info" / "alternates").unlink(missing_ok=True)
    return dest


def init_submodules(repo: Path, local_source: bool, until: str | None = None) -> list[str]:
    """Check out the repository's submodules (a C extension's sources, test data); return the
    paths that stayed empty (their host unreachable), which the setup context reports. With
    `until`, an empty one named like a package on the index is provided from there
    (:mod:`benchsmith.harness.submodule_sources`).

    Submodules on the local disk are allowed only when the source itself is local.
    """
    allow = ["-c", "protocol.file.allow=always"] if local_source else []
    if local_source:
        _point_submodules_at_mirrors(repo)
    with contextlib.suppress(BenchsmithError):  # unreachable ones are listed below
        git(*allow, "submodule", "update", "--init", "--recursive", "--quiet", cwd=repo, timeout=300)
    missing = missing_submodules(repo)
    if missing and until:
        from benchsmith.harness.submodule_sources import provide_from_pypi

        provide_from_pypi(repo, missing, until)
        missing = missing_submodules(repo)
    return missing


_HOSTED = re.compile(r"^(?:https?://|ssh://git@|git@|git://)[^/:]+[/:]([\w.-]+)/([\w.-]+?)(?:\.git)?/?$")


def origin(repo: str | Path) -> str:
    """Where the checkout `repo` was cloned from (a mirror's path, a URL); `repo` itself when
    it is no clone."""
    try:
        return git("config", "--get", "remote.origin.url", cwd=repo).strip()
    except BenchsmithError:
        return str(repo)


def local_mirror(near: str | Path, owner: str, name: str) -> Path | None:
    """The mirror of `owner/name` next to `near`, a mirror directory's ``DIR/owner+name/repo``
    (the layout `--mirrors` reads): ``DIR/owner2+name2/repo``, when there is one."""
    path = Path(near)
    if not path.is_absolute() or "+" not in path.parent.name:
        return None
    mirror = path.parent.parent / f"{owner}+{name}" / "repo"
    return mirror if mirror.is_dir() else None


def _point_submodules_at_mirrors(repo: Path) -> None:
    """A checkout from a mirror directory (`DIR/owner+name/repo`) takes each submodule hosted as
    `owner/name` from that directory's mirror of it when there is one, as the project itself is."""
    source = origin(repo)
    try:
        listed = git("config", "-f", ".gitmodules", "--get-regexp", r"^submodule\..*\.url$", cwd=repo)
    except BenchsmithError:
        return
    for line in listed.splitlines():
        key, _, url = line.partition(" ")
        hosted = _HOSTED.match(url.strip())
        mirror = local_mirror(source, hosted[1], hosted[2]) if hosted else None
        if mirror is not None:
            with contextlib.suppress(BenchsmithError):
                git("config", key, str(mirror), cwd=repo)  # .git/config wins over .gitmodules


def missing_files(repo: Path, limit: int = 20) -> list[str]:
    """Tracked files the checkout lacks: their contents are not in the source (a partial mirror
    without some large blobs). At most `limit` paths."""
    if not (repo / ".git").exists():
        return []
    try:
        listed = git("ls-files", "--deleted", "-z", cwd=repo)
    except BenchsmithError:
        return []
    return [p for p in listed.split("\0") if p][:limit]


def submodule_paths(repo: Path) -> list[str]:
    """The submodule paths `.gitmodules` declares."""
    if not (repo / ".gitmodules").is_file():
        return []
    try:
        listed = git("config", "-f", ".gitmodules", "--get-regexp", r"^submodule\..*\.path$",
                     cwd=repo)
    except BenchsmithError:
        return []
    return [line.split(" ", 1)[1].strip() for line in listed.splitlines() if " " in line]


def missing_submodules(repo: Path) -> list[str]:
    """Submodule paths of `.gitmodules` that have no files in the checkout."""
    return [p for p in submodule_paths(repo)
            if not (repo / p).is_dir() or not any((repo / p).iterdir())]


def resolve_source(source: str, mirrors: str | None) -> str:
    """Map `owner/name` to a local mirror (`DIR/owner+name/repo`, `DIR/owner/name[.git]`) or GitHub."""
    if os.path.exists(source) or "://" in source or source.startswith("git@"):
        return source
    if re.fullmatch(r"[\w.-]+/[\w.-]+", source):
        if mirrors:
            owner, name = source.split("/")
            for candidate in (Path(mirrors) / f"{owner}+{name}" / "repo",
                              Path(mirrors) / owner / name, Path(mirrors) / owner / f"{name}.git"):
                if candidate.exists():
                    return str(candidate)
        return f"https://github.com/{source}"
    return source
