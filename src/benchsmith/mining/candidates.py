"""Candidate repositories: PyPI projects → GitHub repository found → permissive licence.

The first rows of the mining funnel ("Automated Benchmark Generation for Repository-Level
Coding Tasks"): take the most downloaded PyPI projects (or a list of names / repositories),
find each one's GitHub repository in its PyPI metadata, drop duplicates and keep the ones
whose licence lets the code be redistributed in a benchmark.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

import httpx
from pydantic import BaseModel, Field

from benchsmith.core import BenchsmithError
from benchsmith.mining.licenses import (
    PERMISSIVE_LICENSES,
    UNKNOWN_LICENSE,
    is_permissive,
    license_of,
)

__all__ = ["candidates", "candidates_main", "github_repo", "is_permissive", "resolve_project",
           "top_pypi_projects"]

DEFAULT_INDEX = "https://pypi.org"
INDEX_ENV = "BENCHSMITH_PYPI_URL"
DEFAULT_TOP_URL = "https://hugovk.github.io/top-pypi-packages/top-pypi-packages-30-days.min.json"
TOP_URL_ENV = "BENCHSMITH_TOP_PYPI_URL"
STAGES = ("projects", "repo found", "unique repos", "permissive licence")

# Owner segments of github.com URLs that are GitHub pages, not users or organisations.
_NOT_OWNERS = {"sponsors", "orgs", "apps", "marketplace", "features", "topics", "collections",
               "settings", "login", "about", "pricing", "site", "users", "enterprise", "search"}
_GITHUB = re.compile(r"^(?:git\+)?(?:(?:https?|git|ssh)://)?(?:git@)?(?:www\.)?github\.com[/:]"
                     r"([A-Za-z0-9][A-Za-z0-9-]*)/([A-Za-z0-9_.-]+?)(?:\.git)?/*(?:[/#?@].*)?$",
                     re.IGNORECASE)
_OWNER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9_.-]+$")
_PROJECT_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")
_ATTEMPTS = 3
_BACKOFF_S = 0.5


class ProjectInfo(BaseModel):
    """What PyPI says about one project: its GitHub repository and its licence."""

    name: str
    repo: str | None = None  # "owner/name"
    license: str | None = None  # an SPDX id or expression when it can be told
    reason: str = ""  # where repo and licence came from, or why there is no repo
    infra_failure: bool = False  # the index failed to answer (not a property of the project)


class Candidate(BaseModel):
    """A repository kept for mining."""

    repo: str
    project: str | None  # the PyPI project it was found through, if any
    license: str
    note: str = ""


class Dropped(BaseModel):
    """A project or repository that did not pass `stage`."""

    project: str | None
    repo: str | None
    stage: Literal["repo found", "unique repos", "permissive licence"]
    reason: str
    infra_failure: bool = False


class CandidateReport(BaseModel):
    """Kept repositories, counts per funnel stage, dropped items, and how the run was made."""

    repos: list[Candidate] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=lambda: dict.fromkeys(STAGES, 0))
    dropped: list[Dropped] = Field(default_factory=list)
    infra_failures: int = 0
    index_url: str = DEFAULT_INDEX
    source: str | None = None  # the top-PyPI list or repos file the names came from
    permissive_licenses: list[str] = Field(default_factory=lambda: sorted(PERMISSIVE_LICENSES))
    created_at: str = ""
    duration_s: float = 0.0


def github_repo(url: str | None) -> str | None:
    """`Owner/Name` of a github.com repository URL (any .git, /tree/..., #... stripped), else None."""
    match = _GITHUB.match((url or "").strip())
    if not match or match.group(1).lower() in _NOT_OWNERS or match.group(2) in {".", ".."}:
        return None
    return f"{match.group(1)}/{match.group(2)}"


def _url_rank(key: str) -> int:
    key = re.sub(r"[^a-z]", "", key.lower())
    if key in {"source", "sourcecode", "repository", "code", "github", "git", "repo", "scm",
               "sourcerepository", "sourcegithub", "githubrepository", "vcs", "coderepository"}:
        return 0
    if key in {"homepage", "home", "website"}:
        return 1
    if key in {"documentation", "docs", "funding", "sponsor", "donate"}:
        return 3
    return 2  # issue trackers and changelogs usually live in the repository too


def _repo_of(info: Mapping[str, Any]) -> tuple[str | None, str]:
    """The GitHub repository named by a project's metadata and the field it came from."""
    project_urls = info.get("project_urls") or {}
    for key in sorted(project_urls, key=_url_rank):  # stable: PyPI's order within a rank
        if repo := github_repo(project_urls[key]):
            return repo, f"project_urls[{key!r}]"
    for field in ("home_page", "download_url"):
        if repo := github_repo(info.get(field)):
            return repo, field
    return None, "no GitHub repository in project metadata"


def _get(client: httpx.Client, url: str) -> httpx.Response:
    """GET, retrying transport errors, 429 and 5xx; an unreachable index is a BenchsmithError."""
    for attempt in range(_ATTEMPTS):
        last = attempt == _ATTEMPTS - 1
        try:
            response = client.get(url)
        except httpx.TransportError as exc:
            if last:
                raise BenchsmithError(f"package index unreachable: GET {url}: "
                                      f"{type(exc).__name__}: {exc}") from exc
        else:
            if last or (response.status_code != 429 and response.status_code < 500):
                return response
        time.sleep(_BACKOFF_S * 2**attempt)
    raise AssertionError("unreachable")


def resolve_project(client: httpx.Client, name: str, index_url: str = DEFAULT_INDEX) -> ProjectInfo:
    """Find a PyPI project's GitHub repository and licence from `{index_url}/pypi/{name}/json`."""
    response = _get(client, f"{index_url.rstrip('/')}/pypi/{name}/json")
    if response.status_code == 404:
        return ProjectInfo(name=name, reason="not on PyPI")
    try:
        response.raise_for_status()
        info = response.json()["info"]
    except (httpx.HTTPStatusError, ValueError, KeyError, TypeError) as exc:
        why = f"HTTP {response.status_code}" if response.is_error else f"bad JSON ({exc})"
        return ProjectInfo(name=name, reason=f"index answered {why}", infra_failure=True)
    repo, repo_from = _repo_of(info)
    license, license_from = license_of(info)
    if repo is None:
        return ProjectInfo(name=name, license=license, reason=repo_from)
    return ProjectInfo(name=name, repo=repo, license=license,
                       reason=f"repository from {repo_from}; licence from {license_from}")


def _resolve_entry(client: httpx.Client, entry: str, index_url: str) -> ProjectInfo:
    """Resolve a PyPI name, or look up the licence of an explicit `owner/name` repository.

    An explicit repository takes its licence from the PyPI project named like the repository
    only when that project links back to the same repository; otherwise the licence is unknown.
    """
    if "/" not in entry:
        return resolve_project(client, entry, index_url)
    info = resolve_project(client, entry.split("/")[1], index_url)
    if info.repo and info.repo.casefold() == entry.casefold() and info.license:
        return info.model_copy(update={"repo": entry})
    return ProjectInfo(name=info.name, repo=entry, license=UNKNOWN_LICENSE,
                       reason=f"listed explicitly; PyPI project {info.name!r} gives no licence "
                              f"for it ({info.reason})")


def _resolve_all(entries: Sequence[str], client: httpx.Client, index_url: str,
                 workers: int) -> Iterator[ProjectInfo]:
    """Resolve entries on a thread pool, yielding in input order; stop early on a BenchsmithError."""
    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    futures: list[Future[ProjectInfo]] = [pool.submit(_resolve_entry, client, e, index_url)
                                          for e in entries]
    try:
        for future in futures:
            yield future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def candidates(names: Sequence[str], client: httpx.Client, index_url: str = DEFAULT_INDEX,
               on_progress: Callable[[ProjectInfo], None] | None = None,
               workers: int = 8) -> CandidateReport:
    """Resolve PyPI names (or explicit `owner/name` repositories) and keep unique, permissive repos.

    Duplicates are matched case-insensitively and the first entry wins, so list the most
    important (most downloaded) first. An explicit repository whose licence cannot be told is
    kept with licence "unknown": the user chose it; one with a known non-permissive licence is not.
    """
    started = time.monotonic()
    report = CandidateReport(index_url=index_url,
                             created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    seen: dict[str, str] = {}  # folded repo → the entry that claimed it
    counts = report.counts
    for entry, info in zip(names, _resolve_all(names, client, index_url, workers), strict=True):
        if on_progress:
            on_progress(info)
        counts["projects"] += 1
        explicit = "/" in entry
        project = None if explicit and info.license == UNKNOWN_LICENSE else info.name
        if info.repo is None:
            report.infra_failures += info.infra_failure
            report.dropped.append(Dropped(project=info.name, repo=None, stage="repo found",
                                          reason=info.reason, infra_failure=info.infra_failure))
            continue
        counts["repo found"] += 1
        if (first := seen.get(info.repo.casefold())) is not None:
            report.dropped.append(Dropped(project=project, repo=info.repo, stage="unique repos",
                                          reason=f"same repository as {first!r}"))
            continue
        seen[info.repo.casefold()] = entry
        counts["unique repos"] += 1
        if explicit and info.license == UNKNOWN_LICENSE:
            note = "licence unknown; kept because the repository was listed explicitly"
        elif is_permissive(info.license):
            note = ""
        else:
            why = f"licence {info.license!r} is not permissive" if info.license else \
                "licence unknown" + (f" ({info.reason.split('; ')[-1]})" if info.reason else "")
            report.dropped.append(Dropped(project=project, repo=info.repo,
                                          stage="permissive licence", reason=why))
            continue
        counts["permissive licence"] += 1
        report.repos.append(Candidate(repo=info.repo, project=project,
                                      license=info.license or UNKNOWN_LICENSE, note=note))
    report.duration_s = round(time.monotonic() - started, 3)
    return report


def top_pypi_projects(n: int, source_url: str | None = None) -> list[str]:
    """Names of the `n` most downloaded PyPI projects, from a top-pypi-packages JSON file or URL."""
    source = source_url or os.environ.get(TOP_URL_ENV) or DEFAULT_TOP_URL
    if n <= 0:
        raise BenchsmithError(f"the number of top PyPI projects must be positive, not {n}")
    try:
        if source.startswith(("http://", "https://")):
            response = httpx.get(source, timeout=60, follow_redirects=True)
            response.raise_for_status()
            text = response.text
        else:
            text = Path(source.removeprefix("file://")).read_text(encoding="utf-8")
    except (httpx.HTTPError, OSError) as exc:
        raise BenchsmithError(f"cannot read the top-PyPI list {source}: {exc}") from exc
    try:
        rows = json.loads(text)["rows"]
        names = [str(row["project"]) for row in rows]
    except (ValueError, KeyError, TypeError) as exc:
        raise BenchsmithError(f"{source} is not a top-pypi-packages list "
                              '({"rows": [{"project": ..., "download_count": ...}]})') from exc
    return names[:n]


def read_repos_file(path: Path) -> list[str]:
    """PyPI project names and `owner/name` repositories (or GitHub URLs), one a line; # comments."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise BenchsmithError(f"cannot read {path}: {exc.strerror or exc}") from exc
    entries: list[str] = []
    for number, raw in enumerate(lines, 1):
        line = re.sub(r"(^|\s)#.*", "", raw).strip()  # a "#" inside a URL is not a comment
        if not line:
            continue
        entry = github_repo(line) or (line if _OWNER_NAME.match(line) or _PROJECT_NAME.match(line)
                                      else None)
        if entry is None:
            raise BenchsmithError(f"{path}:{number}: not a PyPI project name or owner/name: {line!r}")
        entries.append(entry)
    return entries


def candidates_main(from_pypi_top: int | None, repos_file: Path | None, out: Path,
                    index_url: str | None, top_url: str | None) -> CandidateReport:
    """`benchsmith candidates`: write `out` (owner/name per line) and `out`.report.json."""
    if (from_pypi_top is None) == (repos_file is None):
        raise BenchsmithError("give exactly one of --from-pypi-top N and --repos FILE")
    index = (index_url or os.environ.get(INDEX_ENV) or DEFAULT_INDEX).rstrip("/")
    if repos_file is not None:
        names, source = read_repos_file(repos_file), str(repos_file)
    else:
        assert from_pypi_top is not None
        source = top_url or os.environ.get(TOP_URL_ENV) or DEFAULT_TOP_URL
        names = top_pypi_projects(from_pypi_top, source)
    with httpx.Client(timeout=30, follow_redirects=True,
                      headers={"User-Agent": "benchsmith (candidate mining)"}) as client:
        report = candidates(names, client, index)
    report.source = source
    if names and report.infra_failures == len(names):
        first = next(d.reason for d in report.dropped if d.infra_failure)
        raise BenchsmithError(f"package index {index} answered no project ({first})")
    if out.is_dir():
        out = out / "repos.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(f"{c.repo}\n" for c in report.repos), encoding="utf-8")
    out.with_name(out.name + ".report.json").write_text(report.model_dump_json(indent=2) + "\n",
                                                         encoding="utf-8")
    return report
