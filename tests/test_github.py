"""GitHub client, closing keywords and the PR miner, against a real HTTP server on loopback."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchsmith.core import BenchsmithError
from benchsmith.mining.closing import resolved_issues
from benchsmith.mining.github_client import (
    DIFF,
    GitHubAuthError,
    GitHubClient,
    GitHubError,
    GitHubNotFound,
    GitHubRateLimited,
    tokens_from_env,
)
from benchsmith.mining.github_miner import mine_github
from benchsmith.testing.fake_github import FakeGitHub, FakeRepo

REPO = "acme/widgets"
RESET = 1_700_000_100
NOW = 1_700_000_000


def _diff(*paths: str) -> str:
    return "".join(
        f"diff --git a/{p} b/{p}\nindex 1111111..2222222 100644\n--- a/{p}\n+++ b/{p}\n"
        f"@@ -1 +1 @@\n-old {p}\n+new {p}\n"
        for p in paths
    )


CODE = "src/widgets/parse.py"
TEST = "tests/test_parse.py"


def _repo() -> FakeRepo:
    repo = FakeRepo(REPO)
    repo.add_issue(1, "Crash on empty input", "Calling parse('') raises IndexError.", comments=[
        ("2023-01-05T00:00:00Z", "I can reproduce this on 1.2."),
        ("2023-01-06T00:00:00Z", "The length check is missing in parse()."),
        ("2023-02-10T00:00:00Z", "Fixed by #10, thanks!"),
    ])
    repo.add_issue(2, "Typo in the docs")
    repo.add_issue(3, "Overflow on huge widths", "width=2**64 overflows")
    repo.add_issue(4, "Negative widths accepted", None)
    repo.add_issue(5, "Test is flaky")
    repo.add_pull(10, "Handle empty input", "Fixes #1", diff=_diff(CODE, TEST),
                  created_at="2023-02-01T00:00:00Z",
                  commits=[("2023-01-31T12:00:00Z", "Handle empty input"),
                           ("2023-02-02T00:00:00Z", "Review")])
    repo.add_pull(11, "Fix typo", "Closes #2", diff=_diff("docs/index.md"),
                  created_at="2023-02-03T00:00:00Z")
    repo.add_pull(12, "Refactor parser", "Cleanup, see #1", diff=_diff(CODE, TEST),
                  created_at="2023-02-04T00:00:00Z")
    repo.add_pull(13, "Follow-up", "Fixes #10", diff=_diff(CODE, TEST),
                  created_at="2023-02-05T00:00:00Z")
    repo.add_pull(14, "Try a fix", "Fixes #3", diff=_diff(CODE, TEST),
                  created_at="2023-02-06T00:00:00Z", merged=False)
    repo.add_pull(15, "Validate widths", "Resolves #4",
                  diff=_diff(CODE, "src/widgets/size.py", TEST),
                  created_at="2023-02-07T00:00:00Z",
                  commits=[("2023-02-07T00:00:00Z", "Guard overflow\n\nfixes #3")])
    repo.add_pull(16, "Deflake", "fixes #5", diff=_diff(TEST), created_at="2023-02-08T00:00:00Z")
    return repo


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(_repo(), max_per_page=3, rate_limit_reset=RESET) as gh:
        yield gh


def _client(gh: FakeGitHub, sleeps: list[float] | None = None,
            tokens: Any = (("GITHUB_TOKEN", "tok-1"),), **kwargs: Any) -> GitHubClient:
    """A client for the fake whose sleeps are recorded and whose clock stands at NOW."""
    sleep = (sleeps if sleeps is not None else []).append
    return GitHubClient(tokens, base_url=gh.url, sleep=sleep, clock=lambda: NOW, **kwargs)


# --- client -------------------------------------------------------------------------------


def test_paginate_follows_link_headers(github: FakeGitHub) -> None:
    with _client(github) as client:
        pulls = list(client.paginate(f"/repos/{REPO}/pulls", {"state": "closed", "per_page": 100}))
    assert [p["number"] for p in pulls] == [16, 15, 14, 13, 12, 11, 10]
    assert [r.query.get("page", "1") for r in github.requests] == ["1", "2", "3"]
    assert all(r.headers["authorization"] == "Bearer tok-1" for r in github.requests)
    assert all(r.query["state"] == "closed" for r in github.requests)


def test_anonymous_requests_send_no_authorization(github: FakeGitHub) -> None:
    with _client(github, tokens=()) as client:
        assert not client.has_token
        assert client.get_json(f"/repos/{REPO}/issues/1")["title"] == "Crash on empty input"
    assert "authorization" not in github.requests[0].headers


def test_etag_cache_serves_body_on_304_across_clients(github: FakeGitHub, tmp_path: Path) -> None:
    with _client(github, cache_dir=tmp_path) as client:
        first = client.get_json(f"/repos/{REPO}/issues/1")
        assert client.get_json(f"/repos/{REPO}/issues/1") == first
        list(client.paginate(f"/repos/{REPO}/pulls", {"state": "closed"}))
    with _client(github, cache_dir=tmp_path) as client:
        assert client.get_json(f"/repos/{REPO}/issues/1") == first
        pulls = list(client.paginate(f"/repos/{REPO}/pulls", {"state": "closed"}))
        assert [p["number"] for p in pulls] == [16, 15, 14, 13, 12, 11, 10]
    issue = [r for r in github.requests if r.path.endswith("/issues/1")]
    assert [r.status for r in issue] == [200, 304, 304]
    assert "if-none-match" not in issue[0].headers
    assert issue[1].headers["if-none-match"] == issue[2].headers["if-none-match"]
    # The second listing is answered from the cache page by page, Link headers included.
    listing = [r.status for r in github.requests if r.path.endswith("/pulls")]
    assert listing == [200, 200, 200, 304, 304, 304]


def test_primary_rate_limit_waits_until_reset(github: FakeGitHub) -> None:
    github.add_fault("primary_rate_limit", path="/issues/1")
    sleeps: list[float] = []
    with _client(github, sleeps) as client:
        assert client.get_json(f"/repos/{REPO}/issues/1")["number"] == 1
    assert sleeps == [RESET - NOW + 1]
    assert [r.status for r in github.requests] == [403, 200]


def test_secondary_rate_limit_waits_retry_after(github: FakeGitHub) -> None:
    github.add_fault("secondary_rate_limit", path="/issues/1")
    sleeps: list[float] = []
    with _client(github, sleeps) as client:
        client.get_json(f"/repos/{REPO}/issues/1")
    assert sleeps == [1.0]
    assert [r.status for r in github.requests] == [429, 200]


def test_rate_limit_that_never_ends_gives_up(github: FakeGitHub) -> None:
    github.add_fault("secondary_rate_limit", times=100)
    sleeps: list[float] = []
    with (_client(github, sleeps, max_rate_limit_waits=3) as client,
          pytest.raises(GitHubRateLimited)):
        client.get_json(f"/repos/{REPO}/issues/1")
    assert sleeps == [1.0, 1.0, 1.0, 1.0]


def test_server_error_is_retried_with_backoff(github: FakeGitHub) -> None:
    github.add_fault("bad_gateway", path="/pulls/10")
    sleeps: list[float] = []
    with _client(github, sleeps, backoff_s=0.5) as client:
        assert "src/widgets/parse.py" in client.get_text(f"/repos/{REPO}/pulls/10", DIFF)
    assert sleeps == [0.5]
    assert [r.status for r in github.requests] == [502, 200]
    assert github.requests[-1].headers["accept"] == DIFF


def test_persistent_server_error_fails_after_max_attempts(github: FakeGitHub) -> None:
    github.add_fault("bad_gateway", times=10)
    sleeps: list[float] = []
    with _client(github, sleeps, max_attempts=3, backoff_s=1) as client, \
            pytest.raises(GitHubError, match="502") as err:
        client.get_json(f"/repos/{REPO}/issues/1")
    assert sleeps == [1, 2]
    assert "\n" not in str(err.value)


def test_transport_errors_are_retried_then_reported(github: FakeGitHub) -> None:
    url = github.url
    github.close()  # nothing listens on the port any more
    sleeps: list[float] = []
    with GitHubClient(base_url=url, sleep=sleeps.append, max_attempts=3) as client, \
            pytest.raises(GitHubError, match="unreachable"):
        client.get_json("/repos/acme/widgets")
    assert len(sleeps) == 2


def test_rate_limited_token_is_rotated_without_waiting(github: FakeGitHub) -> None:
    github.add_fault("primary_rate_limit", token="tok-a")
    sleeps: list[float] = []
    tokens = tokens_from_env({"GITHUB_TOKENS": "tok-a,tok-b"})
    with _client(github, sleeps, tokens=tokens) as client:
        client.get_json(f"/repos/{REPO}/issues/1")
        client.get_json(f"/repos/{REPO}/issues/2")
        assert sleeps == []
        # Both exhausted: wait for the earliest reset, then carry on.
        github.add_fault("primary_rate_limit", token="tok-b")
        client.get_json(f"/repos/{REPO}/issues/3")
    auths = [r.headers["authorization"] for r in github.requests]
    assert auths == ["Bearer tok-a", "Bearer tok-b", "Bearer tok-b", "Bearer tok-b", "Bearer tok-a"]
    assert sleeps == [RESET - NOW + 1]


def test_not_found_is_one_line(github: FakeGitHub) -> None:
    with _client(github) as client, pytest.raises(GitHubNotFound) as err:
        client.get_json("/repos/acme/missing/issues/1")
    assert "\n" not in str(err.value) and "404" in str(err.value)
    assert isinstance(err.value, BenchsmithError)


def test_token_never_appears_in_logs_errors_or_reprs(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    secret = "ghp_SuperSecretToken1234567890"
    with FakeGitHub(_repo(), valid_tokens={secret}, rate_limit_reset=RESET) as gh:
        gh.add_fault("primary_rate_limit", token=secret)
        gh.add_fault("bad_gateway")
        caplog.set_level(logging.DEBUG)
        env = {"GITHUB_TOKEN": secret, "BENCHSMITH_GITHUB_API": gh.url}
        with GitHubClient.from_env(env, sleep=lambda s: None, clock=lambda: NOW,
                                   cache_dir=tmp_path) as client:
            assert client.base_url == gh.url
            client.get_json(f"/repos/{REPO}/issues/1")
            with pytest.raises(GitHubNotFound) as missing:
                client.get_json("/repos/acme/missing")
            shown = [repr(client), str(missing.value), repr(missing.value), repr(client.__dict__)]
        assert gh.requests[-1].headers["authorization"] == f"Bearer {secret}"
        wrong = {"GITHUB_TOKEN": "ghp_WrongToken000", "BENCHSMITH_GITHUB_API": gh.url}
        with GitHubClient.from_env(wrong) as bad, pytest.raises(GitHubAuthError) as denied:
            bad.get_json(f"/repos/{REPO}/issues/1")
    assert str(denied.value) == "GitHub rejected the token in GITHUB_TOKEN: bad credentials"
    assert any("rate limit" in r.getMessage() for r in caplog.records)
    assert any(r.name.startswith("httpx") for r in caplog.records)  # library logs captured too
    for text in [*shown, caplog.text, str(denied.value), repr(denied.value)]:
        assert secret not in text and "ghp_WrongToken000" not in text
    assert secret.encode() not in (tmp_path / "github-etags.sqlite").read_bytes()


def test_tokens_from_env_reads_all_variables_without_duplicates() -> None:
    env = {"GITHUB_TOKENS": "a, b,", "GITHUB_TOKEN": "c", "GH_TOKEN": "a"}
    assert tokens_from_env(env) == [("GITHUB_TOKENS[1]", "a"), ("GITHUB_TOKENS[2]", "b"),
                                    ("GITHUB_TOKEN", "c")]
    assert tokens_from_env({}) == []


def test_pagination_never_follows_links_to_another_host() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        link = '<https://evil.example/x?page=2>; rel="next"'
        return httpx.Response(200, json=[1], headers={"Link": link})

    client = GitHubClient([("GITHUB_TOKEN", "t")], base_url="https://api.github.com",
                          transport=httpx.MockTransport(handler))
    with client, pytest.raises(GitHubError, match="refusing"):
        list(client.paginate("/repos/a/b/pulls"))


# --- closing keywords -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Fixes #1", [1]),
        ("fix #2", [2]),
        ("FIXED #3.", [3]),
        ("This closes #4", [4]),
        ("close #5", [5]),
        ("Closed: #6", [6]),
        ("resolve #7", [7]),
        ("Resolves: #8", [8]),
        ("resolved #9", [9]),
        ("closes acme/widgets#10", [10]),
        ("Closes ACME/Widgets#11", [11]),
        ("fixes https://github.com/acme/widgets/issues/12", [12]),
        ("fixes https://github.com/Acme/Widgets/issues/13#issuecomment-99", [13]),
        ("fixes #1, #2 and #3", [1, 2, 3]),
        ("Fixes #1, #2, and #3", [1, 2, 3]),
        ("fixes #4 & #5", [4, 5]),
        ("Fixes #1.\n\nAlso closes #7", [1, 7]),
        ("fixes #3, fixes #3", [3]),
        ("fixes other/repo#8", []),
        ("fixes https://github.com/other/repo/issues/8", []),
        ("fixes other/repo#8, #9", [9]),
        ("fixes https://github.com/acme/widgets/pull/8", []),
        ("see #1", []),
        ("Related to #1; thanks", []),
        ("disclose #6", []),
        ("prefix #7", []),
        ("fixed-width #16", []),
        ("fixes #17abc", []),
        ("fixes gh-18", []),
        ("", []),
    ],
)
def test_resolved_issues(text: str, expected: list[int]) -> None:
    assert resolved_issues(text, REPO) == expected


# --- miner ----------------------------------------------------------------------------------


def test_mine_github_end_to_end(github: FakeGitHub) -> None:
    seen: list[int] = []
    skipped: dict[int, str] = {}
    with _client(github) as client:
        mined = list(mine_github(client, REPO, None, on_pr=seen.append,
                                 on_skip=lambda n, why: skipped.__setitem__(n, why)))
    assert seen == [16, 15, 14, 13, 12, 11, 10]
    assert [pr.number for pr in mined] == [15, 10]
    assert skipped == {16: "only test changes", 14: "not merged",
                       13: "references a PR, not an issue", 12: "no issue reference",
                       11: "no test change"}

    pr = mined[1]
    pulls = github.repo.pulls[10]
    assert pr.repo == REPO and pr.title == "Handle empty input" and pr.body == "Fixes #1"
    assert pr.base_commit == pulls["base"]["sha"]
    assert pr.merge_commit == pulls["merge_commit_sha"]
    assert pr.head_commit == pulls["head"]["sha"]
    assert pr.created_at == "2023-02-01T00:00:00Z"
    assert pr.issue_numbers == [1]
    assert pr.patch == _diff(CODE)
    assert pr.test_patch == _diff(TEST)
    assert pr.problem_statement == "Crash on empty input\nCalling parse('') raises IndexError.\n"
    # Only comments written before the PR's first commit (2023-01-31T12:00) are hints.
    assert pr.hints_text == "I can reproduce this on 1.2.\nThe length check is missing in parse()."
    assert pr.origin == "github" and pr.source == "https://github.com/acme/widgets.git"

    both = mined[0]  # "Resolves #4" in the body, "fixes #3" in a commit message
    assert both.issue_numbers == [4, 3]
    assert both.problem_statement == ("Negative widths accepted\n\n"
                                      "Overflow on huge widths\nwidth=2**64 overflows\n")
    assert both.patch == _diff(CODE, "src/widgets/size.py")

    diff_requests = [r for r in github.requests if r.path == f"/repos/{REPO}/pulls/10"]
    assert [r.headers["accept"] for r in diff_requests] == [DIFF]
    listing = [r for r in github.requests if r.path == f"/repos/{REPO}/pulls"]
    assert listing[0].query == {"state": "closed", "sort": "created", "direction": "desc",
                                "per_page": "100"}


def test_mine_github_max_prs_caps_valid_prs_and_stops_listing(github: FakeGitHub) -> None:
    seen: list[int] = []
    with _client(github) as client:
        mined = list(mine_github(client, REPO, 1, on_pr=seen.append))
    assert seen == [16, 15] and [pr.number for pr in mined] == [15]
    assert not any(r.query.get("page") == "2" for r in github.requests)


def test_mine_github_max_examined_bounds_the_listing(github: FakeGitHub) -> None:
    seen: list[int] = []
    with _client(github) as client:
        assert list(mine_github(client, REPO, None, on_pr=seen.append, max_examined=1)) == []
    assert seen == [16]


def test_mine_github_survives_rate_limits_and_server_errors(github: FakeGitHub) -> None:
    github.add_fault("primary_rate_limit", path="/commits")
    github.add_fault("secondary_rate_limit", path="/comments")
    github.add_fault("bad_gateway", path="/issues/1")
    sleeps: list[float] = []
    with _client(github, sleeps) as client:
        mined = list(mine_github(client, REPO, None))
    assert [pr.number for pr in mined] == [15, 10]
    assert sorted(sleeps) == [1.0, 1.0, RESET - NOW + 1]


def test_mine_github_requires_a_token_unless_allowed(github: FakeGitHub) -> None:
    with _client(github, tokens=()) as client:
        with pytest.raises(BenchsmithError, match="GITHUB_TOKEN"):
            next(mine_github(client, REPO, None))
        mined = mine_github(client, REPO, None, allow_anonymous=True)
        assert [pr.number for pr in mined] == [15, 10]


def test_mine_github_unknown_repository_is_one_line_error(github: FakeGitHub) -> None:
    with _client(github) as client, pytest.raises(GitHubNotFound, match="acme/nothing"):
        next(mine_github(client, "acme/nothing", None))
