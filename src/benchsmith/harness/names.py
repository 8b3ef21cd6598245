"""Test names as another tool wrote them, matched to the test IDs benchsmith reads.

Published FAIL_TO_PASS / PASS_TO_PASS names are written by the producer's log parser, not ours.
They are matched the way that parser would have written our names, most exact rule first, and
each match says which rule made it:

- ``exact``: the same node ID.
- ``absolute path``: the published ID carries the producer's checkout path
  (``/n/fs/.../repo/tests/test_x.py::test_a``); it ends with ``/`` plus our ID.
- ``first space``: SWE-bench's pytest parser cuts a line at its first space, so a
  parametrized ID with a space (``test_x[select a from b]``) is published as ``test_x[select``.
  That parser kept the status of the last line with that name, so the last of our tests the
  rule maps to it (in the order the run reported them) decides.
- ``unittest description``: ``test_a (pkg.mod.TestX)`` (and the 3.11 form ending in
  ``.test_a``) is our ``pkg.mod.TestX.test_a``.

A name no rule maps to any test is not found: never a pass because a prefix happened to match
another test. `prepare` checks published labels with these rules, and every grading of a
label (`evaluate`, `verify`) looks its status up through :func:`status_of`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from benchsmith.core import TestStatus

_UNITTEST = re.compile(r"^(?P<method>\w+) \((?P<cls>[\w.]+?)(?:\.(?P=method))?\)$")


def match(published: str, ours: Iterable[str]) -> tuple[list[str], str | None]:
    """Our test IDs that `published` names, and the rule that matched (None: not found)."""
    names = list(ours)
    if published in names:
        return [published], "exact"
    if published.startswith("/"):
        suffix = [n for n in names if published.endswith("/" + n)]
        if suffix:
            return [max(suffix, key=len)], "absolute path"
    cut = [n for n in names if " " in n and n.split(" ", 1)[0] == published]
    if cut:
        return cut, "first space"
    if described := _UNITTEST.match(published):
        name = f"{described['cls']}.{described['method']}"
        if name in names:
            return [name], "unittest description"
    return [], None


def status_of(name: str, statuses: dict[str, TestStatus]) -> TestStatus | None:
    """The status `statuses` (in the order the run reported them) give the test `name`, read
    with the rules above; None when no rule finds it."""
    if name in statuses:
        return statuses[name]
    found, rule = match(name, statuses)
    if not found:
        return None
    return statuses[found[-1] if rule == "first space" else found[0]]
