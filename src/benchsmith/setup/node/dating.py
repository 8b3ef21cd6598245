"""A Node repository's dependencies as of a date, by the best means available, in order:

1. ``lockfile``: the project's own lockfile at the commit, installed frozen by its manager;
2. ``before``: npm resolving as of the date (``npm install --before``), only when the
   registry's publish times of the direct dependencies can be trusted (a mirror that took old
   versions in late reports the day it took them: many versions on a few days, versions
   "published" after later ones);
3. ``history-lockfile``: the nearest earlier lockfile in the project's own git history, at most
   :data:`HISTORY_MAX_AGE_DAYS` older than the commit, copied in and adapted to the commit's
   package.json by a non-frozen install of the manager that wrote it;
4. ``not-dated``: the newest versions the declared ranges allow.
"""

from __future__ import annotations

import datetime as dt
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import nodesemver
from pydantic import BaseModel, Field

from benchsmith.core import BenchsmithError
from benchsmith.harness.npm_registry import packument
from benchsmith.setup.node.context import Lockfile, NodeContext, lockfile_of
from benchsmith.setup.node.managers import ManagerChoice

__all__ = ["HISTORY_MAX_AGE_DAYS", "LOCKFILE_NAMES", "DatingPlan", "TimeTrust", "apply_dating", "choose_dating",
           "dated_install_command", "manager_context",
           "times_trust"]

LOCKFILE_NAMES = ("npm-shrinkwrap.json", "package-lock.json", "yarn.lock", "pnpm-lock.yaml")
DatingMethod = Literal["lockfile", "before", "history-lockfile", "not-dated"]
# An earlier lockfile pins what its day resolved: a year covers a project's usual release
# cycle (the versions it names were still in use at the commit); an older one dates the
# dependencies years before the commit, to versions its package.json and Node have moved past.
HISTORY_MAX_AGE_DAYS = 365
CLUSTER_DAYS = 3
CLUSTER_SHARE = 0.75
INVERSION_SHARE = 0.25


class TimeTrust(BaseModel):
    """Whether a packument's publish times look like real publish dates, and why not."""

    package: str
    trustworthy: bool
    reasons: list[str] = Field(default_factory=list)


class DatingPlan(BaseModel):
    """How the dependencies are pinned to the date, recorded with the evidence."""

    method: DatingMethod
    dated: bool
    lockfile: str | None = None  # the lockfile used (repository-relative)
    history_commit: str | None = None  # the earlier commit it came from (history-lockfile)
    history_lock: Lockfile | None = None  # that lockfile's format: which manager wrote it
    before: str | None = None  # the --before date (before)
    untrusted: list[TimeTrust] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list)


def _parse_time(value: Any) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def _semver_key(version: str) -> tuple[int, ...]:
    parsed = nodesemver.parse(version, loose=True)
    return (parsed.major, parsed.minor, parsed.patch) if parsed else (0, 0, 0)


def times_trust(doc: dict[str, Any]) -> TimeTrust:
    """Judge the ``time`` field of a full packument: mirror-like when most versions share a
    few days, or when many versions were "published" after a higher version of their major."""
    name = str(doc.get("name", "?"))
    times = doc.get("time") or {}
    stamps = {v: t for v in doc.get("versions") or {}
              if "-" not in v and (t := _parse_time(times.get(v))) is not None}
    if not stamps:
        return TimeTrust(package=name, trustworthy=False, reasons=["no publish times"])
    reasons = []
    days = Counter(t.date() for t in stamps.values())
    clustered = sum(n for _, n in days.most_common(CLUSTER_DAYS))
    if len(stamps) > CLUSTER_DAYS and clustered >= CLUSTER_SHARE * len(stamps):
        reasons.append(f"{clustered} of {len(stamps)} versions dated on "
                       f"{min(CLUSTER_DAYS, len(days))} days")
    ordered = sorted(stamps, key=_semver_key)
    pairs = [(a, b) for a, b in zip(ordered, ordered[1:], strict=False)
             if _semver_key(a)[0] == _semver_key(b)[0]]
    inverted = [(a, b) for a, b in pairs if stamps[a] > stamps[b]]
    if pairs and len(inverted) >= INVERSION_SHARE * len(pairs) and len(inverted) > 1:
        a, b = inverted[0]
        reasons.append(f"{len(inverted)} of {len(pairs)} versions published after the next one "
                       f"({a} on {stamps[a].date()}, {b} on {stamps[b].date()})")
    return TimeTrust(package=name, trustworthy=not reasons, reasons=reasons)


