"""A test that hangs under a `bin/test` script, which has no deselect option: the stall
watchdog names it, and the rerun leaves it out by running the other test files and, by the
script's `-k` keywords, the other functions of its file; it counts as FAILED, every other test
keeps its result."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsmith.core import TestStatus
from benchsmith.harness.checkout import materialize, resolve
from benchsmith.harness.render import plan_spec, render_install
from benchsmith.harness.rerun import rerun_commands
from benchsmith.harness.testrun import run_tests
from benchsmith.sandbox import LocalSandboxConfig, make_sandbox

from .conftest import PIN_DATE
from .script_runner_fixture import COUNT, TALLIES_FILES
from .test_setup_engine import engine

WAITS = "tallies/tests/test_waits.py"
# test_waits and test_wait are parts of test_waits_forever's name: -k matches substrings, so the
# rerun leaves them out too; test_waits, which ran before the hang, keeps that result
WAITS_TESTS = '''import time

from tallies import tally


def test_before():
    assert tally("a b") == 2


def test_waits():
    assert tally("x y z") == 3


def test_waits_forever():
    while True:
        time.sleep(1)


def test_after():
    assert tally("c") == 1


def test_wait():
    assert tally("") == 1
'''
HANGS = f"{WAITS}::test_waits_forever"
# another file with a function the keywords fit: a keyword run of one file must not reach it
LATER = "tallies/tests/test_later.py"
LATER_TESTS = '''from tallies import tally


def test_after_all():
    assert tally("d e") == 2
'''


@pytest.mark.slow
def test_a_hung_bin_test_function_is_left_out_and_the_rest_still_runs(make_repo, tmp_path: Path) -> None:
    repo = make_repo("tallies", {**TALLIES_FILES, WAITS: WAITS_TESTS, LATER: LATER_TESTS}, date="2023-05-10T12:00:00+00:00")
    record = engine(tmp_path, stall_timeout_s=8).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    last = record.iterations[-1]
    assert HANGS in last.hung, last.hung
    commands = [c.command for c in last.commands if "bin/test" in c.command]
    assert any(c.endswith(f"{WAITS} -k test_before test_after") for c in commands), commands
    names = {t.name: t.status for t in record.tests.tests}
    assert names[f"{WAITS}::test_before"] == names[f"{WAITS}::test_after"] == TestStatus.PASSED
    assert names[f"{COUNT}::test_single"] == TestStatus.PASSED
    assert HANGS not in names and f"{WAITS}::test_wait" not in names
    assert names[f"{WAITS}::test_waits"] == TestStatus.PASSED  # finished before the hang
    assert record.plan is not None and HANGS in record.plan.deselect
    # the runs of build, verify and evaluate: the instance's files, the hung test named afresh
    plan = record.plan.model_copy(update={"deselect": []})
    spec = plan_spec(plan, [COUNT, WAITS], services=False)
    sandbox = make_sandbox(LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")))
    try:
        sandbox.upload(materialize(resolve(str(repo.path)), tmp_path / "src" / "repo"), sandbox.workdir)
        sandbox.setup_python(plan.python)
        for command in render_install(plan, apt=False):
            assert sandbox.exec(command, env={"UV_EXCLUDE_NEWER": plan.exclude_newer}).ok
        run = run_tests(sandbox, lambda hung: rerun_commands(sandbox, spec, [COUNT, WAITS], hung),
                        "bintest", timeout=600, stall_timeout=8)
    finally:
        sandbox.close()
    assert run.hung == [HANGS] and run.statuses[HANGS] == TestStatus.FAILED
    assert not [t for t in run.statuses if t.startswith(LATER)], run.statuses  # not one of the files
    assert run.statuses[f"{WAITS}::test_waits"] == TestStatus.PASSED
    assert f"{WAITS}::test_wait" not in run.statuses  # never ran: after the hang, left out since
    assert run.statuses[f"{WAITS}::test_after"] == run.statuses[f"{COUNT}::test_two"] == TestStatus.PASSED
    assert [c.command.split("--seed 1 ")[1] for c in run.commands[1:]] == [
        COUNT, f"{WAITS} -k test_before test_after"]


def test_evaluate_reruns_a_bin_test_file_without_its_hung_function(tmp_path: Path) -> None:
    """`evaluate`'s rerun after a hang leaves the hung function out under `bin/test` too (by
    `-k` keywords for the rest of its file), never the same command again."""
    from benchsmith.core import TestScript
    from benchsmith.evaluation.fix import hung_left_out
    from benchsmith.instance import TaskInstance, TestSpec

    (tmp_path / "repo" / "tallies" / "tests").mkdir(parents=True)
    (tmp_path / "repo" / WAITS).write_text(WAITS_TESTS)
    spec = TestSpec(runner="bintest", files=[COUNT, WAITS],
                    script=TestScript(path="bin/test", options=["-C", "--verbose", "-k", "--seed"], seed=1))
    instance = TaskInstance(instance_id="fixture__tallies-1", repo="fixture/tallies", base_commit="a" * 40,
                            test=["python bin/test -C --verbose --seed 1 tallies/tests/test_count.py "
                                  f"{WAITS}"], test_spec=spec)
    sandbox = make_sandbox(LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")))
    try:
        sandbox.upload(tmp_path / "repo", sandbox.workdir)
        commands = hung_left_out(sandbox, instance, spec)
        assert commands([]) == instance.test
        again = [c.split("--seed 1 ")[1] for c in commands([HANGS])]
    finally:
        sandbox.close()
    assert again == [COUNT, f"{WAITS} -k test_before test_after"]
