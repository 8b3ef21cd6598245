"""The mining funnel: how many projects, repositories and PRs survive each stage.

Shaped like Tables 1 and 10 of the SWA/SWEE-Bench paper: projects → repository found →
permissive licence → has a valid PR → setup succeeds → valid PRs → setup succeeds → valid
instances. The first three rows come from `benchsmith candidates`, when its report is given.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from pydantic import BaseModel, Field

from benchsmith.mining.models import Outcome, PullRequest, instance_id

REPO_STAGES = ("projects", "repo found", "permissive licence", "has valid PR", "setup succeeds")
PR_STAGES = ("valid PRs", "setup succeeds", "valid instances")
# Where each PR ends: exactly one of these (a PR with no outcome yet was never tried).
# "hung": a FAIL_TO_PASS test hangs before the fix; "gold_unresolved": the instance's own gold
# patch does not resolve it when graded the way `evaluate` grades.
TERMINAL = ("not tried", "limit", "setup_failed", "error", "no_fail_to_pass", "hung", "low_quality",
            "gold_unresolved", "valid")
# the environment ran the PR's tests
_SET_UP = {"no_fail_to_pass", "hung", "low_quality", "gold_unresolved", "valid"}


class FunnelRow(BaseModel):
    """Counts for one repository (or the total)."""

    repo: str
    valid_prs: int = 0
    setup_ok: int = 0  # the environment ran the PR's tests (see _SET_UP)
    errors: int = 0  # failed for another reason: never counted as set up
    instances: int = 0
    reasons: dict[str, int] = Field(default_factory=dict)


class YearRow(BaseModel):
    """Base commits tried in one year (of the PR's merge, else its creation)."""

    tried: int = 0  # PRs whose base commit went through setup: set_up + setup_failed
    set_up: int = 0
    setup_failed: int = 0
    errors: int = 0  # ended before or beside setup (not counted in tried)

    @property
    def share(self) -> float | None:
        return self.set_up / self.tried if self.tried else None


class Funnel(BaseModel):
    """Repository-level and PR-level stage counts, plus per-repository rows."""

    repo_stages: dict[str, int | None]
    pr_stages: dict[str, int]
    terminal: dict[str, int] = Field(default_factory=dict)  # PRs per final stage; sums to valid PRs
    error_reasons: dict[str, int] = Field(default_factory=dict)
    flags: dict[str, int] = Field(default_factory=dict)  # instances (kept or dropped) per quality flag
    rows: list[FunnelRow]
    # per year of the PR: how many base commits set up (old commits decide a repository's yield)
    setup_by_year: dict[str, YearRow] = Field(default_factory=dict)


def build_funnel(prs: list[PullRequest], outcomes: list[Outcome],
                 candidates: dict[str, Any] | None = None, mined_repos: list[str] | None = None,
                 per_repo: int | None = None) -> Funnel:
    """Count each stage from the mined PRs, the build log and (optionally) the candidates report.

    A PR without an outcome is `limit` when its repository already has `per_repo` instances
    (the build stopped there on purpose), else `not tried`."""
    rows: dict[str, FunnelRow] = {}
    for repo in mined_repos or []:
        rows.setdefault(repo, FunnelRow(repo=repo))
    for pr in prs:
        rows.setdefault(pr.repo, FunnelRow(repo=pr.repo)).valid_prs += 1
    reasons: dict[str, Counter[str]] = defaultdict(Counter)
    terminal: Counter[str] = Counter()
    error_reasons: Counter[str] = Counter()
    flags: Counter[str] = Counter()
    years = {instance_id(pr.repo, pr.number): (pr.merged_at or pr.created_at or "")[:4] or "unknown"
             for pr in prs}
    by_year: dict[str, YearRow] = {}
    for outcome in outcomes:
        year = by_year.setdefault(years.get(outcome.instance_id, "unknown"), YearRow())
        if outcome.stage == "setup_failed" or outcome.stage in _SET_UP:
            year.tried += 1
            year.set_up += outcome.stage in _SET_UP
            year.setup_failed += outcome.stage == "setup_failed"
        elif outcome.stage == "error":
            year.errors += 1
        row = rows.setdefault(outcome.repo, FunnelRow(repo=outcome.repo))
        stage = outcome.stage
        terminal[stage] += 1
        flags.update(outcome.flags.keys())
        row.setup_ok += stage in _SET_UP
        row.instances += stage == "valid"
        if stage == "error":
            row.errors += 1
            error_reasons[outcome.reason.splitlines()[0][:120] if outcome.reason else "unknown"] += 1
        if stage != "valid":
            reasons[row.repo][stage] += 1
    for repo, counter in reasons.items():
        rows[repo].reasons = dict(counter)
    counts = (candidates or {}).get("counts", {})
    repo_stages: dict[str, int | None] = {
        "projects": counts.get("projects"),
        "repo found": counts.get("repo found"),
        "permissive licence": counts.get("permissive licence"),
        "has valid PR": sum(1 for r in rows.values() if r.valid_prs),
        "setup succeeds": sum(1 for r in rows.values() if r.setup_ok),
    }
    pr_stages = {
        "valid PRs": sum(r.valid_prs for r in rows.values()),
        "setup succeeds": sum(r.setup_ok for r in rows.values()),
        "valid instances": sum(r.instances for r in rows.values()),
    }
    tried = Counter(outcome.repo for outcome in outcomes)
    for row in rows.values():
        untried = max(0, row.valid_prs - tried[row.repo])
        stage = "limit" if per_repo is not None and row.instances >= per_repo else "not tried"
        terminal[stage] += untried
        if untried:
            reasons[row.repo][stage] += untried
            row.reasons = dict(reasons[row.repo])
    return Funnel(repo_stages=repo_stages, pr_stages=pr_stages,
                  terminal={stage: terminal.get(stage, 0) for stage in TERMINAL},
                  error_reasons=dict(error_reasons.most_common()), flags=dict(sorted(flags.items())),
                  rows=sorted(rows.values(), key=lambda r: (-r.instances, r.repo)),
                  setup_by_year=dict(sorted(by_year.items())))
