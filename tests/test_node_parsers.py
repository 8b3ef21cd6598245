"""The parsers of JavaScript test reports, on reports written here in each reporter's shape."""

from __future__ import annotations

import json

import pytest

from benchsmith.core import TestStatus
from benchsmith.parsing.browsers import browser_missing
from benchsmith.parsing.node_reports import parse_node_report

P, F, S, E = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED, TestStatus.ERROR


def _statuses(report_format: str, report: str, root: str | None = "/repo") -> dict[str, TestStatus]:
    return {r.name: r.status for r in parse_node_report(report_format, report, root)}


def test_jest_and_vitest_json() -> None:
    report = {"testResults": [
        {"name": "/repo/test/a.test.js", "status": "failed", "assertionResults": [
            {"ancestorTitles": ["", "outer", "inner"], "title": "passes", "status": "passed"},
            {"ancestorTitles": ["outer"], "title": 'fails "x" > y', "status": "failed"},
            {"ancestorTitles": [], "title": "later", "status": "pending"},
            {"ancestorTitles": [], "title": "planned", "status": "todo"},
            {"ancestorTitles": [], "title": "later", "status": "failed"}]},
        {"name": "/repo/test/broken.test.js", "status": "failed", "assertionResults": [],
         "message": "SyntaxError"}]}
    assert _statuses("jest-json", json.dumps(report)) == {
        "test/a.test.js::outer > inner > passes": P, 'test/a.test.js::outer > fails "x" > y': F,
        "test/a.test.js::later": F, "test/a.test.js::planned": S, "test/broken.test.js": E}
    with pytest.raises(ValueError):
        parse_node_report("jest-json", "{}")


def test_mocha_json_from_stdout_and_from_the_file_reporter() -> None:
    stdout = "{ not the report\n" + json.dumps({
        "stats": {}, "passes": [{"title": "b", "fullTitle": "suite b", "file": "/repo/t.js"}],
        "failures": [{"title": "c", "fullTitle": "suite c", "file": "/repo/t.js", "err": {}}],
        "pending": [{"title": "d", "fullTitle": "d", "file": "/repo/u.js"}]}, indent=2) + "\nafter\n"
    assert _statuses("mocha-json", stdout) == {"t.js::suite > b": P, "u.js::d": S, "t.js::suite > c": F}
    written = json.dumps({"stats": {}, "passes": [
        {"title": "b", "fullTitle": "a x b", "titlePath": ["a x", "b"], "file": "/repo/t.js"}]})
    assert _statuses("mocha-json", written) == {"t.js::a x > b": P}


NODE_TAP = """TAP version 13
# Subtest: suite
    # Subtest: passes
    ok 1 - passes
      ---
      duration_ms: 0.5
      ...
    # Subtest: fails \\# sometimes
    not ok 2 - fails \\# sometimes
      ---
      error: |-
        ok 3 - not a result
      ...
    # Subtest: later
    ok 3 - later # SKIP
    # Subtest: planned
    not ok 4 - planned # TODO not yet
    1..4
not ok 1 - suite
  ---
  failureType: 'subtestsFailed'
  ...
# Subtest: hooked
    # Subtest: inside
    ok 1 - inside
    1..1
not ok 2 - hooked
# tests 5
"""

NODE_TAP_FILES = """TAP version 14
1..1
# Subtest: test/a.test.js
    # Subtest: group
        # Subtest: one
            ok 1 - should be equal
            1..1
        ok 1 - one # time=1ms
        # Subtest: two
            not ok 1 - should be equal
              ---
              diff: |
                -4
              ...
            1..1
        not ok 2 - two # time=2ms
        ok 3 - three # SKIP
        1..3
    not ok 1 - group
    1..1
not ok 1 - test/a.test.js # time=700ms
"""

TAPE = """# benchsmith-file: test/t.js
TAP version 13
# first
ok 1 should be equal
ok 2 fine
# second "quoted"
not ok 3 four
  ---
    operator: equal
  ...
# SKIP third
noise printed by a test
1..3
# tests 3
# pass  2
# fail  1
"""


def test_tap_of_node_test_node_tap_and_tape() -> None:
    assert _statuses("tap-files", "# benchsmith-file: /repo/t.test.js\n" + NODE_TAP) == {
        "t.test.js::suite > passes": P, "t.test.js::suite > fails # sometimes": F,
        "t.test.js::suite > later": S, "t.test.js::suite > planned": S,
        "t.test.js::hooked > inside": P, "t.test.js::hooked": F}
    assert _statuses("tap", NODE_TAP_FILES) == {
        "test/a.test.js::group > one": P, "test/a.test.js::group > two": F,
        "test/a.test.js::group > three": S}
    assert _statuses("tap-files", TAPE) == {"test/t.js::first": P,
                                            'test/t.js::second "quoted"': F, "test/t.js::third": S}


