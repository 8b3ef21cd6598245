"""Quality flags of a mined instance, computed without a language model.

SWE-bench Verified exists because some instances cannot be solved fairly; these flags catch the
cheap-to-detect part of that: statements that are not problem statements, statements that give
the fix away, and FAIL_TO_PASS tests that fail only because their module does not import.

- ``statement_is_link``: nothing but URLs.
- ``statement_too_short``: fewer than ``min_words`` words (URLs not counted).
- ``statement_from_pr``: no issue text; the PR or commit message stands in.
- ``solution_leak``: the statement names an identifier or string the gold patch adds and the
  base code lacks, or quotes a whole added line.
- ``f2p_by_collection_error``: a FAIL_TO_PASS test whose module failed to import before the fix.
- ``f2p_many``: more than ``max_f2p`` FAIL_TO_PASS tests.
"""

from __future__ import annotations

import re
from typing import Literal

from benchsmith.core import TestStatus

Flag = Literal["statement_is_link", "statement_too_short", "statement_from_pr", "solution_leak",
               "f2p_by_collection_error", "f2p_many"]
Policy = Literal["strict", "default", "off"]
# What `build --quality default` drops; everything else is kept, flagged.
DROPPED_BY_DEFAULT: frozenset[str] = frozenset({"statement_is_link", "solution_leak"})

_URL = re.compile(r"https?://\S+")
_WORD = re.compile(r"[A-Za-z][\w'-]*")
# Identifiers worth noticing: snake_case, camelCase/PascalCase with an inner capital, dotted.
_IDENTIFIER = re.compile(r"\b(?:[A-Za-z]\w*_\w+|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*)\b")
_STRING = re.compile(r"""(["'])((?:(?!\1).){12,}?)\1""")


def _added_and_kept(patch: str) -> tuple[list[str], str]:
    """The patch's added lines, and its removed and context lines as one text."""
    added, kept = [], []
    for line in patch.splitlines():
        if line.startswith(("+++", "---")):
            continue
        if line.startswith("+"):
            added.append(line[1:])
        elif line.startswith(("-", " ")):
            kept.append(line[1:])
    return added, "\n".join(kept)


def leaked(statement: str, patch: str, base_text: str = "") -> list[str]:
    """What of the gold patch's new code the statement names (identifiers, strings, lines).

    `base_text`: the base versions of the files the patch touches; a name already there is not
    new. Without it, the patch's own removed and context lines stand in.
    """
    added, kept = _added_and_kept(patch)
    known = base_text + "\n" + kept
    found: list[str] = []
    for line in added:
        code = line.split("#", 1)[0]
        for name in _IDENTIFIER.findall(code):
            if len(name) >= 6 and not re.search(rf"\b{re.escape(name)}\b", known) \
                    and re.search(rf"\b{re.escape(name)}\b", statement) and name not in found:
                found.append(name)
        for _, text in _STRING.findall(code):
            if text not in known and text in statement and text not in found:
                found.append(text)
        stripped = line.strip()
        if len(stripped) >= 25 and stripped not in known and stripped in statement \
                and stripped not in found:
            found.append(stripped)
    return found


def collection_error_f2p(fail_to_pass: list[str], before: dict[str, TestStatus]) -> list[str]:
    """FAIL_TO_PASS tests that did not run before the fix because their module errored while
    being collected (reported under the module's path alone)."""
    return [test for test in fail_to_pass
            if test not in before and "::" in test
            and before.get(test.split("::", 1)[0]) is TestStatus.ERROR]


def quality_flags(statement: str, problem_source: str, patch: str, fail_to_pass: list[str],
                  before: dict[str, TestStatus], base_text: str = "", min_words: int = 12,
                  max_f2p: int = 20) -> dict[str, str]:
    """Every flag that applies, each with what triggered it."""
    flags: dict[str, str] = {}
    words = _WORD.findall(_URL.sub(" ", statement))
    if _URL.search(statement) and not words:
        flags["statement_is_link"] = _URL.findall(statement)[0]
    elif len(words) < min_words:
        flags["statement_too_short"] = f"{len(words)} words"
    if problem_source != "issue":
        flags["statement_from_pr"] = f"from the {problem_source} message"
    if names := leaked(statement, patch, base_text):
        flags["solution_leak"] = ", ".join(names[:5])
    if broken := collection_error_f2p(fail_to_pass, before):
        flags["f2p_by_collection_error"] = f"{len(broken)} test(s), e.g. {broken[0]}"
    if len(fail_to_pass) > max_f2p:
        flags["f2p_many"] = f"{len(fail_to_pass)} FAIL_TO_PASS tests"
    return flags


def dropped(flags: dict[str, str], policy: Policy) -> list[str]:
    """The flags that make `build` leave the instance out under `policy`."""
    if policy == "off":
        return []
    if policy == "strict":
        return sorted(flags)
    return sorted(set(flags) & DROPPED_BY_DEFAULT)
