"""Test scripts benchsmith reads past their wrappers, task runners, browser runners and checks."""

from __future__ import annotations

from benchsmith.harness.node_render import render_test_command
from benchsmith.parsing.node_reports import parse_node_report
from benchsmith.setup.node.runners import detect_test_runner
from benchsmith.setup.node.scripts import expand
from benchsmith.setup.node.workspaces import workspace_packages, workspace_tests

MAKEFILE = """REPORTER = dot
TESTS ?= test/*.js
all: test
test: lint
\t@NODE_ENV=test ./node_modules/.bin/mocha --reporter $(REPORTER) $(TESTS)
lint:
\t-eslint .
.PHONY: test lint
"""


def _spec(scripts: dict[str, str], files: tuple[str, ...] = (), read: dict[str, str] | None = None,
          **package: object):
    texts = read or {}
    spec = detect_test_runner({"scripts": scripts, **package}, list(files), texts.get)
    assert spec is not None
    return spec


def test_coverage_wrappers_give_way_to_the_runner_they_start() -> None:
    cases = {"istanbul cover _mocha -- -R spec test.js": ["test.js"],
             "nyc --reporter=lcov --reporter text mocha test/": ["test/"],
             "c8 --check-coverage --reporter=html mocha test/": ["test/"],
             "node --experimental-modules node_modules/c8/bin/c8 --reporter=html node "
             "--experimental-modules node_modules/mocha/bin/mocha test/": ["test/"]}
    for script, args in cases.items():
        spec = _spec({"test": script})
        assert (spec.runner, spec.args) == ("mocha", args), script


def test_package_manager_options_and_run_all_chains_are_followed() -> None:
    for test in ("npm run --silent unit", "npm run -s unit", "npm -s run unit", "yarn unit",
                 "yarn run unit", "pnpm unit", "pnpm run unit", "run-s lint unit",
                 "npm-run-all --serial lint unit"):
        spec = _spec({"test": test, "unit": "jest --coverage src", "lint": "eslint ."})
        assert (spec.runner, spec.args, spec.sources) == ("jest", ["src"], ["scripts.unit"]), test


def test_commands_run_side_by_side_are_each_read() -> None:
    scripts = {"readme": "evalmd README.md", "lint": "eslint lib", "unit": "mocha test/unit"}
    for test in ("parallelshell 'npm run readme' 'npm run lint' 'npm run unit'",
                 'concurrently -k -n docs,lint,unit "npm:readme" "npm:lint" "npm run unit"',
                 "concurrently --names=a,b --prefix name 'eslint lib' 'mocha test/unit'"):
        spec = _spec({"test": test, **scripts})
        assert (spec.runner, spec.args) == ("mocha", ["test/unit"]), test
        assert "eslint lib" in spec.checks and not spec.build_steps, test


def test_bail_options_are_dropped_so_every_test_reports() -> None:
    cases = {"mocha --bail test/": ("mocha", ["test/"]), "mocha -b --exit": ("mocha", ["--exit"]),
             "jest --bail 1 src": ("jest", ["src"]), "jest --bail=2": ("jest", []),
             "vitest run --bail 1": ("vitest", []), "ava --fail-fast": ("ava", []),
             "tap --bail test/*.js": ("tap", ["test/*.js"])}
    for script, expected in cases.items():
        spec = _spec({"test": script})
        assert (spec.runner, spec.args) == expected, script


def test_type_checks_and_linters_are_recorded_as_checks_not_run() -> None:
    spec = _spec({"test": "tsc --noEmit && prettier --check . && vitest run && tsd",
                  "build": "tsc -p ."})
    assert spec.runner == "vitest" and spec.build_steps == []
    assert spec.checks == ["tsc --noEmit", "prettier --check .", "tsd"]
    assert any("`tsc --noEmit`" in note for note in spec.notes)
    built = _spec({"test": "tsc -p . && vitest run"})
    assert built.build_steps == ["tsc -p ."] and built.checks == []


def test_browser_runner_gives_way_to_the_node_side_runner() -> None:
    debug = _spec({"test": "npm run test:browser && npm run test:node",
                   "test:node": "istanbul cover _mocha -- test.js",
                   "test:browser": "karma start --single-run"}, ("karma.conf.js", "test.js"))
    assert (debug.runner, debug.args, debug.browser) == ("mocha", ["test.js"], False)
    assert debug.apt_packages == []
    named = _spec({"test": "karma start", "test-node": "jest"}, ("karma.conf.js",))
    assert (named.runner, named.sources) == ("jest", ["scripts.test-node"])
    configured = _spec({"test": "karma start config/karma.js"}, ("config/karma.js", "jest.config.js"))
    assert (configured.runner, configured.sources) == ("jest", ["jest.config.js"])
    only = _spec({"test": "karma start config/karma.js"}, ("config/karma.js",),
                 devDependencies={"mocha": "10", "karma": "6"})
    assert only.runner == "karma" and only.browser
    # a runner testing itself (its own bin, read by no rule) before the browser run: the Node
    # side comes from its config, and of the steps before karma only the builds stay
    own = _spec({"test": "run-s lint test-node test-browser", "lint": "eslint .",
                 "test-node": "node bin/mocha.js test/unit", "build": "rollup -c",
                 "test-browser": "run-s build test-browser-run",
                 "test-browser-run": "karma start --single-run"}, ("karma.conf.js", ".mocharc.yml"))
    assert (own.runner, own.sources, own.build_steps) == ("mocha", [".mocharc.yml"], ["rollup -c"])


