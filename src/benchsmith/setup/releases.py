"""Release dates from the package index, so that a relaxed date pin moves only as far as needed."""

from __future__ import annotations

import os
from datetime import datetime, timedelta

import httpx
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

DEFAULT_INDEX = "https://pypi.org"
INDEX_ENV = "BENCHSMITH_PYPI_URL"  # the same variable `benchsmith candidates` reads


def index_base(index_url: str | None = None) -> str:
    """The package index asked about releases: `index_url`, else $BENCHSMITH_PYPI_URL, else PyPI."""
    return (index_url or os.environ.get(INDEX_ENV) or DEFAULT_INDEX).rstrip("/")


def _releases(name: str, index_url: str | None, timeout: float) -> tuple[httpx.URL, dict] | None:
    """(the JSON document's URL, its "releases" table) from the index's JSON API for `name`;
    None when the index cannot tell."""
    base = index_base(index_url)
    try:
        response = httpx.get(f"{base}/pypi/{name}/json", timeout=timeout, follow_redirects=True,
                             headers={"User-Agent": "benchsmith (release dates)"})
        response.raise_for_status()
        return response.url, response.json().get("releases") or {}
    except (httpx.HTTPError, ValueError, AttributeError):
        return None


def earliest_satisfying_upload(name: str, specifier: SpecifierSet, index_url: str | None = None,
                               timeout: float = 20) -> datetime | None:
    """When the first release of `name` that satisfies `specifier` was complete on the index
    (its last file's upload time); None when the index cannot tell."""
    found = _releases(name, index_url, timeout)
    if found is None:
        return None
    releases = found[1]
    best: tuple[datetime, datetime] | None = None  # (first upload, last upload) of a release
    for text, files in releases.items():
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if not specifier.contains(version, prereleases=specifier.prereleases or None):
            continue
        uploads = [_time(f.get("upload_time_iso_8601")) for f in files or []
                   if isinstance(f, dict) and not f.get("yanked")]
        stamps = [u for u in uploads if u is not None]
        if stamps and (best is None or min(stamps) < best[0]):
            best = (min(stamps), max(stamps))
    return best[1] if best else None


def source_archive_before(name: str, moment: datetime, index_url: str | None = None,
                          timeout: float = 20) -> tuple[str, str] | None:
    """(version, URL) of the newest final release of `name` whose source archive was on the
    index before `moment`; None when there is none or the index cannot tell."""
    found = _releases(name, index_url, timeout)
    if found is None:
        return None
    where, releases = found
    best: tuple[Version, str] | None = None
    for text, files in releases.items():
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if version.is_prerelease or (best and version <= best[0]):
            continue
        for item in files or []:
            if not isinstance(item, dict) or item.get("packagetype") != "sdist" or item.get("yanked"):
                continue
            uploaded = _time(item.get("upload_time_iso_8601"))
            if uploaded is not None and uploaded < moment and isinstance(item.get("url"), str):
                best = (version, str(where.join(item["url"])))  # some mirrors write relative URLs
                break
    return (str(best[0]), best[1]) if best else None


def pin_after(moment: datetime) -> str:
    """The ``--exclude-newer`` timestamp that admits everything uploaded up to `moment`: the
    next midnight (UTC)."""
    day = (moment + timedelta(days=1)).date()
    return f"{day.isoformat()}T00:00:00Z"


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
