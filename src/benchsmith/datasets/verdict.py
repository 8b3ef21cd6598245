"""What `prepare` says of one instance: its labels judged against the runs before and after the
gold patch."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from benchsmith.datasets.labels import Cause, LabelCheck, cause_of, check_labels
from benchsmith.harness import names
from benchsmith.harness.behaviour import Behaviour
from benchsmith.instance import FlakyTest, TaskInstance, TestSpec

PrepareStatus = Literal["reproduced", "fail_to_pass_reproduced", "differs", "setup_failed", "error"]
FAILED_STATUSES = ("setup_failed", "error")  # no verdict on the labels


class Verdict(BaseModel):
    """What `prepare` found for one instance (the `prepare` field of its output record)."""

    status: PrepareStatus
    reason: str = ""
    cause: Cause | None = None  # why its labels were not all reproduced (None: they were)
    fingerprint: str = ""
    setup_commit: str = ""
    environment: str = ""  # the environment image, or the setup commit it was validated at
    fail_to_pass: LabelCheck = Field(default_factory=LabelCheck)
    pass_to_pass: LabelCheck = Field(default_factory=LabelCheck)
    runs: int = 1  # test runs per side (before/after the gold patch)
    test_network: str = ""  # the network the label runs had (as `evaluate` gives the tests)
    flaky: list[FlakyTest] = Field(default_factory=list)  # outcome changed between runs: no label
    instance_s: float = 0.0  # this instance's checkout, install and test runs
    tests_s: float = 0.0  # of which its test runs (before and after the gold patch)
    environment_s: float = 0.0  # setting its group's environment up (once for the group)
    image_s: float = 0.0  # its instance image, built while the next instance ran its tests


def judge(instance: TaskInstance, behaviour: Behaviour) -> Verdict:
    """Compare the published labels with the runs before and after the gold patch; a label
    whose outcome changed between runs is flaky, reproduced or not."""
    before = _consistent(behaviour, "before")
    after = _consistent(behaviour, "after")
    hung_before = {name for run in behaviour.before for name in run.hung}
    hung_after = {name for run in behaviour.after for name in run.hung}
    # a test that failed trying to reach another host says nothing about the gold patch
    network = {name for run in behaviour.after for name in run.needs_network}
    described: dict[str, list[str]] = {}
    for run in behaviour.before + behaviour.after:
        for line, tests in run.described.items():
            described[line] = list(dict.fromkeys(described.get(line, []) + tests))
    # a hang without the gold patch is a failure there (hung tests count FAILED): for
    # FAIL_TO_PASS that is what the label says (a bug that loops), so only hangs after count
    f2p = check_labels(instance.FAIL_TO_PASS, before, after, must_fail_before=True,
                       hung=hung_after, needs_network=network, flaky=behaviour.flaky,
                       described=described)
    p2p = check_labels(instance.PASS_TO_PASS, before, after, must_fail_before=False,
                       hung=hung_before | hung_after,
                       needs_network=network, flaky=behaviour.flaky, described=described)
    if f2p.all_reproduced and p2p.all_reproduced:
        status: PrepareStatus = "reproduced"
    elif f2p.all_reproduced:
        status = "fail_to_pass_reproduced"
    else:
        status = "differs"
    reason = "; ".join(
        f"{label}: {len(c.differs)} differ, {len(c.not_found)} not found, "
        f"{len(c.ambiguous)} ambiguous, {len(c.hung)} hung, {len(c.needs_network)} need the network, {len(c.flaky)} flaky"
        for label, c in (("FAIL_TO_PASS", f2p), ("PASS_TO_PASS", p2p)) if not c.all_reproduced)
    return Verdict(status=status, reason=reason, fail_to_pass=f2p, pass_to_pass=p2p,
                   flaky=behaviour.flaky_runs, cause=cause_of((f2p, p2p)))


def slow_labels(instance: TaskInstance) -> tuple[list[str], list[str]]:
    """The labels whose tests get a run of their own, with twice the stall limit, when they
    hang, before and after the gold patch: PASS_TO_PASS on both sides, FAIL_TO_PASS with the
    patch only (without it a hang already is the failure the label says)."""
    return list(instance.PASS_TO_PASS), [*instance.FAIL_TO_PASS, *instance.PASS_TO_PASS]


def _consistent(behaviour: Behaviour, side: str) -> dict[str, Any]:
    """A side's statuses; a test whose status changed between runs counts as neither."""
    runs = getattr(behaviour, side)
    statuses = dict(runs[0].statuses) if runs else {}
    for name in behaviour.flaky:
        statuses.pop(name, None)
    return statuses


def keeping_labels(spec: TestSpec, instance: TaskInstance) -> TestSpec:
    """`spec` without the left-out tests (those that hung while its environment was validated,
    maybe at another commit) that the instance's labels name (read as every grading reads
    them, :func:`benchsmith.harness.names.named_by`): they are what the instance is judged by,
    so they run, under the stall watchdog like every test."""
    named = names.named_by([*instance.FAIL_TO_PASS, *instance.PASS_TO_PASS], spec.deselect)
    kept = [test for test in spec.deselect if test not in named]
    return spec if kept == spec.deselect else spec.model_copy(update={"deselect": kept})