def test_make_recipes_are_read_for_the_runner_they_call() -> None:
    spec = _spec({"test": "make test"}, ("Makefile", "test/a.js"), {"Makefile": MAKEFILE})
    assert (spec.runner, spec.args, spec.env) == ("mocha", ["test/*.js"], {"NODE_ENV": "test"})
    assert spec.checks == ["eslint ."]
    assert [i.text for i in expand({"test": "make"}, "test", makefile=MAKEFILE)][-1].startswith(
        "NODE_ENV=test ./node_modules/.bin/mocha --reporter dot")


def test_task_runner_scripts_run_as_they_are_and_report_their_mocha_runs() -> None:
    spec = _spec({"test": "npm run lint && npm run test:mocha", "lint": "eslint .",
                  "test:mocha": "grunt build && grunt test"}, ("Gruntfile.js", "spec/a.js"),
                 devDependencies={"mocha": "10", "grunt": "1"})
    assert (spec.runner, spec.command, spec.build_steps) == ("script", ["grunt", "test"],
                                                            ["grunt build"])
    rendered = render_test_command(spec)
    assert rendered.report_file and rendered.report_format == "script"
    assert "NODE_OPTIONS=\"--require $BENCHSMITH_REPORT.mocha-hook.cjs" in rendered.command
    configured = _spec({"test": "nps test"}, (".mocharc.yml",))
    assert configured.runner == "mocha"


def test_node_running_a_tape_test_directory_is_tape_per_file() -> None:
    files = ("test/index.js", "test/parse.js", "lib/index.js", "build.js")
    spec = _spec({"test": "npm run --silent coverage", "coverage": "covert test"}, files,
                 devDependencies={"tape": "5", "covert": "1"})
    # node runs the directory's index.js (which requires the other files), not each file
    assert spec.runner == "tape" and spec.test_files == ["test/index.js"]
    assert _spec({"test": "covert test"}, ("test/parse.js", "test/utils.js"),
                 devDependencies={"tape": "5"}).test_files == ["test/parse.js", "test/utils.js"]
    assert _spec({"test": "node build.js && tape test/parse.js"}, files,
                 devDependencies={"tape": "5"}).args == ["test/parse.js"]


def test_uvu_files_are_selected_by_its_directory_and_pattern() -> None:
    files = ("test/a.test.js", "test/b.js", "src/c.test.js", "node_modules/x/y.test.js")
    spec = _spec({"test": "c8 pnpm unit", "unit": "uvu . .test.js$"}, files)
    assert spec.test_files == ["src/c.test.js", "test/a.test.js"]
    rendered = render_test_command(spec, ["test/a.test.js"])
    assert rendered.report_format == "uvu-files" and "for f in test/a.test.js;" in rendered.command
    assert _spec({"test": "uvu test -i b"}, files).test_files == ["test/a.test.js"]


def test_script_reports_read_hook_events_else_the_console() -> None:
    events = ('{"benchsmith":"mocha","status":"passed","file":"/r/spec/a.js","titlePath":["a","b"]}\n'
              'noise\n{"benchsmith":"mocha","status":"failed","file":"/r/spec/a.js","titlePath":["c"]}\n'
              '{"benchsmith":"uvu","status":"passed","file":"file:///r/t.test.js","suite":"","name":"x"}')
    assert {r.name: r.status.value for r in parse_node_report("script", events, "/r")} == {
        "spec/a.js::a > b": "PASSED", "spec/a.js::c": "FAILED", "t.test.js::x": "PASSED"}
    tap = "TAP version 13\n# adds\nok 1 should be equal\n# fails\nnot ok 2 nope\n"
    assert {r.name: r.status.value for r in parse_node_report("script", tap)} == {
        "adds": "PASSED", "fails": "FAILED"}


def test_workspace_globs_name_the_packages_in_their_order() -> None:
    files = ["package.json", "packages/b/package.json", "packages/a/package.json",
             "packages/a/sub/package.json", "tools/x/package.json", "packages/old/package.json",
             "packages/a/node_modules/dep/package.json"]
    assert workspace_packages(["tools/*", "packages/*", "!packages/old"], files) == [
        "tools/x", "packages/a", "packages/b"]
    assert workspace_packages(["packages/**"], files) == [
        "packages/a", "packages/a/sub", "packages/b", "packages/old"]
    texts = {"packages/a/package.json": '{"scripts": {"test": "jest"}}',
             "packages/b/package.json": '{"scripts": {"test": "echo \\"Error: no test specified\\""}}'}
    spec = workspace_tests({"workspaces": ["packages/*"]}, ["packages/*"], files, texts.get, "yarn")
    assert spec is not None and spec.runner == "script" and "for d in packages/a;" in spec.command[-1]
    assert "yarn run test" in spec.command[-1]
    # a root test script of its own comes first
    assert workspace_tests({"scripts": {"test": "jest"}}, ["packages/*"], files, texts.get,
                           "npm") is None
