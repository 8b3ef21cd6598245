"""Re-check built instances from scratch: fresh sandbox, recorded commands, gold patches."""

from __future__ import annotations

import json
import time

from pydantic import BaseModel

from benchsmith.core import BenchsmithError, Plan
from benchsmith.mining.build import TaskInstance
from benchsmith.mining.harness import prepare_sandbox, run_instance_tests
from benchsmith.sandbox.config import SandboxConfig
from benchsmith.setup.checkout import resolve


class Verdict(BaseModel):
    """Whether the gold patch still turns every FAIL_TO_PASS test from failing to passing."""

    instance_id: str
    ok: bool
    reason: str = ""
    duration_s: float = 0.0


def verify_instance(instance: TaskInstance, source: str, sandbox_config: SandboxConfig,
                    timeout_s: float = 1800) -> Verdict:
    """Fresh sandbox, the instance's install commands, then before/after runs of its tests."""
    started = time.monotonic()
    expected = set(json.loads(instance.FAIL_TO_PASS))
    try:
        checkout = resolve(source, rev=instance.base_commit, repo=instance.repo)
        sandbox = prepare_sandbox(sandbox_config, checkout, instance.python, instance.install,
                                  instance.exclude_newer, timeout_s)
    except BenchsmithError as exc:
        return Verdict(instance_id=instance.instance_id, ok=False, reason=str(exc))
    try:
        plan = recorded_plan(instance.test, instance.python, instance.exclude_newer,
                             instance.runner)
        behaviour = run_instance_tests(sandbox, plan, instance.patch, instance.test_patch, runs=1,
                                       timeout=timeout_s)
    except BenchsmithError as exc:
        return Verdict(instance_id=instance.instance_id, ok=False, reason=str(exc))
    finally:
        sandbox.close()
    missing = sorted(expected - set(behaviour.FAIL_TO_PASS))
    reason = behaviour.error or (f"not FAIL_TO_PASS any more: {', '.join(missing[:5])}" if missing else "")
    return Verdict(instance_id=instance.instance_id, ok=not reason, reason=reason,
                   duration_s=round(time.monotonic() - started, 2))


def recorded_plan(test: list[str], python: str, exclude_newer: str, runner: str) -> Plan:
    """The recorded test command as a plan, to run it on other test files."""
    env, args = recorded_test(test)
    return Plan(python=python, exclude_newer=exclude_newer,
                runner="unittest" if runner == "unittest" else "pytest", test_args=args, env=env)


def recorded_test(test: list[str]) -> tuple[dict[str, str], list[str]]:
    """Environment prefix and pytest options of the recorded test command (files are re-added)."""
    import shlex

    from benchsmith.mining.harness import _options_only

    words = shlex.split(test[0]) if test else []
    env: dict[str, str] = {}
    while words and "=" in words[0] and not words[0].startswith("-"):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    if "pytest" not in words:
        return env, []
    args = _options_only(words[words.index("pytest") + 1:])
    kept: list[str] = []
    index = 0
    while index < len(args):  # drop what render_test adds by itself
        if args[index] == "-rA":
            index += 1
        elif args[index] == "-p" and index + 1 < len(args) and args[index + 1] == "no:cacheprovider":
            index += 2
        else:
            kept.append(args[index])
            index += 1
    return env, kept
