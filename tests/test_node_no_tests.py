"""A test command that exits 0 having run no test: mocha started from a config file without
`spec` finds none of the project's tests (they lie in nested directories its default skips),
while the test script runs them through a task of its own. The diagnosis says no tests ran,
and the repair runs the task command as it is, once."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from pathlib import Path

import pytest

from benchsmith.core import ExecResult, Plan
from benchsmith.setup.node.context import read_node_context
from benchsmith.setup.node.diagnose import diagnose_node
from benchsmith.setup.node.ecosystem import NodeEcosystem
from benchsmith.setup.node.repair import NodeRepairer

from .conftest import RepoBuilder
from .test_node_setup import DATE, _repo, _setup, _tests

# the helper .mocharc.yml requires: mocha's default spec (./test/*.{js,cjs,mjs}) loads it and
# finds no test in it
SETUP = "global.same = require('assert').strictEqual;\n"
SPEC = """describe('{name}', () => {{
  it('adds', () => {{ same(1 + 2, 3); }});
  it('joins', () => {{ same(['a', 'b'].join(''), 'ab'); }});
}});
"""
# the project's own task: mocha over the nested spec files
RUN_TESTS = """const { spawnSync } = require('child_process');
const mocha = require.resolve('mocha/bin/mocha.js');
const run = spawnSync(process.execPath, [mocha, 'test/**/*.spec.js'], { stdio: 'inherit' });
process.exit(run.status === null ? 1 : run.status);
"""
MOCHARC = "require: test/setup.js\nui: bdd\ntimeout: 5000\n"


def _checkout(root: Path) -> RepoBuilder:
    repo = _repo(root, {"name": "nested", "version": "1.0.0",
                        "scripts": {"test": "node scripts/run-tests.js"},
                        "devDependencies": {"mocha": "10.2.0"}},
                 {".mocharc.yml": MOCHARC, "test/setup.js": SETUP,
                  "test/unit/math.spec.js": SPEC.format(name="math"),
                  "test/integration/text.spec.js": SPEC.format(name="text"),
                  "scripts/run-tests.js": RUN_TESTS})
    repo.commit({}, "initial", date=DATE)
    return repo


def _plan(repo: Path) -> Plan:
    ecosystem = NodeEcosystem()
    return ecosystem.plans(ecosystem.context(repo), dt.date(2023, 5, 1),
                           {"3.11": "3.11"}, DATE, None)[0][1]


def _no_output(command: str = "mocha") -> ExecResult:
    return ExecResult(command=command, returncode=0, output="", duration_s=0.4)


def test_a_test_command_that_exits_0_without_results_ran_no_tests() -> None:
    diagnosis = diagnose_node(_no_output(), "test")
    assert (diagnosis.kind, diagnosis.reason) == ("no_tests", "the test command ran no tests")
    assert diagnosis.evidence == "no output"
    # a failing run, an install and a cause the output names are diagnosed as before
    assert diagnose_node(ExecResult(command="mocha", returncode=1, output=""), "test").kind \
        == "tests_failing"
    assert diagnose_node(ExecResult(command="npm ci", returncode=0, output=""), "install").kind \
        != "no_tests"
    named = ExecResult(command="mocha", returncode=0,
                       output="ReferenceError: structuredClone is not defined\n")
    assert diagnose_node(named, "test").kind == "node_version"


def test_the_task_command_replaces_a_runner_read_from_its_config_once(tmp_path: Path) -> None:
    repo = _checkout(tmp_path / "nested")
    plan = _plan(repo.path)
    assert plan.node is not None and plan.node.tests.command == ["mocha"]
    assert plan.sources["runner"] == [".mocharc.yml"]
    context = read_node_context(repo.path)
    repairer = NodeRepairer()
    diagnosis = repairer.diagnose(plan, _no_output(), "test", context)
    diagnosis.facts.setdefault("tests", ["0"])  # as the engine records it
    repaired = repairer.repair(plan, diagnosis, context)
    assert repaired is not None
    fixed, description = repaired
    assert fixed.node is not None and fixed.node.tests.runner == "script"
    assert fixed.node.tests.command == ["node", "scripts/run-tests.js"]
    assert "ran no tests" in description and fixed.sources["runner"][0] == "scripts.test"
    assert any("mocha from .mocharc.yml ran no tests" in note for note in fixed.notes)
    # once: the runner no longer comes from a config file
    assert repairer.repair(fixed, diagnosis, context) is None
    # another commit's plan made from this one runs the task command there too
    adapted = NodeEcosystem().adapt(fixed, context, dt.date(2023, 5, 1), {"3.11": "3.11"})
    assert adapted.node is not None and adapted.node.tests.runner == "script"
    assert NodeEcosystem().adapt(plan, context, dt.date(2023, 5, 1), {"3.11": "3.11"}
                                 ).node.tests.runner == "mocha"  # type: ignore[union-attr]
    # tests that were reported are not this case
    reported = diagnosis.model_copy(update={"facts": {**diagnosis.facts, "tests": ["4"]}})
    assert repairer.repair(plan, reported, context) is None
    # nor a test script that starts a runner itself (one in a browser, the config's in Node)
    browser = context.model_copy(update={"scripts": {"test": "karma start --single-run"}})
    assert repairer.repair(plan, diagnosis, browser) is None
    # unless its Node side is a script of commands no rule reads (a runner testing itself):
    # those run one after the other, their NODE_OPTIONS added to the reporting hook's
    own = {"test": "run-s lint test-node test-browser", "lint": "eslint .",
           "test-node": "run-s test-node:*", "test-node:unit": "node bin/mocha.js test/unit",
           "test-node:api": "NODE_OPTIONS=--enable-source-maps node test/api.js",
           "test-browser": "karma start --single-run"}
    sided = repairer.repair(plan, diagnosis, context.model_copy(update={"scripts": own}))
    assert sided is not None and sided[0].node is not None
    assert sided[0].node.tests.runner == "script"
    assert sided[0].sources["runner"][0] == "scripts.test-node"
    line = sided[0].node.tests.command[-1]
    assert "node bin/mocha.js test/unit; } || rc=1" in line and "eslint" not in line
    shown = subprocess.run(["sh", "-c", line.replace("node test/api.js", "node -e "
                            "'console.log(process.env.NODE_OPTIONS)'").replace(
                            "node bin/mocha.js test/unit", "true")],
                           env={**os.environ, "NODE_OPTIONS": "--no-warnings"},
                           capture_output=True, text=True, timeout=60)
    assert shown.stdout.strip() == "--no-warnings --enable-source-maps", shown.stderr


@pytest.mark.slow
def test_setup_runs_the_scripts_own_task_when_the_config_finds_no_tests(
        tmp_path: Path, shared_node: None) -> None:
    repo = _checkout(tmp_path / "nested")
    record = _setup(repo.path, tmp_path / "setup.json")
    assert record["node"]["tests"]["runner"] == "script"
    assert _tests(record) == {
        "test/unit/math.spec.js::math > adds": "PASSED",
        "test/unit/math.spec.js::math > joins": "PASSED",
        "test/integration/text.spec.js::text > adds": "PASSED",
        "test/integration/text.spec.js::text > joins": "PASSED"}
    first = record["iterations"][0]
    assert (first["diagnosis"]["kind"], first["diagnosis"]["reason"]) == (
        "no_tests", "the test command ran no tests")
    assert first["repair"] == ("run scripts.test's task command `node scripts/run-tests.js` as it "
                               "is (mocha from .mocharc.yml ran no tests)")
    assert record["sources"]["runner"] == ["scripts.test", "repair: mocha from .mocharc.yml ran "
                                           "no tests"]
