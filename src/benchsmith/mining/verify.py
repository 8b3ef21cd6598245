"""Re-check built instances from scratch: fresh sandbox, recorded commands, gold patches."""

from __future__ import annotations

import time

from pydantic import BaseModel

from benchsmith.core import BenchsmithError
from benchsmith.harness.behaviour import run_instance_tests
from benchsmith.harness.checkout import resolve
from benchsmith.harness.prepare import prepare_sandbox
from benchsmith.harness.render import instance_spec
from benchsmith.instance import TaskInstance
from benchsmith.sandbox.config import SandboxConfig


class Verdict(BaseModel):
    """Whether the gold patch still turns every FAIL_TO_PASS test from failing to passing."""

    instance_id: str
    ok: bool
    reason: str = ""
    duration_s: float = 0.0


def verify_instance(instance: TaskInstance, source: str, sandbox_config: SandboxConfig,
                    timeout_s: float = 1800, stall_timeout_s: float | None = 600) -> Verdict:
    """Fresh sandbox, the instance's install commands, then before/after runs of its tests:
    every FAIL_TO_PASS test must fail before and pass after the gold patch, every PASS_TO_PASS
    test pass after it. A test without progress for `stall_timeout_s` counts as failing."""
    started = time.monotonic()
    expected = set(instance.FAIL_TO_PASS)
    try:
        checkout = resolve(source, rev=instance.base_commit, repo=instance.repo)
        sandbox = prepare_sandbox(sandbox_config, checkout, instance.python, instance.install,
                                  instance.pin(), timeout_s)
    except BenchsmithError as exc:
        return Verdict(instance_id=instance.instance_id, ok=False, reason=str(exc))
    try:
        behaviour = run_instance_tests(sandbox, instance_spec(instance), instance.patch,
                                       instance.test_patch, runs=1, timeout=timeout_s,
                                       stall_timeout=stall_timeout_s)
    except BenchsmithError as exc:
        return Verdict(instance_id=instance.instance_id, ok=False, reason=str(exc))
    finally:
        sandbox.close()
    missing = sorted(expected - set(behaviour.FAIL_TO_PASS))
    after = behaviour.after[0] if behaviour.after else None
    broken = [t for t in instance.PASS_TO_PASS if after is None or not after.passed(t)]
    reason = behaviour.error or (f"not FAIL_TO_PASS any more: {', '.join(missing[:5])}" if missing
                                 else f"PASS_TO_PASS failing: {', '.join(broken[:5])}" if broken else "")
    return Verdict(instance_id=instance.instance_id, ok=not reason, reason=reason,
                   duration_s=round(time.monotonic() - started, 2))
