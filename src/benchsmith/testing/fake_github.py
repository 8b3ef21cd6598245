"""A fake GitHub REST API on 127.0.0.1 serving self-written responses, with scripted faults.

Used by the tests (and usable offline through ``BENCHSMITH_GITHUB_API``): it serves the
pull requests, diffs, commits, issues and comments of one in-memory repository, paginates
with ``Link`` headers, answers ``If-None-Match`` with 304 and logs every request.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal
from urllib.parse import parse_qs, urlencode, urlsplit

from benchsmith.testing.loopback import LoopbackServer

FaultKind = Literal["primary_rate_limit", "secondary_rate_limit", "bad_gateway"]


def _sha(*parts: object) -> str:
    return hashlib.sha1(" ".join(map(str, parts)).encode()).hexdigest()


@dataclass
class FakeRepo:
    """The contents of one repository as the GitHub API would describe it."""

    full_name: str = "acme/widgets"
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    diffs: dict[int, str] = field(default_factory=dict)
    commits: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    issues: dict[int, dict[str, Any]] = field(default_factory=dict)
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)

    def add_issue(self, number: int, title: str, body: str | None = "",
                  comments: Iterable[tuple[str, str]] = (),
                  created_at: str = "2023-01-01T00:00:00Z") -> None:
        """An issue and its comments, given as (created_at, body) pairs."""
        self.issues[number] = {
            "number": number, "title": title, "body": body, "state": "closed",
            "created_at": created_at, "user": {"login": "reporter"},
            "html_url": f"https://github.com/{self.full_name}/issues/{number}",
        }
        self.comments[number] = [
            {"id": number * 1000 + i, "body": text, "created_at": when, "user": {"login": "dev"}}
            for i, (when, text) in enumerate(comments)
        ]

    def add_pull(self, number: int, title: str, body: str | None = "", *, diff: str,
                 created_at: str, merged: bool = True,
                 commits: Iterable[tuple[str, str]] = (("2023-02-01T00:00:00Z", "change"),),
                 merged_at: str = "2023-03-01T00:00:00Z", shas: dict[str, str] | None = None,
                 ) -> None:
        """A closed pull request (merged unless told otherwise); commits are (date, message);
        `shas` gives real ``base``/``head``/``merge`` commits of a repository built elsewhere."""
        sha = {kind: _sha(kind, number) for kind in ("base", "head", "merge")} | (shas or {})
        base = {"sha": sha["base"], "ref": "main",
                "repo": {"full_name": self.full_name,
                         "clone_url": f"https://github.com/{self.full_name}.git"}}
        self.pulls[number] = {
            "number": number, "title": title, "body": body, "state": "closed",
            "created_at": created_at, "merged_at": merged_at if merged else None,
            "merge_commit_sha": sha["merge"], "user": {"login": "dev"},
            "base": base, "head": {"sha": sha["head"], "ref": f"fix-{number}"},
            "html_url": f"https://github.com/{self.full_name}/pull/{number}",
        }
        self.diffs[number] = diff
        self.commits[number] = [
            {"sha": _sha("commit", number, i),
             "commit": {"message": message,
                        "author": {"name": "Dev", "email": "dev@example.com", "date": when},
                        "committer": {"name": "Dev", "email": "dev@example.com", "date": when}}}
            for i, (when, message) in enumerate(commits)
        ]
        # Every pull request is also an issue, marked by a `pull_request` key.
        self.issues[number] = {
            "number": number, "title": title, "body": body, "state": "closed",
            "created_at": created_at, "user": {"login": "dev"},
            "pull_request": {"url": f"/repos/{self.full_name}/pulls/{number}"},
        }
        self.comments.setdefault(number, [])


@dataclass
class Fault:
    """A scripted failure for requests whose path contains `path` (and that use `token`)."""

    kind: FaultKind
    path: str = ""
    token: str | None = None
    times: int = 1


@dataclass(frozen=True)
class LoggedRequest:
    """One request the fake received; header names are lower-case."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    status: int


