"""A test file whose test crashes the runner (node dies on an uncaught exception after the test
finished): the file is left out once and the rest of the suite is judged; when nothing else
is left to run, the failure names the file and the error."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsmith.core import ExecResult, Plan
from benchsmith.harness.node_render import render_test_command
from benchsmith.setup.node.context import read_node_context
from benchsmith.setup.node.diagnose import diagnose_node
from benchsmith.setup.node.repair import NodeRepairer

from .conftest import RepoBuilder
from .test_node_setup import DATE, _repo, _setup, _tests

PASSING = """const assert = require('assert');
describe('{name}', () => {{
  it('adds', () => {{ assert.strictEqual(1 + 2, 3); }});
  it('multiplies', () => {{ assert.strictEqual(2 * 3, 6); }});
}});
"""
# the first throw, right after done(), fails a test that had passed and makes mocha stop the
# run; the second, with the run stopped, mocha rethrows and node dies of it
CRASHING = """describe('rolling', () => {
  it('rolls the file over', (done) => {
    setTimeout(() => { done(); console.log('rolled.log'.match(/^\\d+/)[0]); }, 5);
    setTimeout(() => { console.log('rolled.log'.match(/^\\d+/)[0]); }, 60);
  });
  it('keeps the tail', () => {});
});
"""
# what node 14 prints when mocha's handler rethrows (paths in a sandbox's checkout)
FATAL = """
/tmp/benchsmith-1-abc/repo/node_modules/mocha/lib/runner.js:962
    throw err;
    ^

TypeError: Cannot read property '0' of null
    at Timeout._onTimeout (/tmp/benchsmith-1-abc/repo/test/rolling.test.js:3:61)
    at listOnTimeout (internal/timers.js:554:17)
    at processTimers (internal/timers.js:497:7)
"""
MOCHA = {"runner": "mocha", "command": ["mocha"], "args": ["test/*.test.js"],
         "report_format": "mocha-json"}


def _checkout(root: Path, files: dict[str, str]) -> RepoBuilder:
    repo = _repo(root, {"name": "rolling", "version": "1.0.0",
                        "scripts": {"test": "mocha 'test/*.test.js'"},
                        "devDependencies": {"mocha": "8.4.0"}}, files)
    repo.commit({}, "initial", date=DATE)
    return repo


def _plan(tests: dict[str, object]) -> Plan:
    return Plan(ecosystem="node", runner="node", python="3.11", exclude_newer=DATE,
                node={"version": "18.16.0", "tests": tests})


def test_a_crashing_test_file_is_left_out_once_and_a_dependency_is_not_blamed(tmp_path: Path) -> None:
    repo = _checkout(tmp_path / "rolling", {"test/a.test.js": PASSING.format(name="a"),
                                            "test/rolling.test.js": CRASHING})
    context = read_node_context(repo.path)
    diagnosis = diagnose_node(ExecResult(command="mocha", returncode=7, output=FATAL,
                                         duration_s=1.0), "test", context)
    assert diagnosis.kind == "test_file_crashed"
    assert diagnosis.reason == ("a test in test/rolling.test.js crashed the runner: "
                                "TypeError: Cannot read property '0' of null")
    repaired = NodeRepairer().repair(_plan(MOCHA), diagnosis, context)
    assert repaired is not None
    plan, what = repaired
    assert plan.node is not None and plan.node.tests.crashed == ["test/rolling.test.js"]
    assert what.startswith("leave out test/rolling.test.js") and "left out" in plan.notes[-1]
    command = render_test_command(plan.node.tests).command
    assert "--exclude test/rolling.test.js --exclude ./test/rolling.test.js" in command
    # given test files run as given; a second crash of the same file is not left out again
    assert "--exclude" not in render_test_command(plan.node.tests, ["test/rolling.test.js"]).command
    assert NodeRepairer().repair(plan, diagnosis, context) is None
    # a stack that names no test file of the checkout (a dependency threw) blames none
    inside = FATAL.replace("/repo/test/rolling.test.js", "/repo/node_modules/tail/index.js")
    assert diagnose_node(ExecResult(command="mocha", returncode=7, output=inside, duration_s=1.0),
                         "test", context).kind == "tests_failing"


def test_other_runners_leave_the_file_out_their_way(tmp_path: Path) -> None:
    repo = _checkout(tmp_path / "rolling", {"test/a.test.js": PASSING.format(name="a"),
                                            "test/rolling.test.js": CRASHING})
    context = read_node_context(repo.path)
    diagnosis = diagnose_node(ExecResult(command="t", returncode=1, output=FATAL, duration_s=1.0),
                              "test", context)
    jest = NodeRepairer().repair(_plan({"runner": "jest", "command": ["jest"],
                                        "report_format": "jest-json"}), diagnosis, context)
    assert jest is not None and jest[0].node is not None
    assert ("--testPathIgnorePatterns=/node_modules/ '--testPathIgnorePatterns=/test/rolling\\.test"
            "\\.js$'" in render_test_command(jest[0].node.tests).command)
    tape = NodeRepairer().repair(_plan({"runner": "tape", "command": ["tape"],
                                        "report_format": "tap-files",
                                        "test_files": ["test/a.test.js", "test/rolling.test.js"]}),
                                 diagnosis, context)
    assert tape is not None and tape[0].node is not None
    assert "for f in test/a.test.js;" in render_test_command(tape[0].node.tests).command
    # a mocha before 5.1 (no --exclude) and a runner that cannot leave a file out keep the
    # diagnosis as the failure
    old_mocha = context.model_copy(update={"dev_dependencies": {"mocha": "~5.0.5"}})
    assert NodeRepairer().repair(_plan(MOCHA), diagnosis, old_mocha) is None
    assert NodeRepairer().repair(_plan({"runner": "ava", "command": ["ava"],
                                        "report_format": "tap"}), diagnosis, context) is None


def test_a_crash_in_the_only_test_file_stays_a_failure_naming_it(tmp_path: Path) -> None:
    repo = _checkout(tmp_path / "rolling", {"test/rolling.test.js": CRASHING})
    context = read_node_context(repo.path)
    diagnosis = diagnose_node(ExecResult(command="mocha", returncode=7, output=FATAL,
                                         duration_s=1.0), "test", context)
    assert NodeRepairer().repair(_plan(MOCHA), diagnosis, context) is None
    assert diagnosis.reason == ("a test in test/rolling.test.js crashed the runner: TypeError: "
                                "Cannot read property '0' of null (no other test file to run "
                                "without it)")


@pytest.mark.slow
def test_setup_validates_the_suite_without_the_file_that_crashed_mocha(tmp_path: Path,
                                                                        shared_node: None) -> None:
    repo = _checkout(tmp_path / "rolling", {"test/a.test.js": PASSING.format(name="a"),
                                            "test/rolling.test.js": CRASHING,
                                            "test/z.test.js": PASSING.format(name="z")})
    record = _setup(repo.path, tmp_path / "setup.json")
    assert record["crashed"] == ["test/rolling.test.js"]
    assert record["node"]["tests"]["crashed"] == ["test/rolling.test.js"]
    first = record["iterations"][0]["diagnosis"]
    assert first["kind"] == "test_file_crashed" and "test/rolling.test.js" in first["reason"]
    assert any(note.startswith("left out test/rolling.test.js") for note in record["plan"]["notes"])
    assert _tests(record) == {f"test/{n}.test.js::{n} > {t}": "PASSED"
                              for n in ("a", "z") for t in ("adds", "multiplies")}
