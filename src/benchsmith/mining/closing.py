"""Which issues a pull request resolves, from GitHub's closing keywords in its text."""

from __future__ import annotations

import re

_KEYWORD = r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b:?"
_REF = (
    r"(?:https?://github\.com/(?P<url_repo>[\w.-]+/[\w.-]+)/issues/(?P<url_num>\d+)"
    r"|(?<![\w/])(?:(?P<repo>[\w.-]+/[\w.-]+))?#(?P<num>\d+))\b"
)
_SEPARATOR = r"(?:\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*)"


def _compile() -> tuple[re.Pattern[str], re.Pattern[str]]:
    # Named groups may appear once per pattern, so the clause matches with unnamed groups
    # and each reference inside it is then read with the named-group pattern.
    plain_ref = re.sub(r"\(\?P<\w+>", "(?:", _REF)
    clause = re.compile(
        rf"{_KEYWORD}\s*((?:{plain_ref})(?:{_SEPARATOR}(?:{plain_ref}))*)", re.IGNORECASE
    )
    return clause, re.compile(_REF, re.IGNORECASE)


_CLAUSE, _ONE_REF = _compile()


def resolved_issues(text: str, repo: str) -> list[int]:
    """Issue numbers of `repo` ("owner/name") that `text` closes, in order of first mention.

    Recognises ``fixes #1``, ``Closes: owner/name#2``, ``resolved
    https://github.com/owner/name/issues/3`` and lists after one keyword
    (``fixes #1, #2 and #3``). References to other repositories and plain
    mentions without a keyword are ignored.
    """
    found: list[int] = []
    for clause in _CLAUSE.finditer(text or ""):
        for ref in _ONE_REF.finditer(clause.group(1)):
            other = ref.group("url_repo") or ref.group("repo")
            if other is not None and other.lower() != repo.lower():
                continue
            number = int(ref.group("url_num") or ref.group("num"))
            if number not in found:
                found.append(number)
    return found
