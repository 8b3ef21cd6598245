"""A GitHub REST API client: pagination, ETag caching, rate limits, retries, token rotation."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from benchsmith.core import BenchsmithError

logger = logging.getLogger(__name__)

DEFAULT_API = "https://api.github.com"
API_ENV = "BENCHSMITH_GITHUB_API"
TOKEN_ENVS = ("GITHUB_TOKENS", "GITHUB_TOKEN", "GH_TOKEN")
JSON = "application/vnd.github+json"
DIFF = "application/vnd.github.v3.diff"


class GitHubError(BenchsmithError):
    """A GitHub API request failed; the message is one line and never contains a token."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class GitHubNotFound(GitHubError):
    """The repository, pull request or issue does not exist (or the token cannot see it)."""


class GitHubAuthError(GitHubError):
    """GitHub rejected a token (401 bad credentials)."""


class GitHubRateLimited(GitHubError):
    """Rate limits persisted beyond the allowed number of waits."""


class _Token:
    """A token and the variable it came from; its repr never shows the value."""

    __slots__ = ("label", "limited_until", "value")

    def __init__(self, value: str | None, label: str) -> None:
        self.value = value
        self.label = label
        self.limited_until = 0.0

    def __repr__(self) -> str:
        return f"<token from {self.label}>"


@dataclass(frozen=True)
class _Body:
    content: bytes
    link: str | None


class EtagCache:
    """Response bodies and their ETags in a SQLite file, for conditional requests."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS etags"
            " (key TEXT PRIMARY KEY, etag TEXT, body BLOB, link TEXT)"
        )

    def get(self, key: str) -> tuple[str, _Body] | None:
        query = "SELECT etag, body, link FROM etags WHERE key = ?"
        row = self._db.execute(query, (key,)).fetchone()
        return (row[0], _Body(row[1], row[2])) if row else None

    def put(self, key: str, etag: str, body: _Body) -> None:
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO etags VALUES (?, ?, ?, ?)",
                             (key, etag, body.content, body.link))

    def close(self) -> None:
        self._db.close()


def tokens_from_env(env: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(variable, token) pairs from GITHUB_TOKENS (comma-separated), GITHUB_TOKEN, GH_TOKEN."""
    env = os.environ if env is None else env
    found: list[tuple[str, str]] = []
    for var in TOKEN_ENVS:
        values = [v.strip() for v in env.get(var, "").split(",") if v.strip()]
        for index, value in enumerate(values):
            label = f"{var}[{index + 1}]" if var == "GITHUB_TOKENS" else var
            if value not in {v for _, v in found}:
                found.append((label, value))
    return found


def _next_link(link: str | None) -> str | None:
    for part in (link or "").split(","):
        url, _, rest = part.partition(";")
        if 'rel="next"' in rest.replace(" ", ""):
            return url.strip().strip("<>")
    return None


def _message(response: httpx.Response) -> str:
    try:
        message = response.json().get("message", "")
    except (ValueError, AttributeError):
        message = response.text[:200]
    return " ".join(str(message).split())


