"""Test names as another tool wrote them, matched to the test IDs benchsmith reads.

Published FAIL_TO_PASS / PASS_TO_PASS names are written by the producer's log parser, not ours.
Each rule below spells our IDs the way one of SWE-bench's per-repository parsers would have
written them; a published name is matched by the first rule (most exact first) under which
some of our tests spell it, and the match says which rule made it:

- ``exact``: the same node ID.
- ``absolute path``: the published ID carries the producer's checkout path
  (``/n/fs/.../repo/tests/test_x.py::test_a``); it ends with ``/`` plus our ID.
- ``path option``: the parser of pydicom, requests and pylint writes a parameter that is an
  absolute path by its last component (``test_x[/abs/data/f.dcm]`` -> ``test_x[/f.dcm]``).
- ``mouse button``: matplotlib's parser writes ``MouseButton.LEFT``/``RIGHT`` as ``1``/``3``.
- ``first space``: SWE-bench's pytest parsers cut a line at its first space, so a
  parametrized ID with a space (``test_x[select a from b]``) is published as ``test_x[select``.
- ``unittest description``: ``test_a (pkg.mod.TestX)`` (and the 3.11 form ending in
  ``.test_a``) is our ``pkg.mod.TestX.test_a``; Django's runner prints it so.
- ``function name``: sympy's parser reads its own runner's lines, which name a test by its
  function alone (``test_issue_1234``); our ``sympy/x/tests/test_y.py::test_issue_1234``.
- JavaScript test IDs (``test/x.test.js::outer > inner > parses``, :mod:`benchsmith.parsing.node_ids`)
  as JS log parsers print them: ``file titles`` (``test/x.test.js > outer > inner > parses``,
  vitest's verbose reporter), ``title path`` (``outer > inner > parses``, parsers that join
  the describe blocks of mocha or karma output), ``jest arrow`` (``outer › inner › parses``,
  jest's failure headers), ``full title`` (``outer inner parses``, jest's JSON ``fullName`` and
  mocha's full title) and ``title only`` (``parses``, jest's verbose lines). Each rule spells
  only JavaScript IDs, the rules above only others.
- ``docstring``: at verbosity 2 Django's runner prints a test's docstring's first line where
  the test has one, and Django's parser took that line for the name; the run recorded which
  test printed it.

Where a rule spells two of our tests the same, the producer's parser kept the status of the
last line with that name; for the rules whose order is pytest's own (``first space``, ``path
option``) the last of ours (in the order the run reported them) decides, as it did there. For
any other rule two tests under one name are ``ambiguous``: reported, never guessed; where they
all have one status, that is the name's status, whichever of them the producer read. A name no
rule maps to any test is not found: never a pass because a prefix happened to match another
test. `prepare` checks published labels with these rules, and every grading of a label
(`evaluate`, `verify`) looks its status up through :func:`status_of`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from benchsmith.core import TestStatus
from benchsmith.harness.languages import JS_SUFFIXES, TS_SUFFIXES
from benchsmith.parsing.node_ids import TITLE_SEPARATOR

AMBIGUOUS = "ambiguous"
_UNITTEST = re.compile(r"^(?P<method>\w+) \((?P<cls>[\w.]+?)(?:\.(?P=method))?\)$")
_OPTION = re.compile(r"^(.*?)\[(.*)\]$")
_DOTTED = re.compile(r"^(?P<cls>[\w.]+)\.(?P<method>\w+)$")


def _node_titles(name: str) -> tuple[str, list[str]] | None:
    """(file, titles) of a JavaScript test ID; None for any other ID."""
    file, sep, titles = name.partition("::")
    if not sep or not file.endswith(JS_SUFFIXES + TS_SUFFIXES):
        return None
    return file, titles.split(TITLE_SEPARATOR)


def _joined(separator: str) -> Callable[[str], str | None]:
    """The titles of a JavaScript ID in a describe block, joined with `separator`."""
    def spell(name: str) -> str | None:
        found = _node_titles(name)
        return separator.join(found[1]) if found and len(found[1]) > 1 else None
    return spell


def _title_only(name: str) -> str | None:
    found = _node_titles(name)
    return found[1][-1] if found else None


def _file_titles(name: str) -> str | None:
    found = _node_titles(name)
    return TITLE_SEPARATOR.join([found[0], *found[1]]) if found else None


def _path_option(name: str) -> str | None:
    if _node_titles(name):
        return None
    found = _OPTION.match(name)
    if found is None:
        return None
    main, option = found.groups()
    if option.startswith("/") and not option.startswith("//") and "*" not in option:
        return f"{main}[/{option.split('/')[-1]}]"
    return None


def _mouse_button(name: str) -> str | None:
    if "MouseButton." not in name:
        return None
    return name.replace("MouseButton.LEFT", "1").replace("MouseButton.RIGHT", "3")


def _first_space(name: str) -> str | None:
    return name.split(" ", 1)[0] if " " in name and not _node_titles(name) else None


def _unittest(name: str) -> str | None:
    found = _DOTTED.match(name) if "::" not in name and " " not in name else None
    return f"{found['method']} ({found['cls']})" if found else None


def _function(name: str) -> str | None:
    if "::" not in name or _node_titles(name):
        return None
    function = name.rsplit("::", 1)[1]
    return function if "[" not in function else None


# (rule, how the producer spelled one of our IDs, whether its own order settles a tie)
RULES: list[tuple[str, Callable[[str], str | None], bool]] = [
    ("path option", _path_option, True),
    ("mouse button", _mouse_button, False),
    ("first space", _first_space, True),
    ("unittest description", _unittest, False),
    ("function name", _function, False),
    ("file titles", _file_titles, False),
    ("title path", _joined(TITLE_SEPARATOR), False),
    ("jest arrow", _joined(" \u203a "), False),
    ("full title", _joined(" "), False),
    ("title only", _title_only, False),
]


def match(published: str, ours: Iterable[str], described: dict[str, list[str]] | None = None
          ) -> tuple[list[str], str | None]:
    """Our test IDs that `published` names, and the rule that matched (None: not found;
    ``ambiguous: RULE`` when the rule spells several of our tests that way). `described`:
    the docstring lines the runner printed, each with the tests that printed it."""
    names = list(ours)
    if published in names:
        return [published], "exact"
    if published.startswith("/"):
        suffix = [n for n in names if published.endswith("/" + n)]
        if suffix:
            return [max(suffix, key=len)], "absolute path"
    spelled = published
    if form := _UNITTEST.match(published):  # the 3.11 form, spelled back
        spelled = f"{form['method']} ({form['cls']})"
    for rule, spell, ordered in RULES:
        found = [n for n in names if spell(n) == spelled]
        if len(found) > 1 and not ordered:
            return found, f"{AMBIGUOUS}: {rule}"
        if found:
            return found, rule
    found = [n for n in (described or {}).get(published, []) if n in names]
    if len(found) > 1:
        return found, f"{AMBIGUOUS}: docstring"
    return (found, "docstring") if found else ([], None)


def named_by(labels: Iterable[str], tests: Iterable[str]) -> set[str]:
    """The tests of `tests` that some published name in `labels` names, by the rules above."""
    candidates = list(tests)
    return {test for label in labels for test in match(label, candidates)[0]}


def status_of(name: str, statuses: dict[str, TestStatus],
              described: dict[str, list[str]] | None = None) -> TestStatus | None:
    """The status `statuses` (in the order the run reported them) give the test `name`, read
    with the rules above; None when no rule finds it, or finds it ambiguous."""
    if name in statuses:
        return statuses[name]
    found, rule = match(name, statuses, described)
    if not found or rule is None:
        return None
    if rule.startswith(AMBIGUOUS):  # a status only where every test of that name agrees
        agreed = {statuses[n] for n in found}
        return agreed.pop() if len(agreed) == 1 else None
    ordered = next((o for r, _, o in RULES if r == rule), False)
    return statuses[found[-1] if ordered else found[0]]