# ava 3's --tap output: its t.log lines are comments after the result, indented
AVA = """TAP version 13
ok 1 - skipped # SKIP
ok 2 - adds
not ok 3 - fails # hash
#   a log line
  ---
    name: AssertionError
    assertion: is
    at: 'test.js:3:52'
  ...
ok 4 - logs
#   hello

1..4
# tests 4
# pass 2
# skip 1
# fail 1
"""


def test_tap_of_ava_with_logged_lines() -> None:
    # an unescaped "#" starts a comment, as TAP has it (node-tap: "# time=3ms")
    assert _statuses("tap", AVA) == {"skipped": S, "adds": P, "fails": F, "logs": P}
    # ava's own format: a failed hook is a comment before its test's result, not a title
    hooked = ("TAP version 13\nok 1 - main › adds\n"
              "# browser › beforeEach hook for chromium - loads\n"
              "not ok 2 - browser › chromium - loads\n  ---\n    name: Error\n  ...\n"
              "ok 3 - main › logs\n#   hello\n1..3\n# tests 3\n# pass 2\n# fail 1\n")
    assert _statuses("tap-flat", AVA + hooked) == {
        "skipped": S, "adds": P, "fails": F, "logs": P, "main › adds": P,
        "browser › chromium - loads": F, "main › logs": P}


def test_junit_of_vitest_and_node() -> None:
    vitest = """<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests"><testsuite name="test/a.test.ts" tests="3">
<testcase classname="test/a.test.ts" name="outer &gt; inner &gt; passes"/>
<testcase classname="test/a.test.ts" name="outer &gt; fails"><failure message="no"/></testcase>
<testcase classname="test/a.test.ts" name="later"><skipped/></testcase>
</testsuite></testsuites>"""
    assert _statuses("junit", vitest) == {"test/a.test.ts::outer > inner > passes": P,
                                          "test/a.test.ts::outer > fails": F,
                                          "test/a.test.ts::later": S}
    node = """<testsuites><testsuite name="outer"><testsuite name="inner">
<testcase name="passes" classname="test"/></testsuite>
<testcase name="errs" classname="test"><error message="x"/></testcase></testsuite></testsuites>"""
    assert _statuses("junit", node) == {"outer > inner > passes": P, "outer > errs": E}


def test_console_fallback_of_jest_and_mocha() -> None:
    jest = """PASS test/a.test.js
  outer
    \u2713 passes (3 ms)
    \u2715 fails (1 ms)
    \u25cb skipped later

  \u25cf outer \u203a fails

    - Expected
Tests:       1 failed, 1 skipped, 1 passed, 3 total
"""
    assert _statuses("console", jest) == {"test/a.test.js::outer > passes": P,
                                          "test/a.test.js::outer > fails": F,
                                          "test/a.test.js::outer > later": S}
    mocha = """
  suite
printed at the margin
    \u2714 passes
    1) fails
    - later

  2 passing (5ms)
  1 failing

  1) suite
       fails:
"""
    assert _statuses("console", mocha) == {"suite > passes": P, "suite > fails": F,
                                           "suite > later": S}
    with pytest.raises(ValueError):
        parse_node_report("xml", "")


def test_tests_failing_on_a_browser_that_is_not_installed_are_named() -> None:
    launch = ("browserType.launch: Executable doesn't exist at /root/.cache/ms-playwright/"
              "chromium_headless_shell-1255/chrome-headless-shell")
    tap = ("TAP version 13\nok 1 - main › adds\n# browser › beforeEach hook for chromium - loads\n"
           f"not ok 2 - browser › chromium - loads\n  ---\n    message: `{launch}`\n  ...\n"
           "not ok 3 - main › fails\n  ---\n    message: no\n  ...\n1..3\n")
    assert browser_missing("tap-flat", tap) == ["browser › chromium - loads"]
    jest = json.dumps({"testResults": [{"name": "/repo/test/ui.test.js", "assertionResults": [
        {"status": "failed", "title": "renders", "ancestorTitles": ["ui"],
         "failureMessages": ["Error: Could not find Chrome (ver. 121.0.6167.85)"]},
        {"status": "failed", "title": "counts", "ancestorTitles": ["ui"],
         "failureMessages": ["AssertionError: 1 == 2"]}]}]})
    assert browser_missing("jest-json", jest, "/repo") == ["test/ui.test.js::ui > renders"]
    mocha = json.dumps({"stats": {}, "failures": [
        {"title": "opens", "titlePath": ["page", "opens"], "file": "/repo/test/page.js",
         "err": {"message": launch}},
        {"title": "closes", "titlePath": ["page", "closes"], "file": "/repo/test/page.js",
         "err": {"message": "timeout"}}]})
    assert browser_missing("mocha-json", mocha, "/repo") == ["test/page.js::page > opens"]
    assert browser_missing("tap-flat", "not ok 1 - plain failure\n") == []
