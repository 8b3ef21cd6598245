"""`benchsmith refresh`: a dataset folder that grows by dated splits, never rewriting old ones.

Layout: ``DIR/dataset.json`` (the manifest: repositories, mining mode, and every split with its
cut-offs), ``DIR/repos.txt``, ``DIR/reference.sqlite`` (validated plans, reused by every run)
and one folder per split, ``DIR/2026-10/{prs,instances}.jsonl`` (+ the build's logs). A run
mines the PRs merged after the last split's cut-off (or `--since`) up to its own cut-off, builds
them, and adds the split to the manifest only when it is complete; an interrupted run leaves
``DIR/.pending/`` and the next run resumes it with the same cut-offs. Users pick the splits
whose ``since`` is after a model's knowledge cutoff.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from datetime import date, datetime, timezone
from pathlib import Path

from pydantic import BaseModel, Field

from benchsmith.core import BenchsmithError
from benchsmith.harness.jsonl import Resume
from benchsmith.mining.mine import Mode, mine_repos, read_repos
from benchsmith.mining.models import PullRequest

MANIFEST = "dataset.json"
PENDING = ".pending"


class Split(BaseModel):
    """One dated part of a dataset: PRs merged in (since, until]."""

    name: str
    since: str | None  # ISO timestamp, exclusive; None: the repositories' whole history
    until: str  # ISO timestamp, inclusive: the cut-off of this run
    prs: int = 0
    instances: int = 0
    finished_at: str = ""


class Manifest(BaseModel):
    """``dataset.json``: what the dataset is mined from and its splits, oldest first."""

    format: str = "benchsmith-dataset/1"
    mode: Mode = "git"
    mirrors: str | None = None
    splits: list[Split] = Field(default_factory=list)


def load_manifest(directory: Path) -> Manifest:
    """The manifest of a dataset folder; a one-line error when it is not one."""
    path = directory / MANIFEST
    if not path.is_file():
        raise BenchsmithError(f"{directory} is not a benchsmith dataset (no {MANIFEST}); "
                              "create one with --repos FILE")
    try:
        return Manifest.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BenchsmithError(f"cannot read {path}: {str(exc).splitlines()[0]}") from None


def create(directory: Path, repos: Path, mode: Mode, mirrors: str | None) -> Manifest:
    """Start a dataset folder from a repos file (the `mine` format)."""
    if (directory / MANIFEST).exists():
        raise BenchsmithError(f"{directory} is already a dataset; leave out --repos")
    read_repos(repos)  # fails on a malformed file before anything is written
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(repos, directory / "repos.txt")
    manifest = Manifest(mode=mode, mirrors=mirrors)
    _write(directory / MANIFEST, manifest.model_dump_json(indent=2))
    return manifest


def parse_since(value: str, manifest: Manifest) -> str | None:
    """`last` (the last split's cut-off; none yet: everything) or a YYYY-MM-DD day."""
    if value == "last":
        return manifest.splits[-1].until if manifest.splits else None
    try:
        return datetime.combine(date.fromisoformat(value), datetime.min.time(),
                                timezone.utc).isoformat()
    except ValueError:
        raise BenchsmithError(f"invalid --since {value!r}: expected 'last' or YYYY-MM-DD") from None


def refresh(directory: Path, since: str | None, until: datetime, max_prs: int | None,
            build: Callable[[list[PullRequest], Path], None], mirrors: str | None = None,
            progress: Callable[[str], None] | None = None) -> Split:
    """Mine, build and add one split; `build(prs, instances_path)` builds the PRs (`mirrors`:
    where repositories are this time, instead of the manifest's)."""
    say = progress or (lambda message: None)
    manifest = load_manifest(directory)
    pending = directory / PENDING
    meta = pending / "split.json"
    if meta.is_file():  # an interrupted run: resume it with its own cut-offs
        split = Split.model_validate_json(meta.read_text(encoding="utf-8"))
        say(f"resuming split {split.name} ({split.since or 'start'} .. {split.until})")
    else:
        split = Split(name=_name(directory, until), since=since, until=until.isoformat())
        pending.mkdir(parents=True, exist_ok=True)
        _write(meta, split.model_dump_json(indent=2))
    mined = pending / "mined.jsonl"
    # A repository whose mining failed is always mined again: the split's cut-off is used once.
    results = mine_repos(read_repos(directory / "repos.txt"), manifest.mode, mined, max_prs,
                         mirrors=mirrors or manifest.mirrors, progress=say,
                         resume=Resume(retry_failed=True))
    if results and all(result.error for result in results):  # the cut-off stays unused
        raise BenchsmithError(f"no repository could be mined ({results[0].repo}: "
                              f"{results[0].error}); re-run to retry")
    earlier = _earlier_ids(directory, manifest)
    prs = [pr for pr in _read_prs(mined) if _in_window(pr, split) and _iid(pr) not in earlier]
    prs_path = pending / "prs.jsonl"
    prs_path.write_text("".join(pr.model_dump_json() + "\n" for pr in prs), encoding="utf-8")
    say(f"split {split.name}: {len(prs)} PRs merged in ({split.since or 'start'}, {split.until}]")
    instances = pending / "instances.jsonl"
    build(prs, instances)
    split.prs = len(prs)
    split.instances = sum(1 for line in instances.read_text(encoding="utf-8").splitlines()
                          if line.strip()) if instances.exists() else 0
    split.finished_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    meta.unlink()
    os.replace(pending, directory / split.name)
    manifest.splits.append(split)
    _write(directory / MANIFEST, manifest.model_dump_json(indent=2))
    return split


def _name(directory: Path, until: datetime) -> str:
    """``YYYY-MM``; a second split of a month is named by its day, then numbered."""
    for name in (until.strftime("%Y-%m"), until.strftime("%Y-%m-%d")):
        if not (directory / name).exists():
            return name
    number = 2
    while (directory / f"{until:%Y-%m-%d}-{number}").exists():
        number += 1
    return f"{until:%Y-%m-%d}-{number}"


def _instant(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _in_window(pr: PullRequest, split: Split) -> bool:
    merged = _instant(pr.merged_at or pr.created_at)
    return (split.since is None or merged > _instant(split.since)) and merged <= _instant(split.until)


def _iid(pr: PullRequest) -> str:
    return f"{pr.repo.replace('/', '__')}-{pr.number}"


def _earlier_ids(directory: Path, manifest: Manifest) -> set[str]:
    """PRs of earlier splits: never mined into a new one, whatever the dates say."""
    ids: set[str] = set()
    for split in manifest.splits:
        path = directory / split.name / "prs.jsonl"
        if path.exists():
            ids |= {_iid(pr) for pr in _read_prs(path)}
    return ids


def _read_prs(path: Path) -> list[PullRequest]:
    if not path.exists():
        return []
    return [PullRequest.model_validate_json(line)
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, text: str) -> None:
    """Write atomically: a kill leaves the old file or the new one, never half of one."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text + "\n", encoding="utf-8")
    os.replace(tmp, path)


def manifest_json(directory: Path) -> str:
    """The manifest as JSON text (for `--json`)."""
    return json.dumps(load_manifest(directory).model_dump(mode="json"), indent=2)
