"""Published FAIL_TO_PASS / PASS_TO_PASS labels against the tests benchsmith ran; names are
matched by :mod:`benchsmith.harness.names`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

from benchsmith.core import PASSING, TestStatus
from benchsmith.harness.names import AMBIGUOUS, RULES, match, status_of

# rules under which the producer's own order settled two tests of one name (see harness/names)
_ORDERED = {rule for rule, _, ordered in RULES if ordered}


class LabelCheck(BaseModel):
    """How one published list compares with what the tests did here."""

    total: int = 0
    reproduced: list[str] = Field(default_factory=list)
    differs: dict[str, str] = Field(default_factory=dict)  # published name -> what happened
    not_found: list[str] = Field(default_factory=list)
    ambiguous: list[str] = Field(default_factory=list)  # a rule names several tests: no guess
    hung: list[str] = Field(default_factory=list)
    needs_network: list[str] = Field(default_factory=list)
    flaky: list[str] = Field(default_factory=list)  # its tests' outcome changed between runs
    rules: dict[str, int] = Field(default_factory=dict)  # match rule -> how many names

    @property
    def all_reproduced(self) -> bool:
        """Every published name was found and behaved as published."""
        return len(self.reproduced) == self.total


# Why an instance did not reproduce its labels, one cause each: its environment did not set up
# or fails the tests the gold patch should pass; the tests needed the network; a published name
# matches no test or several (naming); a test's outcome changed between runs (flaky) or it
# hung; the dataset's label is wrong by the gold patch's own run (a FAIL_TO_PASS test that
# passes without it); an error of the harness.
Cause = Literal["environment", "network", "naming", "flaky", "hung", "label", "error"]
DISAGREE = "its tests disagree with each other"
ALREADY_PASSES = "already passes without the gold patch"


def cause_of(checks: Iterable[LabelCheck]) -> Cause | None:
    """The one cause that explains labels not reproduced (None when all were), by the first
    kind of evidence found: hung (a run stopped early leaves later tests unseen), naming,
    network, flaky, environment, then label."""
    checks = list(checks)
    if all(c.all_reproduced for c in checks):
        return None
    differs = [why for c in checks for why in c.differs.values()]
    if any(c.hung for c in checks):
        return "hung"
    if any(c.not_found or c.ambiguous for c in checks) or DISAGREE in differs:
        return "naming"
    for cause, attribute in (("network", "needs_network"), ("flaky", "flaky")):
        if any(getattr(c, attribute) for c in checks):
            return cause  # type: ignore[return-value]
    if any(why != ALREADY_PASSES for why in differs):
        return "environment"  # a test the gold patch should make (or leave) passing fails
    return "label"


def _passed(statuses: dict[str, TestStatus], names: list[str]) -> bool | None:
    """True/False when every named test passed/failed consistently; None when they disagree."""
    outcomes = {statuses.get(n) in PASSING for n in names}
    return outcomes.pop() if len(outcomes) == 1 else None


def check_labels(published: list[str], before: dict[str, TestStatus], after: dict[str, TestStatus],
                 must_fail_before: bool, hung: Iterable[str] = (),
                 needs_network: Iterable[str] = (), flaky: Iterable[str] = (),
                 described: dict[str, list[str]] | None = None) -> LabelCheck:
    """Check `published` names: each must pass after the gold patch and, for FAIL_TO_PASS
    (`must_fail_before`), not pass before it; a name whose tests are `flaky` is neither."""
    check = LabelCheck(total=len(published))
    hung_set, network, unsteady = set(hung), set(needs_network), set(flaky)
    for name in published:
        found, rule = match(name, after.keys() | before.keys() | hung_set | network | unsteady,
                            described)
        if rule is None:  # (its module failing to import for the network names no test)
            (check.needs_network if name.split("::", 1)[0] in network else check.not_found).append(name)
            continue
        check.rules[rule] = check.rules.get(rule, 0) + 1
        if rule.startswith(AMBIGUOUS) and (
                _passed(after, found) is None
                or (must_fail_before and _passed(before, found) is None)
                or (hung_set | network | unsteady) & set(found)):
            check.ambiguous.append(name)  # the tests of that name disagree: no guess
            continue
        if hung_set & set(found):
            check.hung.append(name)
            continue
        if network & set(found):
            check.needs_network.append(name)
            continue
        if unsteady & set(found):
            check.flaky.append(name)
            continue
        if rule in _ORDERED:  # the producer's parser kept the last line of that name
            now = _graded(name, after, described)
            was = _graded(name, before, described) if must_fail_before else False
        else:
            now = _passed(after, found)
            was = _passed(before, found) if must_fail_before else False
        if now and was is False:
            check.reproduced.append(name)
        elif now is None or was is None:
            check.differs[name] = DISAGREE
        elif not now:
            check.differs[name] = f"fails with the gold patch ({_status(after, found)})"
        else:
            check.differs[name] = ALREADY_PASSES
    return check


def _graded(name: str, statuses: dict[str, TestStatus],
            described: dict[str, list[str]] | None = None) -> bool | None:
    """Whether `name` passed as grading reads it (:func:`status_of`); None if it did not run."""
    status = status_of(name, statuses, described)
    return None if status is None else status in PASSING


def _status(statuses: dict[str, TestStatus], names: list[str]) -> str:
    found = [statuses[n].value for n in names if n in statuses]
    return ", ".join(dict.fromkeys(found)) or "did not run"
