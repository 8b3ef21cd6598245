"""Fix mode end to end on a self-built repository: real git, real uv installs, real pytest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchsmith.evaluation.summary import summarize, write_summary

from .evaluation_fixture import (
    CODE,
    CODE_FILE,
    PARSE_FIXED,
    build_instances,
    evaluator,
    prediction,
    working_diff,
)

pytestmark = pytest.mark.slow

BREAKS_TOTAL = PARSE_FIXED.replace("return sum(numbers)", "return 0")


def test_gold_resolves_and_wrong_patches_do_not(make_repo, tmp_path: Path) -> None:
    repo, instances = build_instances(make_repo)
    calc1 = instances["fixture__calc-1"]
    evaluation = evaluator(repo, tmp_path, "fix")
    gold = [prediction(i.instance_id, i.patch, "gold") for i in instances.values()]
    reports = {r.instance_id: r for r in evaluation.run(instances, gold)}
    assert all(r.resolved and r.applied for r in reports.values())
    assert reports["fixture__calc-1"].fix.FAIL_TO_PASS.success == ["tests/test_calc.py::test_spaces"]
    assert reports["fixture__calc-1"].apply.method == "git apply"

    wrong = [
        prediction("fixture__calc-1", "", "empty"),
        prediction("fixture__calc-1", working_diff(repo, {CODE_FILE: BREAKS_TOTAL}), "breaks"),
        prediction("fixture__calc-1", calc1.patch.replace("text.split", "txt.splat"), "stale"),
        prediction("fixture__calc-1", working_diff(repo, {CODE_FILE: CODE + "# nothing\n"}), "noop"),
    ]
    for item in wrong:
        [report] = evaluation.run(instances, [item])
        assert not report.resolved, item.model
        # prepared once, reused by every later prediction; an empty one needs no environment
        assert report.environment_reused or item.model == "empty"
    by_model = {s.model: s for s in summarize(
        [evaluation.evaluate_one(instances[p.instance_id], p) for p in wrong])}
    assert by_model["empty"].ids == {"EMPTY PATCH": ["fixture__calc-1"]}
    assert by_model["empty"].empty_patches == 1 and by_model["empty"].errors == 0
    assert by_model["stale"].ids == {"NOT APPLIED": ["fixture__calc-1"]}
    broken = json.loads((tmp_path / "runs/run/breaks/fixture__calc-1/report.json").read_text())
    assert broken["fix"]["FAIL_TO_PASS"]["success"] == ["tests/test_calc.py::test_spaces"]
    assert broken["fix"]["PASS_TO_PASS"]["failure"] == ["tests/test_calc.py::test_total"]
    assert broken["fix"]["resolution"] == "NO"
    assert by_model["noop"].ids == {"UNRESOLVED": ["fixture__calc-1"]}
    stale = json.loads((tmp_path / "runs/run/stale/fixture__calc-1/report.json").read_text())
    assert stale["apply"]["tried"] == ["git apply", "git apply --3way", "patch --fuzz"]
    assert "does not apply" in stale["error"]


def test_a_patch_that_prints_passes_resolves_nothing(make_repo, tmp_path: Path) -> None:
    """A known attack on log-parsing harnesses: the code under test prints pytest's own result
    lines for the graded tests (and ends the process before pytest can report). pytest's report,
    written outside the repository, decides; the console alone does not."""
    repo, instances = build_instances(make_repo)
    evaluation = evaluator(repo, tmp_path, "fix")
    names = ["tests/test_calc.py::test_spaces", "tests/test_calc.py::test_plain",
             "tests/test_calc.py::test_total"]
    lines = "".join(f"{name} PASSED\\nPASSED {name}\\n" for name in names)
    # pytest captures fd 1 and 2 while it imports the code; the code finds the saved console
    # descriptors (writable files or pipes other than the capture files) and writes there.
    printing = CODE + f"""
import os as _os, stat as _stat
_captured = {{_os.fstat(fd).st_ino for fd in (0, 1, 2)}}
for _fd in range(3, 64):
    try:
        _info = _os.fstat(_fd)
        if (_stat.S_ISREG(_info.st_mode) or _stat.S_ISFIFO(_info.st_mode)) \\
                and _info.st_ino not in _captured:
            _os.write(_fd, b"\\n{lines}=== 3 passed in 0.01s ===\\n")
            break
    except OSError:
        pass
