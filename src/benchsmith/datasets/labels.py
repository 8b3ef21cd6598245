"""Published FAIL_TO_PASS / PASS_TO_PASS labels against the tests benchsmith ran.

Published names are written by the producer's log parser, not ours. They are matched the way
that parser would have written our names, most exact rule first, and each match says which
rule made it:

- ``exact``: the same node ID.
- ``absolute path``: the published ID carries the producer's checkout path
  (``/n/fs/.../repo/tests/test_x.py::test_a``); it ends with ``/`` plus our ID.
- ``first space``: SWE-bench's pytest parser cuts a line at its first space, so a
  parametrized ID with a space (``test_x[select a from b]``) is published as ``test_x[select``.
  Every test of ours that the rule maps to that name counts, and all must agree.
- ``unittest description``: ``test_a (pkg.mod.TestX)`` (and the 3.11 form ending in
  ``.test_a``) is our ``pkg.mod.TestX.test_a``.

A name no rule maps to any test is ``not found``: never a pass because a prefix happened to
match another test.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import BaseModel, Field

from benchsmith.core import PASSING, TestStatus

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


class LabelCheck(BaseModel):
    """How one published list compares with what the tests did here."""

    total: int = 0
    reproduced: list[str] = Field(default_factory=list)
    differs: dict[str, str] = Field(default_factory=dict)  # published name -> what happened
    not_found: list[str] = Field(default_factory=list)
    hung: list[str] = Field(default_factory=list)
    needs_network: list[str] = Field(default_factory=list)
    rules: dict[str, int] = Field(default_factory=dict)  # match rule -> how many names

    @property
    def all_reproduced(self) -> bool:
        """Every published name was found and behaved as published."""
        return len(self.reproduced) == self.total


def _passed(statuses: dict[str, TestStatus], names: list[str]) -> bool | None:
    """True/False when every named test passed/failed consistently; None when they disagree."""
    outcomes = {statuses.get(n) in PASSING for n in names}
    return outcomes.pop() if len(outcomes) == 1 else None


def check_labels(published: list[str], before: dict[str, TestStatus], after: dict[str, TestStatus],
                 must_fail_before: bool, hung: Iterable[str] = (),
                 needs_network: Iterable[str] = ()) -> LabelCheck:
    """Check `published` names: each must pass after the gold patch and, for FAIL_TO_PASS
    (`must_fail_before`), not pass before it."""
    check = LabelCheck(total=len(published))
    hung_set, network = set(hung), set(needs_network)
    for name in published:
        found, rule = match(name, after.keys() | before.keys() | hung_set | network)
        if rule is None:
            check.not_found.append(name)
            continue
        check.rules[rule] = check.rules.get(rule, 0) + 1
        if hung_set & set(found):
            check.hung.append(name)
            continue
        if network & set(found):
            check.needs_network.append(name)
            continue
        if rule == "first space":  # the producer's parser kept the last line of that name
            now, was = _last(after, found), _last(before, found) if must_fail_before else False
        else:
            now = _passed(after, found)
            was = _passed(before, found) if must_fail_before else False
        if now and was is False:
            check.reproduced.append(name)
        elif now is None or was is None:
            check.differs[name] = "its tests disagree with each other"
        elif not now:
            check.differs[name] = f"fails with the gold patch ({_status(after, found)})"
        else:
            check.differs[name] = "already passes without the gold patch"
    return check


def _last(statuses: dict[str, TestStatus], names: list[str]) -> bool | None:
    """Whether the last of `names` to be reported (in output order) passed; None if none was."""
    reported = [n for n in statuses if n in set(names)]
    return statuses[reported[-1]] in PASSING if reported else None


def _status(statuses: dict[str, TestStatus], names: list[str]) -> str:
    found = [statuses[n].value for n in names if n in statuses]
    return ", ".join(dict.fromkeys(found)) or "did not run"
