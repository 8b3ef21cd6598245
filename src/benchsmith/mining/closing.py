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


# Text that is code, not prose: fenced blocks, inline spans, indented blocks, shell/REPL lines.
_FENCED = re.compile(r"^ {0,3}(```|~~~).*?(?:^ {0,3}\1[^\n]*$|\Z)", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"`[^`\n]+`")
_CODE_LINE = re.compile(r"^(?: {4,}|\t|\s*(?:\$|>>>|\.\.\.|%|#!) ).*$", re.MULTILINE)


def prose(text: str) -> str:
    """`text` without code blocks, code spans and command lines (blanked, so offsets stay)."""
    def blank(match: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", match.group(0))

    for pattern in (_FENCED, _SPAN, _CODE_LINE):
        text = pattern.sub(blank, text)
    return text


def closing_links(text: str, repo: str) -> list[tuple[int, str]]:
    """(issue number, the clause that closes it) for each issue of `repo` that `text` closes
    by keyword, outside code; in order of first mention."""
    found: dict[int, str] = {}
    for clause in _CLAUSE.finditer(prose(text or "")):
        for ref in _ONE_REF.finditer(clause.group(1)):
            other = ref.group("url_repo") or ref.group("repo")
            if other is not None and other.lower() != repo.lower():
                continue
            found.setdefault(int(ref.group("url_num") or ref.group("num")), clause.group(0).strip())
    return list(found.items())


def closing_links_in(texts: list[str], repo: str, own_number: int) -> dict[int, str]:
    """Issue -> the first clause that closes it, across `texts` (a PR's title, body and commit
    messages); never the PR's own number."""
    links: dict[int, str] = {}
    for text in texts:
        for number, clause in closing_links(text, repo):
            if number != own_number:
                links.setdefault(number, clause)
    return links


def resolved_issues(text: str, repo: str) -> list[int]:
    """Issue numbers of `repo` ("owner/name") that `text` closes, in order of first mention.

    Recognises ``fixes #1``, ``Closes: owner/name#2``, ``resolved
    https://github.com/owner/name/issues/3`` and lists after one keyword
    (``fixes #1, #2 and #3``). References to other repositories, plain mentions without a
    keyword, and anything inside code (blocks, spans, command lines) are ignored.
    """
    return [number for number, _ in closing_links(text, repo)]