_os._exit(0)
"""
    forged = prediction("fixture__calc-1", working_diff(repo, {CODE_FILE: printing}), "forged")
    [report] = evaluation.run(instances, [forged])
    assert report.applied and not report.resolved and not report.infrastructure_failure
    assert report.fix.run.report_missing
    assert "tests/test_calc.py::test_spaces" in report.fix.run.unconfirmed
    # Forged lines after pytest's own summary (at exit, when nothing captures any more): the
    # console now says every test passed; pytest's report says what really happened.
    loud = CODE + f"""
import atexit as _atexit, os as _os
_atexit.register(lambda: _os.write(1, b"{'=' * 10} short test summary info {'=' * 10}\\n"
                                      b"{lines}{'=' * 10} 3 passed in 0.01s {'=' * 10}\\n"))
"""
    printed = prediction("fixture__calc-1", working_diff(repo, {CODE_FILE: loud}), "printed")
    [report] = evaluation.run(instances, [printed])
    assert not report.resolved and not report.fix.run.report_missing
    assert report.fix.FAIL_TO_PASS.failure == ["tests/test_calc.py::test_spaces"]
    assert report.fix.run.unconfirmed == ["tests/test_calc.py::test_spaces"]


def test_fuzzy_and_already_applied_patches(make_repo, tmp_path: Path) -> None:
    repo, instances = build_instances(make_repo)
    calc1 = instances["fixture__calc-1"]
    evaluation = evaluator(repo, tmp_path, "fix")
    # Context that no longer matches exactly, and no index line: only `patch --fuzz` copes.
    fuzzy = "\n".join(line for line in calc1.patch.splitlines() if not line.startswith("index "))
    fuzzy = fuzzy.replace(" def parse(text):", " def parse(txt):") + "\n"
    [report] = evaluation.run(instances, [prediction("fixture__calc-1", fuzzy, "fuzzy")])
    assert report.apply.method == "patch --fuzz"
    assert report.resolved
    # A prediction that also contains the gold test patch: the test files are reset first.
    both = prediction("fixture__calc-1", calc1.patch + calc1.test_patch, "both")
    [report] = evaluation.run(instances, [both])
    assert report.resolved and report.fix.test_patch_applied


def test_already_applied_patch_is_detected(make_repo, tmp_path: Path) -> None:
    from benchsmith.harness.worktree import Worktree
    from benchsmith.sandbox import LocalSandboxConfig, make_sandbox

    repo, instances = build_instances(make_repo)
    with make_sandbox(LocalSandboxConfig()) as sandbox:
        sandbox.upload(repo, sandbox.workdir)
        worktree = Worktree(sandbox)
        patch = instances["fixture__calc-1"].patch
        assert worktree.apply("first", patch).method == "git apply"
        again = worktree.apply("again", patch)
        assert again.applied and again.method == "already applied"
        worktree.reset()
        assert sandbox.read_file("src/calc/__init__.py").decode() == CODE


def test_a_patch_applied_over_restored_paths_starts_from_them(make_repo, tmp_path: Path) -> None:
    """The gold test patch is applied in the command that puts the test files back: when it
    needs another method, or applies with none, the state it starts from is the restored one."""
    from benchsmith.harness.worktree import Worktree
    from benchsmith.sandbox import LocalSandboxConfig, make_sandbox

    from .evaluation_fixture import PARSE_TEST, TEST_FILE, TESTS

    repo, instances = build_instances(make_repo)
    calc1 = instances["fixture__calc-1"]
    # the prediction changes the test file too; the gold test patch's context no longer
    # matches exactly, and it has no index line: only `patch --fuzz` applies it
    hostile = working_diff(repo, {CODE_FILE: PARSE_FIXED, TEST_FILE: TESTS + "\nX = 1\n"})
    fuzzy = "\n".join(line for line in calc1.test_patch.splitlines()
                      if not line.startswith("index "))
    fuzzy = fuzzy.replace(" def test_total():", " def test_totals():") + "\n"
    with make_sandbox(LocalSandboxConfig()) as sandbox:
        sandbox.upload(repo, sandbox.workdir)
        worktree = Worktree(sandbox)
        worktree.stage({"model": hostile, "gold_test": fuzzy})
        assert worktree.apply("model", hostile).method == "git apply"
        applied = worktree.apply("gold_test", fuzzy, restoring=[TEST_FILE])
        assert applied.method == "patch --fuzz", applied
        assert sandbox.read_file(TEST_FILE).decode() == PARSE_TEST
        assert sandbox.read_file(CODE_FILE).decode() == PARSE_FIXED
        worktree.reset()
        assert worktree.apply("model", hostile).applied
        failed = worktree.apply("gold_test", "--- a/nothing.py\n+++ b/nothing.py\n@@ -1 +1 @@\n-a\n+b\n",
                                restoring=[TEST_FILE])
        assert not failed.applied and failed.tried == ["git apply", "git apply --3way", "patch --fuzz"]
        assert sandbox.read_file(TEST_FILE).decode() == TESTS  # put back, nothing applied
        assert sandbox.read_file(CODE_FILE).decode() == PARSE_FIXED
        worktree.reset()
        assert sandbox.read_file(TEST_FILE).decode() == TESTS
        assert sandbox.read_file(CODE_FILE).decode() == CODE


def test_rerun_reuses_reports_only_for_unchanged_predictions(make_repo, tmp_path: Path) -> None:
    repo, instances = build_instances(make_repo)
    evaluation = evaluator(repo, tmp_path, "fix", run_id="again")
    calc1 = instances["fixture__calc-1"]
    [first] = evaluation.run(instances, [prediction(calc1.instance_id, calc1.patch)])
    report_file = tmp_path / "runs/again/model/fixture__calc-1/report.json"
    written = report_file.stat().st_mtime_ns
    [second] = evaluation.run(instances, [prediction(calc1.instance_id, calc1.patch)])
    assert second == first and report_file.stat().st_mtime_ns == written
    [third] = evaluation.run(instances, [prediction(calc1.instance_id, "")])
    assert not third.resolved and report_file.stat().st_mtime_ns != written
    [summary] = write_summary(tmp_path / "runs/again")
    assert summary.evaluated == 1 and summary.resolved == 0


def test_infrastructure_failures_are_reported_apart(make_repo, tmp_path: Path) -> None:
    repo, instances = build_instances(make_repo)
    calc1 = instances["fixture__calc-1"]
    no_runner = {calc1.instance_id: calc1.model_copy(update={"test": ["no-such-test-runner -q"]})}
    lying = {calc1.instance_id: calc1.model_copy(update={
        "test": ["python -m pytest -rA -v -p no:cacheprovider tests/test_calc.py; exit 0"]})}
    evaluation = evaluator(repo, tmp_path, "fix")
    [report] = evaluation.run(no_runner, [prediction(calc1.instance_id, calc1.patch)])
    assert report.infrastructure_failure and not report.resolved
    assert "did not run" in report.infrastructure_reason
    [report] = evaluation.run(lying, [prediction(calc1.instance_id, "", "x")])
    assert not report.infrastructure_failure  # the empty patch never reaches the tests
    breaks = working_diff(repo, {CODE_FILE: BREAKS_TOTAL})
    [report] = evaluation.run(lying, [prediction(calc1.instance_id, breaks, "y")])
    assert report.infrastructure_failure
    assert "exit status 0 but 1 test(s) failed" in report.infrastructure_reason
    [summary] = summarize([report])
    assert summary.infrastructure_failures == 1 and summary.ids == {
        "INFRASTRUCTURE FAILURE": ["fixture__calc-1"]}


def test_a_graded_test_that_hung_once_gets_a_run_of_its_own(make_repo, tmp_path: Path) -> None:
    """A slow test on a loaded machine hangs past the stall limit once: the labels' tests that
    hung run again alone with twice the limit, and that run grades them (the published
    harness has no stall limit)."""
    from .evaluation_fixture import PARSE_TEST, TEST_FILE, TESTS

    repo, instances = build_instances(make_repo)
    marker = tmp_path / "hung-once"
    slow_once = PARSE_TEST.replace("from calc import parse, total\n", (
        "import os, time\n\nfrom calc import parse, total\n")).replace(
        "def test_total():\n", "def test_total():\n"
        f"    if not os.path.exists({str(marker)!r}):\n"
        f"        open({str(marker)!r}, 'w').close()\n        time.sleep(600)\n")
    assert slow_once != PARSE_TEST
    instance = instances["fixture__calc-1"].model_copy(update={
        "test_patch": working_diff(repo, {TEST_FILE: slow_once})})
    assert TESTS in (repo / TEST_FILE).read_text()
    evaluation = evaluator(repo, tmp_path, "fix")
    evaluation.options.stall_timeout_s = 8
    [report] = evaluation.run({instance.instance_id: instance},
                              [prediction(instance.instance_id, instance.patch, "gold")])
    assert marker.exists()  # it did hang the first time
    assert report.resolved, report.fix
    assert report.fix is not None and report.fix.run is not None and report.fix.run.hung == []
    assert (tmp_path / "runs/run/gold/fixture__calc-1/test_output.hung.txt").exists()
