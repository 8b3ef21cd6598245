"""Records that flow through mining: candidate repositories and valid pull requests."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from benchsmith.instance import FlakyTest, Language


def instance_id(repo: str, number: int) -> str:
    """``owner__name-N`` as in SWE-bench."""
    return f"{repo.replace('/', '__')}-{number}"


class PullRequest(BaseModel):
    """A merged pull request that resolves an issue, split into code and test patches."""

    repo: str  # "owner/name"
    number: int
    title: str = ""
    body: str = ""
    base_commit: str  # the commit the patches apply to (first parent of the merge)
    merge_commit: str | None = None
    head_commit: str | None = None
    created_at: str  # ISO 8601 creation time of the PR (or of the commit in git mode)
    merged_at: str | None = None
    issue_numbers: list[int] = Field(default_factory=list)
    issue_link: str = ""  # which text linked the issues, and by which rule
    problem_statement: str = ""
    problem_source: Literal["issue", "pr", "commit"] = "issue"
    hints_text: str = ""
    patch: str  # changes to non-test files
    test_patch: str  # changes to test files
    origin: Literal["github", "git"] = "github"
    source: str | None = None  # local clone or URL the commits can be fetched from
    language: Language = "python"  # whose file rules split the diff (harness/languages.py)


class Outcome(BaseModel):
    """What happened to one pull request (one line of the build log)."""

    instance_id: str
    repo: str
    stage: str  # one of mining.funnel.TERMINAL (but "not tried")
    reason: str = ""
    flags: dict[str, str] = Field(default_factory=dict)  # quality flags (mining/quality.py)
    hung: list[str] = Field(default_factory=list)  # tests stopped for making no progress
    flaky: list[FlakyTest] = Field(default_factory=list)  # left out of the labels, with counts
    setup_reused: bool = False
