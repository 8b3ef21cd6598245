"""Which runner a package.json and its files name, and the command rendered for it."""

from __future__ import annotations

from benchsmith.harness.node_render import render_test_command
from benchsmith.setup.node.runners import detect_test_runner


def _spec(scripts: dict[str, str], files: tuple[str, ...] = (), **package: object):
    spec = detect_test_runner({"scripts": scripts, **package}, list(files))
    assert spec is not None
    return spec


def test_runner_is_read_through_npm_run_chains_and_wrappers() -> None:
    spec = _spec({"test": "npm run lint && npm run build && npm run test:unit",
                  "lint": "eslint .", "build": "tsc -p .", "pretest": "rimraf coverage",
                  "test:unit": "cross-env NODE_ENV=test nyc --reporter lcov mocha --watch -R spec test/"})
    assert (spec.runner, spec.command, spec.args) == ("mocha", ["mocha"], ["test/"])
    assert spec.env == {"NODE_ENV": "test"}
    assert spec.build_steps == ["tsc -p ."]
    assert spec.sources == ["scripts.test:unit"]


def test_each_runner_is_recognised_in_its_script() -> None:
    cases = {"jest --ci": "jest", "react-scripts test --env=jsdom": "jest", "vitest run": "vitest",
             "c8 ava": "ava", "tap test/*.js": "tap", "tape test/*.js | tap-spec": "tape",
             "node --test": "node", "jasmine": "jasmine", "uvu tests": "uvu",
             "karma start --single-run": "karma", "playwright test": "playwright",
             "wtr": "web-test-runner", "run-s build 'test:*'": "jest"}
    for script, runner in cases.items():
        scripts = {"test": script, "test:all": "jest", "build": "tsc"}
        assert _spec(scripts).runner == runner, script


def test_config_files_then_dependencies_decide_without_a_test_script() -> None:
    default = {"test": 'echo "Error: no test specified" && exit 1'}
    assert _spec(default, ("src/a.js", "vitest.config.ts")).runner == "vitest"
    assert _spec({}, (".mocharc.yml",)).runner == "mocha"
    assert _spec({}, (), devDependencies={"tape": "^5"}).runner == "tape"
    assert detect_test_runner({"scripts": default}, ["index.js"]) is None


def test_browser_runners_are_flagged_with_what_they_need() -> None:
    karma = _spec({"test": "karma start karma.conf.js"}, ("karma.conf.js",))
    assert karma.browser and karma.browser_runnable and karma.apt_packages == ["chromium"]
    assert karma.browser_env == {"CHROME_BIN": "/usr/bin/chromium"}
    playwright = _spec({}, ("playwright.config.ts",), devDependencies={"@playwright/test": "1"})
    assert playwright.browser and not playwright.browser_runnable
    assert not _spec({"test": "jest"}).browser


def test_typescript_output_needs_a_build_first() -> None:
    tsconfig = '{"compilerOptions": {"outDir": "lib", /* built */}, }'
    spec = detect_test_runner({"scripts": {"test": "mocha lib/test"}, "devDependencies": {
        "typescript": "5"}}, ["tsconfig.json", "test/a.ts"], lambda path: tsconfig)
    assert spec is not None and spec.typescript and spec.build_steps == ["tsc -p tsconfig.json"]


def test_rendered_commands_write_reports_outside_the_checkout_and_focus_files() -> None:
    jest = render_test_command(_spec({"test": "jest src --watch"}), ["src/a.test.js"])
    assert jest.report_file and jest.report_format == "jest-json"
    assert jest.command.endswith('jest --ci --watchAll=false --json '
                                 '--outputFile="$BENCHSMITH_REPORT" --runTestsByPath src/a.test.js')
    vitest = render_test_command(_spec({"test": "vitest --reporter=dot"}), ["t/a.test.ts"])
    assert vitest.command.endswith('vitest run --reporter=json --outputFile="$BENCHSMITH_REPORT" '
                                   "t/a.test.ts")
    mocha = render_test_command(_spec({"test": "mocha -t 500 test"}), [])
    assert 'mocha -t 500 test --reporter "$BENCHSMITH_REPORT.reporter.cjs"' in mocha.command
    assert "> \"$BENCHSMITH_REPORT.reporter.cjs\"" in mocha.command and mocha.report_file
    node = render_test_command(_spec({"test": "node --test"}, ("a.test.js", "b.js")), ["x.test.js"])
    assert "for f in x.test.js;" in node.command and "--test-reporter=tap" in node.command
    assert not node.report_file and node.report_format == "tap-files"