class GitHubClient:
    """Synchronous GitHub REST client on :class:`httpx.Client`."""

    def __init__(
        self,
        tokens: Sequence[tuple[str, str]] = (),
        *,
        base_url: str | None = None,
        cache_dir: Path | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        max_attempts: int = 5,
        backoff_s: float = 1.0,
        max_rate_limit_waits: int = 20,
        timeout_s: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        """`tokens` are (variable name, token) pairs, used in turn when one is rate-limited."""
        self.base_url = (base_url or os.environ.get(API_ENV) or DEFAULT_API).rstrip("/")
        self._tokens = [_Token(value, label) for label, value in tokens]
        self._tokens = self._tokens or [_Token(None, "anonymous")]
        self._current = 0
        self._sleep = sleep
        self._clock = clock
        self.max_attempts = max(1, max_attempts)
        self.backoff_s = backoff_s
        self.max_rate_limit_waits = max_rate_limit_waits
        self._cache = EtagCache(cache_dir / "github-etags.sqlite") if cache_dir else None
        self._http = httpx.Client(
            base_url=self.base_url,
            headers={"Accept": JSON, "X-GitHub-Api-Version": "2022-11-28",
                     "User-Agent": "benchsmith"},
            timeout=timeout_s,
            follow_redirects=True,  # httpx drops Authorization on cross-origin redirects
            transport=transport,
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **kwargs: Any) -> GitHubClient:
        """A client with the tokens and the API URL (BENCHSMITH_GITHUB_API) from `env`."""
        env = os.environ if env is None else env
        kwargs.setdefault("base_url", env.get(API_ENV) or DEFAULT_API)
        return cls(tokens_from_env(env), **kwargs)

    @property
    def has_token(self) -> bool:
        """Whether requests are authenticated."""
        return self._tokens[0].value is not None

    def __repr__(self) -> str:
        count = len(self._tokens) if self.has_token else 0
        return f"GitHubClient(base_url={self.base_url!r}, tokens={count})"

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool and the cache."""
        self._http.close()
        if self._cache:
            self._cache.close()

    def get_json(self, path: str, params: Mapping[str, str | int] | None = None) -> Any:
        """GET `path` (relative to the API root, or an absolute API URL) and parse the JSON."""
        return json.loads(self._get(path, params, JSON).content)

    def get_text(self, path: str, accept: str,
                 params: Mapping[str, str | int] | None = None) -> str:
        """GET `path` with a media type such as :data:`DIFF` and return the text."""
        return self._get(path, params, accept).content.decode("utf-8", errors="replace")

    def paginate(self, path: str, params: Mapping[str, str | int] | None = None) -> Iterator[Any]:
        """Yield the items of a list endpoint, following ``Link: <...>; rel="next"``."""
        url: str | None = path
        while url is not None:
            body = self._get(url, params, JSON)
            yield from json.loads(body.content)
            url, params = _next_link(body.link), None
            if url is not None and httpx.URL(url).host != httpx.URL(self.base_url).host:
                raise GitHubError(f"pagination link leaves {self.base_url}; refusing to follow it")

    def _pick_token(self) -> _Token:
        now = self._clock()
        order = self._tokens[self._current:] + self._tokens[: self._current]
        for token in order:
            if token.limited_until <= now:
                self._current = self._tokens.index(token)
                return token
        token = min(self._tokens, key=lambda t: t.limited_until)
        wait = token.limited_until - now
        logger.warning("GitHub rate limit reached on every token; waiting %.0fs", wait)
        self._sleep(wait)
        token.limited_until = 0.0
        self._current = self._tokens.index(token)
        return token

    def _get(self, url: str, params: Mapping[str, str | int] | None, accept: str) -> _Body:
        probe = self._http.build_request("GET", url, params=params)
        where = probe.url.path
        key = f"{accept} {probe.url}"
        cached = self._cache.get(key) if self._cache else None
        failures = waits = 0
        while True:
            token = self._pick_token()
            headers = {"Accept": accept}
            if token.value:
                headers["Authorization"] = f"Bearer {token.value}"
            if cached:
                headers["If-None-Match"] = cached[0]
            try:
                request = self._http.build_request("GET", probe.url, headers=headers)
                response = self._http.send(request)
            except httpx.TransportError as exc:
                failures += 1
                if failures >= self.max_attempts:
                    raise GitHubError(
                        f"GitHub API unreachable at {self.base_url} after {failures} attempts: "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
                self._backoff(failures, f"{type(exc).__name__} on {where}")
                continue
            status = response.status_code
            logger.debug("GET %s -> %s", where, status)
            if status == 304 and cached:
                return cached[1]
            if 200 <= status < 300:
                body = _Body(response.content, response.headers.get("link"))
                if self._cache and response.headers.get("etag"):
                    self._cache.put(key, response.headers["etag"], body)
                return body
            if status in (403, 429) and self._rate_limited(response, token):
                waits += 1
                if waits > self.max_rate_limit_waits:
                    raise GitHubRateLimited(
                        f"GitHub rate limit persisted after {waits - 1} waits ({where})", status
                    )
                continue
            if status >= 500:
                failures += 1
                if failures >= self.max_attempts:
                    raise GitHubError(
                        f"GitHub API error {status} on {where} after {failures} attempts", status
                    )
                self._backoff(failures, f"{status} on {where}")
                continue
            raise self._error(response, token, where)

    def _rate_limited(self, response: httpx.Response, token: _Token) -> bool:
        """Handle a rate-limit answer (mark the token or sleep); False if it is a plain 403."""
        headers = response.headers
        if headers.get("x-ratelimit-remaining") == "0":
            reset = headers.get("x-ratelimit-reset")
            now = self._clock()
            until = float(reset) + 1 if reset and reset.isdigit() else now + 60
            token.limited_until = max(until, now + 1)  # a skewed clock must not spin
            logger.warning("GitHub primary rate limit reached for %s (resets in %.0fs)",
                           token.label, max(0.0, token.limited_until - now))
            return True
        retry_after = headers.get("retry-after")
        if retry_after is not None or "secondary rate limit" in _message(response).lower():
            wait = float(retry_after) if retry_after and retry_after.isdigit() else 60.0
            logger.warning("GitHub secondary rate limit; waiting %.0fs", wait)
            self._sleep(wait)
            return True
        return False

    def _backoff(self, failures: int, what: str) -> None:
        wait = min(self.backoff_s * 2 ** (failures - 1), 60.0)
        logger.warning("GitHub request failed (%s); retrying in %.1fs", what, wait)
        self._sleep(wait)

    def _error(self, response: httpx.Response, token: _Token, where: str) -> GitHubError:
        status = response.status_code
        if status == 401:
            if token.value is None:
                return GitHubAuthError("GitHub answered 401 (bad credentials) with no token", status)
            return GitHubAuthError(
                f"GitHub rejected the token in {token.label}: bad credentials", status
            )
        if status in (404, 410):
            return GitHubNotFound(f"GitHub has no {where} ({status}: missing or hidden)", status)
        return GitHubError(f"GitHub API error {status} on {where}: {_message(response)}", status)
