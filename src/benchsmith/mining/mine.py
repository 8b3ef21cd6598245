"""`benchsmith mine`: valid pull requests of many repositories, resumable per repository."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from benchsmith.core import BenchsmithError
from benchsmith.harness.checkout import repo_name_from
from benchsmith.harness.jsonl import Resume, load_answers
from benchsmith.mining.models import PullRequest
from benchsmith.setup.batch import JsonlWriter, resolve_source

if TYPE_CHECKING:
    from benchsmith.mining.github_client import GitHubClient

Mode = Literal["github", "git"]


class RepoMined(BaseModel):
    """One line of the mining log: what one repository gave."""

    input: str  # the repos-file line, so a re-run can skip it
    repo: str
    mode: Mode
    examined: int = 0
    kept: int = 0
    skipped: dict[str, int] = Field(default_factory=dict)
    error: str | None = None


def read_repos(path: Path) -> list[str]:
    """Non-empty, non-comment lines of a repos file."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchsmithError(f"cannot read repos file {path}: {exc}") from None
    entries = [line.split("#", 1)[0].strip() for line in lines]
    for number, entry in enumerate(entries, start=1):
        words = entry.split()
        if len(words) > 2 or (len(words) == 2 and not re.fullmatch(r"[\w.-]+/[\w.-]+", words[1])):
            raise BenchsmithError(f"{path}:{number}: expected 'OWNER/NAME' or 'PATH [OWNER/NAME]'")
    return [e for e in entries if e]


def mine_repos(entries: list[str], mode: Mode, out: Path, max_prs: int | None,
               mirrors: str | None = None, issues_file: Path | None = None,
               progress: Callable[[str], None] | None = None,
               resume: Resume | None = None,
               warn: Callable[[str], None] | None = None) -> list[RepoMined]:
    """Append every valid PR of each repository to `out`; log each repository to `out`.repos.jsonl.
    A repository logged already is skipped; one that ended in an error is redone with
    `resume.retry_failed`."""
    say = progress or (lambda message: None)
    resume = resume or Resume()
    log = out.with_name(out.name + ".repos.jsonl")
    done, errors = load_answers(log, failed=lambda record: bool(record.get("error")))
    answered = {entry for entry in entries if entry in done}
    failures = len(answered & errors)
    resume.skipping(len(answered), failures)
    done -= errors if resume.retry_failed else set()
    written = _written(out)
    prs_out, log_out = JsonlWriter(out), JsonlWriter(log)
    client = _github_client(out) if mode == "github" else None
    if issues_file is not None:
        from benchsmith.mining.git_miner import load_issues

        issues = load_issues(issues_file, warn=warn or say)
    else:
        issues = {}
    results: list[RepoMined] = []
    for entry in entries:
        if entry in done:
            continue
        words = entry.split()
        source = words[0]
        repo = words[1] if len(words) > 1 else (
            source if re.fullmatch(r"[\w.-]+/[\w.-]+", source) else repo_name_from(source))
        record = RepoMined(input=entry, repo=repo, mode=mode)
        skipped: Counter[str] = Counter()

        def on_skip(number: int, reason: str, counter: Counter[str] = skipped) -> None:
            counter[reason] += 1

        say(f"mining {repo} ({mode})")
        try:
            if mode == "git":
                from benchsmith.mining.git_miner import mine_git

                prs = mine_git(resolve_source(source, mirrors), repo, max_prs, issues, on_skip)
            else:
                from benchsmith.mining.github_miner import mine_github

                assert client is not None
                prs = _from_mirror(mine_github(client, repo, max_prs, on_skip=on_skip),
                                   resolve_source(source, mirrors))
            for pr in prs:
                if (pr.repo, pr.number) not in written:  # a retried repository's earlier PRs
                    prs_out.write(pr)
                record.kept += 1
        except BenchsmithError as exc:
            record.error = str(exc)
        record.skipped = dict(skipped)
        record.examined = record.kept + sum(skipped.values())
        log_out.write(record)
        results.append(record)
        say(f"  {record.kept} valid PRs of {record.examined} examined"
            + (f" (error: {record.error})" if record.error else ""))
    return results


def _written(out: Path) -> set[tuple[str, int]]:
    """(repo, number) of the PRs `out` holds already."""
    if not out.exists():
        return set()
    found = set()
    for line in out.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
            found.add((str(record["repo"]), int(record["number"])))
        except (ValueError, KeyError, TypeError):
            continue
    return found


def _from_mirror(prs: Iterable[PullRequest], source: str) -> Iterator[PullRequest]:
    """PRs read from the API, built from the repository's mirror when `--mirrors` has one
    (a path every worker reaches) instead of a clone of their URL."""
    for pr in prs:
        yield pr if "://" in source else pr.model_copy(update={"source": source})


def _github_client(out: Path) -> GitHubClient:
    from benchsmith.mining.github_client import GitHubClient, tokens_from_env

    tokens = tokens_from_env()
    if not tokens:
        raise BenchsmithError("mining GitHub needs a token: set GITHUB_TOKEN (or GH_TOKEN, "
                              "GITHUB_TOKENS), or mine local clones with --from-git")
    return GitHubClient(tokens, cache_dir=out.parent / ".benchsmith-github-cache")


def read_log(out: Path) -> list[dict[str, object]]:
    """The per-repository mining log next to `out`."""
    log = out.with_name(out.name + ".repos.jsonl")
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