class FakeGitHub(LoopbackServer):
    """The server: ``with FakeGitHub(repo) as gh: GitHubClient(base_url=gh.url)``."""

    def __init__(self, repo: FakeRepo, *, max_per_page: int = 100,
                 valid_tokens: set[str] | None = None,
                 rate_limit_reset: int = 2_000_000_000) -> None:
        self.repo = repo
        self.max_per_page = max_per_page
        self.valid_tokens = valid_tokens  # None: accept any token and anonymous requests
        self.rate_limit_reset = rate_limit_reset
        self.faults: list[Fault] = []
        self.requests: list[LoggedRequest] = []
        self._lock = threading.Lock()
        self._serve(_handler_for(self))

    def add_fault(self, kind: FaultKind, path: str = "", token: str | None = None,
                  times: int = 1) -> None:
        """Fail the next `times` matching requests with `kind`."""
        self.faults.append(Fault(kind, path, token, times))

    def _take_fault(self, path: str, token: str | None) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.times > 0 and fault.path in path and fault.token in (None, token):
                    fault.times -= 1
                    return fault
        return None

    def respond(self, path: str, query: dict[str, str], headers: dict[str, str]
                ) -> tuple[int, dict[str, str], bytes]:
        """(status, headers, body) for one GET request."""
        auth = headers.get("authorization", "")
        token = auth.split(" ", 1)[1] if " " in auth else None
        if self.valid_tokens is not None and token not in self.valid_tokens:
            return _json(401, {"message": "Bad credentials"})
        fault = self._take_fault(path, token)
        if fault and fault.kind == "primary_rate_limit":
            status, extra, body = _json(403, {"message": "API rate limit exceeded"})
            return status, {**extra, "X-RateLimit-Remaining": "0",
                            "X-RateLimit-Reset": str(self.rate_limit_reset)}, body
        if fault and fault.kind == "secondary_rate_limit":
            message = "You have exceeded a secondary rate limit"
            status, extra, body = _json(429, {"message": message})
            return status, {**extra, "Retry-After": "1"}, body
        if fault:
            return 502, {"Content-Type": "text/plain"}, b"Bad Gateway"
        status, extra, body = self._route(path, query, headers.get("accept", ""))
        if status != 200:
            return status, extra, body
        etag = f'"{_sha(body)}"'
        if headers.get("if-none-match") == etag:
            return 304, {"ETag": etag}, b""
        return status, {**extra, "ETag": etag, "X-RateLimit-Remaining": "4999"}, body

    def _route(self, path: str, query: dict[str, str], accept: str
               ) -> tuple[int, dict[str, str], bytes]:
        prefix = f"/repos/{self.repo.full_name}"
        match = re.fullmatch(rf"{re.escape(prefix)}/(pulls|issues)(?:/(\d+))?(?:/(\w+))?", path)
        if not match:
            return _json(404, {"message": "Not Found"})
        kind, number, sub = match.group(1), match.group(2), match.group(3)
        repo = self.repo
        if kind == "pulls" and number is None:
            pulls = sorted(repo.pulls.values(), key=lambda p: p["created_at"], reverse=True)
            state = query.get("state", "open")
            return self._page(path, query, [p for p in pulls if state in ("all", p["state"])])
        n = int(number or 0)
        if kind == "pulls" and n in repo.pulls and sub is None:
            if "diff" in accept:
                return 200, {"Content-Type": "text/plain; charset=utf-8"}, repo.diffs[n].encode()
            return _json(200, repo.pulls[n])
        if kind == "pulls" and n in repo.pulls and sub == "commits":
            return self._page(path, query, repo.commits[n])
        if kind == "issues" and n in repo.issues and sub is None:
            return _json(200, repo.issues[n])
        if kind == "issues" and n in repo.issues and sub == "comments":
            return self._page(path, query, repo.comments.get(n, []))
        return _json(404, {"message": "Not Found"})

    def _page(self, path: str, query: dict[str, str], items: list[dict[str, Any]]
              ) -> tuple[int, dict[str, str], bytes]:
        per_page = min(int(query.get("per_page", 30)), self.max_per_page)
        page = int(query.get("page", 1))
        last = max(1, -(-len(items) // per_page))
        links = []
        for rel, target in (("next", page + 1), ("last", last)):
            if target <= last and (rel == "last" or page < last):
                url = f"{self.url}{path}?{urlencode({**query, 'page': target})}"
                links.append(f'<{url}>; rel="{rel}"')
        status, headers, body = _json(200, items[(page - 1) * per_page: page * per_page])
        return status, {**headers, **({"Link": ", ".join(links)} if links else {})}, body


def _json(status: int, payload: Any) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json; charset=utf-8"}, json.dumps(payload).encode()


def _handler_for(fake: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out in two writes

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, extra, body = fake.respond(parts.path, query, headers)
            fake.requests.append(LoggedRequest("GET", parts.path, query, headers, status))
            self.send_response(status)
            for name, value in extra.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    return Handler