def _git(repo: Path, *args: str) -> str:
    result = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    if result.returncode != 0:
        raise BenchsmithError(f"git {' '.join(args[:2])} failed: {result.stderr.strip()[-200:]}")
    return result.stdout


def _history_lockfile(repo: Path, commit: str, max_age_days: int = HISTORY_MAX_AGE_DAYS
                      ) -> tuple[str, Lockfile] | None:
    """The newest commit before `commit`, at most `max_age_days` older, that has a lockfile at
    the root, and that lockfile (its path, the manager that wrote it, its format)."""
    if not _git(repo, "rev-list", "--parents", "-n", "1", commit).split()[1:]:
        return None
    since = int(_git(repo, "log", "-1", "--format=%ct", commit).strip()) - max_age_days * 86400
    log = _git(repo, "log", "--format=%H", f"--since={since}", f"{commit}^", "--", *LOCKFILE_NAMES)
    for sha in log.split():
        present = set(_git(repo, "ls-tree", "--name-only", sha).split())
        for name in LOCKFILE_NAMES:
            if name in present:
                text = subprocess.run(["git", "show", f"{sha}:{name}"], cwd=repo,
                                      capture_output=True, text=True, errors="replace").stdout
                return sha, lockfile_of(name, text)
    return None


def choose_dating(repo: Path, ctx: NodeContext, date: dt.date | str, commit: str = "HEAD",
                  registry: str | None = None) -> DatingPlan:
    """Decide how the dependencies of the checkout at `repo` (at `commit`) are pinned to `date`."""
    day = date.isoformat() if isinstance(date, dt.date) else date[:10]
    if ctx.lockfiles:
        lock = ctx.lockfiles[0]
        return DatingPlan(method="lockfile", dated=True, lockfile=lock.path,
                          reasons=[f"the project's {lock.path} at the commit"])
    reasons: list[str] = []
    names = sorted({*ctx.dependencies, *ctx.dev_dependencies})
    untrusted = []
    for name in names:
        try:
            trust = times_trust(packument(name, full=True, registry=registry))
        except BenchsmithError as exc:
            trust = TimeTrust(package=name, trustworthy=False, reasons=[str(exc)])
        if not trust.trustworthy:
            untrusted.append(trust)
    if not untrusted:
        return DatingPlan(method="before", dated=True, before=day, reasons=[
            f"no lockfile; the registry's publish times of {len(names)} direct dependencies "
            f"look real: npm resolves as of {day}"])
    reasons.append("no lockfile; publish times not trustworthy for "
                   + ", ".join(t.package for t in untrusted[:5])
                   + (f" and {len(untrusted) - 5} more" if len(untrusted) > 5 else ""))
    found = _history_lockfile(repo, commit)
    if found:
        sha, lock = found
        return DatingPlan(method="history-lockfile", dated=True, lockfile=lock.path,
                          history_commit=sha, history_lock=lock, untrusted=untrusted, reasons=[
                              *reasons, f"{lock.path} from the earlier commit {sha[:12]}, adapted "
                              "to the commit's package.json"])
    return DatingPlan(method="not-dated", dated=False, untrusted=untrusted, reasons=[
        *reasons, f"no lockfile in the project's history of the {HISTORY_MAX_AGE_DAYS} days "
        "before the commit: newest versions the ranges allow"])


def manager_context(ctx: NodeContext, plan: DatingPlan) -> NodeContext:
    """The context the package manager is chosen from: with an earlier lockfile in the
    commit's place, the manager that wrote that lockfile."""
    if plan.method != "history-lockfile" or plan.history_lock is None or ctx.lockfiles:
        return ctx
    return ctx.model_copy(update={"lockfiles": [plan.history_lock]})


def apply_dating(repo: Path, plan: DatingPlan) -> None:
    """Put in place what `plan` needs: the earlier lockfile for ``history-lockfile``."""
    if plan.method == "history-lockfile" and plan.history_commit and plan.lockfile:
        content = subprocess.run(["git", "show", f"{plan.history_commit}:{plan.lockfile}"],
                                 cwd=repo, capture_output=True, check=True).stdout
        (repo / plan.lockfile).write_bytes(content)


def dated_install_command(plan: DatingPlan, manager: ManagerChoice) -> list[str]:
    """The install command that carries out `plan` with `manager`."""
    if plan.method == "lockfile":
        return manager.install_command
    if plan.method == "before":
        return ["npm", "install", f"--before={plan.before}"]
    if manager.name == "pnpm":
        return ["pnpm", "install", "--no-frozen-lockfile"]
    if manager.name == "yarn":
        return ["yarn", "install", "--no-immutable"] if manager.berry else ["yarn", "install"]
    return ["npm", "install"]
