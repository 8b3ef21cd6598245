"""Projects whose tests run with their own scripts: a `tests/runtests.py` in Django's shape
(settings, one process, verbosity 2, labels from the test files) and a `bin/test` driving the
package's own runner (no cache, verbose, a fixed seed), each chosen from what the repository
contains, read per test, and used by setup, `prepare` and `evaluate` (published names matched
by the producers' rules)."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest

from benchsmith.core import ExecResult, TestStatus
from benchsmith.harness.names import match, status_of
from benchsmith.harness.render import plan_spec, render, render_spec
from benchsmith.parsing import network_failures, parse_test_output, running_test
from benchsmith.parsing.failure_groups import bintest_failure_groups
from benchsmith.setup.context import gather_context
from benchsmith.setup.diagnose import diagnose_tests
from benchsmith.setup.planner import RulePlanner
from benchsmith.setup.pyversion import choose_python

from .conftest import PIN_DATE
from .evaluation_fixture import published_file, working_diff
from .script_runner_fixture import (
    BIN_TEST,
    COUNT,
    COUNT_TESTS_NEW,
    RUNTESTS,
    SHELVE_FIXED,
    SHELVING_FILES,
    TALLIES_FILES,
    TALLY_FIXED,
    TITLES,
    TITLES_TESTS_NEW,
)
from .test_cli_batch import run_cli
from .test_mining_e2e import merge_pr
from .test_rules import PY
from .test_setup_engine import engine

P, F, E, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.ERROR, TestStatus.SKIPPED


def _plan(root: Path, files: dict[str, str]):  # type: ignore[no-untyped-def]
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    ctx = gather_context(root)
    return RulePlanner().plan(ctx, choose_python(ctx, date(2023, 6, 1), PY), "2023-06-01T00:00:00Z")


def test_a_runtests_script_in_djangos_shape_runs_its_labels_with_sqlite_settings(tmp_path: Path) -> None:
    plan = _plan(tmp_path / "shelving", SHELVING_FILES)
    assert plan.runner == "runtests" and plan.script is not None
    # the script defaults to a PostgreSQL settings module; the SQLite one beside it is used
    assert plan.script.settings == "test_sqlite" and plan.sources["test"] == ["tests/runtests.py"]
    assert any(n.startswith("runner runtests: tests/runtests.py declares --settings") for n in plan.notes)
    assert "pytest" not in plan.packages
    assert render(plan, apt=False)[1] == ["python tests/runtests.py --settings=test_sqlite --parallel 1 "
                                          "--verbosity 2"]
    spec = plan_spec(plan, [TITLES, "tests/titles/models.py"], services=False)
    assert spec.runner == "runtests" and spec.script == plan.script
    assert render_spec(spec) == ("python tests/runtests.py --settings=test_sqlite --parallel 1 "
                                 "--verbosity 2 titles.tests titles.models")
    # a script without --parallel (Django before 1.9) runs in one process anyway
    older = _plan(tmp_path / "older", {**SHELVING_FILES, "tests/runtests.py": RUNTESTS.replace(
        '"--parallel"', '"--jobs"')})
    assert older.runner == "runtests" and render(older, apt=False)[1] == [
        "python tests/runtests.py --settings=test_sqlite --verbosity 2"]
    # without --settings it is not the shape: the project's tests run the ordinary way
    other = _plan(tmp_path / "other", {**SHELVING_FILES, "tests/runtests.py": RUNTESTS.replace(
        '"--settings"', '"--config"')})
    assert other.runner != "runtests" and other.script is None


def test_a_bin_test_driving_the_packages_runner_runs_without_cache_with_a_fixed_seed(tmp_path: Path) -> None:
    plan = _plan(tmp_path / "tallies", TALLIES_FILES)
    assert plan.runner == "bintest" and plan.script is not None and plan.script.seed == 1
    assert "runner bintest: bin/test calls tallies.test(), the runner in tallies/testing/runtests.py" in plan.notes
    words = "PYTHONWARNINGS=ignore::UserWarning,ignore::SyntaxWarning python bin/test -C --verbose --seed 1"
    assert render(plan, apt=False)[1] == [words]
    assert render_spec(plan_spec(plan, [COUNT], services=False)) == f"{words} {COUNT}"
    # `test` imported from the runner module under utilities/, a script without --seed or -C
    older = {path.replace("testing/", "utilities/"): text for path, text in TALLIES_FILES.items()}
    older["bin/test"] = (BIN_TEST.replace("import tallies\n", "from tallies.utilities.runtests import test\n")
                         .replace("tallies.test(", "test(").replace('"--seed"', '"--order"')
                         .replace('"-C", "--no-cache", ', ""))
    plan = _plan(tmp_path / "older", older)
    assert plan.runner == "bintest" and plan.script is not None and plan.script.seed is None
    assert render(plan, apt=False)[1][0].endswith("python bin/test --verbose")
    # a script that runs another runner unless asked for the project's own is asked for it
    newer = {**TALLIES_FILES, "bin/test": BIN_TEST.replace(
        "parser.add_argument(\"tests\"", "parser.add_argument(\"-s\", \"--use-tallies-runner\", "
        "action=\"store_true\")\nparser.add_argument(\"tests\"")}
    plan = _plan(tmp_path / "newer", newer)
    assert render(plan, apt=False)[1][0].endswith("python bin/test -C --use-tallies-runner --verbose --seed 1")
    # a bin/test whose package has no runner module is not the shape
    plain = _plan(tmp_path / "plain", {p: t for p, t in TALLIES_FILES.items() if "testing/" not in p})
    assert plain.runner == "pytest" and plain.script is None


BINTEST_OUTPUT = """\
============================= test process starts ==============================
executable:         /usr/bin/python3  (3.9.18-final-0) [CPython]
random seed:        1
hash randomization: off

pkg/core/tests/test_basic.py[9]
test_ok ok
test_fails F
test_raises E
test_times_out T
test_xfail f
test_xpass X
test_skip numpy not installed s
test_slow Slow w
test_bare_skip  - s                                                       [FAIL]

pkg/core/tests/test_printing.py[3]
test_prints some output of the test
ok
test_a_function_whose_name_is_long_enough_to_wrap_the_terminal_line_of_the_runner_
ok
test_basic ok                                                                [OK]

pkg/broken/tests/test_import.py[?]   Failed to import                        [FAIL]
pkg/other/tests/test_basic.py[1]
test_basic F                                                               [FAIL]

________________________________________________________________________________
______________ pkg/core/tests/test_basic.py:test_raises ________________________
Traceback (most recent call last):
  File "/repo/pkg/core/tests/test_basic.py", line 9, in test_raises
    urlopen("https://example.org")
urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>
________________________________________________________________________________
_______________ pkg/core/tests/test_basic.py:test_fails ________________________
AssertionError
________________________________________________________________________________
________________________ pkg/broken/tests/test_import.py _______________________
ImportError: cannot import name 'gone'
________________________________________________________________________________
_______________ pkg/other/tests/test_basic.py:test_basic _______________________
AssertionError

= tests finished: 3 passed, 2 failed, 3 skipped, 1 expected to fail, 1 expected to fail but passed, 3 exceptions, in 0.40 seconds =
DO *NOT* COMMIT!
"""
BINTEST_OUTPUT = re.sub(r"(\.py\[\d+\])\n", r"\1 \n", BINTEST_OUTPUT)  # the runner ends them with a space


def test_the_bin_test_parser_reads_every_status_and_the_failure_sections() -> None:
    parsed = {t.name: t.status for t in parse_test_output(BINTEST_OUTPUT, "bintest")}
    core, printing = "pkg/core/tests/test_basic.py::", "pkg/core/tests/test_printing.py::"
    long_name = "test_a_function_whose_name_is_long_enough_to_wrap_the_terminal_line_of_the_runner_"
    assert parsed == {
        **{core + name: status for name, status in [
            ("test_ok", P), ("test_fails", F), ("test_raises", E), ("test_times_out", E),
            ("test_xfail", TestStatus.XFAIL), ("test_xpass", TestStatus.XPASS), ("test_skip", S),
            ("test_slow", S), ("test_bare_skip", S)]},
        printing + "test_prints": P, printing + long_name: P, printing + "test_basic": P,
        "pkg/broken/tests/test_import.py": E, "pkg/other/tests/test_basic.py::test_basic": F}
    assert network_failures(BINTEST_OUTPUT, "bintest") == {core + "test_raises"}
    # a run stopped inside a test names it; the producer's bare names map by function name
    assert running_test(BINTEST_OUTPUT.split("test_xfail f")[0] + "test_xfail ", "bintest") == core + "test_xfail"
    assert running_test(BINTEST_OUTPUT, "bintest") is None
    assert status_of("test_fails", parsed) == F and match("test_ok", parsed) == ([core + "test_ok"], "function name")
    assert match("test_basic", parsed)[1] == "ambiguous: function name"
    # its failures grouped by the last exception line of each section, as pytest's are
    groups = [(g.error, g.count, g.example) for g in bintest_failure_groups(BINTEST_OUTPUT)]
    assert groups == [("AssertionError", 2, core + "test_fails"),
                      ("urllib.error.URLError: <urlopen error [Errno <n>] Temporary failure in name "
                       "resolution>", 1, core + "test_raises"),
                      ("ImportError: cannot import name 'gone'", 1, "pkg/broken/tests/test_import.py")]
    failing = diagnose_tests(ExecResult(command="bin/test", returncode=1, output=BINTEST_OUTPUT,
                                        duration_s=1.0), ["pkg"], "bintest")
    assert "2 x AssertionError (e.g. " in failing.reason, failing.reason


def _prepare_and_evaluate(published: Path, mirrors: Path, tmp_path: Path, *backend: str) -> dict:  # type: ignore[type-arg]
    out = tmp_path / "prepared.jsonl"
    prepared = run_cli("prepare", str(published), "--out", str(out), "--mirrors", str(mirrors),
                       "--refdb", str(tmp_path / "ref.sqlite"), *backend)
    assert prepared.returncode == 0, prepared.stderr[-3000:]
    record: dict = json.loads(out.read_text())  # type: ignore[type-arg]
    assert record["prepare"]["status"] == "reproduced", record["prepare"]
    evaluated = run_cli("evaluate", "--instances", str(out), "--predictions", "gold", "--mirrors",
                        str(mirrors), "--run-id", "gold", "--out", str(tmp_path / "runs"), *backend)
    assert evaluated.returncode == 0, evaluated.stderr[-2000:]
    summary = json.loads((tmp_path / "runs" / "gold" / "summary.json").read_text())[0]
    assert summary["ids"].get("RESOLVED") == [record["instance_id"]], summary["ids"]
    return record


def _shelving_instance(make_repo, tmp_path: Path) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    repo = make_repo("shelving", SHELVING_FILES)
    base = repo.commit({"README.md": "shelving\n"}, date="2023-05-10T12:00:00+00:00")
    # published in Django's parser's naming: "method (module.Class)", or a docstring's first line
    return published_file(repo.path, tmp_path, "shelving", {
        "instance_id": "fixture__shelving-1", "base_commit": base,
        "patch": working_diff(repo.path, {"src/shelving/__init__.py": SHELVE_FIXED}),
        "test_patch": working_diff(repo.path, {TITLES: TITLES_TESTS_NEW}),
        "FAIL_TO_PASS": ["test_spaces (titles.tests.ShelveTests)", "A trailing newline is dropped."],
        "PASS_TO_PASS": ["test_title (titles.tests.ShelveTests)", "Titles keep their inner words."]})


@pytest.mark.slow
def test_a_runtests_project_validates_and_its_published_instance_reproduces(make_repo, tmp_path: Path) -> None:
    published, mirrors = _shelving_instance(make_repo, tmp_path)
    record = engine(tmp_path).setup(str(mirrors / "fixture+shelving" / "repo"), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert record.plan is not None and record.plan.runner == "runtests"
    last = record.iterations[-1]
    assert last.tests.get("PASSED") == 2  # the whole suite: every app directory's label
    assert last.commands[-1].command.endswith("python tests/runtests.py --settings=test_sqlite "
                                              "--parallel 1 --verbosity 2")
    prepared = _prepare_and_evaluate(published, mirrors, tmp_path)
    assert prepared["test"][0].endswith("--verbosity 2 titles.tests") and prepared["runner"] == "runtests"
    assert prepared["test_spec"]["script"]["settings"] == "test_sqlite"
    assert prepared["prepare"]["fail_to_pass"]["rules"] == {"unittest description": 1, "docstring": 1}
    assert prepared["prepare"]["pass_to_pass"]["rules"] == {"unittest description": 1, "docstring": 1}


@pytest.mark.slow
def test_a_bin_test_project_validates_and_its_published_instance_reproduces(make_repo, tmp_path: Path) -> None:
    repo = make_repo("tallies", TALLIES_FILES)
    base = repo.commit({"README.md": "tallies\n"}, date="2023-05-10T12:00:00+00:00")
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert record.plan is not None and record.plan.runner == "bintest"
    last = record.iterations[-1]
    assert (last.tests.get("PASSED"), last.tests.get("XFAIL"), last.tests.get("SKIPPED")) == (3, 1, 1), last.tests
    assert "python bin/test -C --verbose --seed 1" in last.commands[-1].command
    # published in the producer's naming: the bare function names its runner prints
    published, mirrors = published_file(repo.path, tmp_path, "tallies", {
        "instance_id": "fixture__tallies-1", "base_commit": base,
        "patch": working_diff(repo.path, {"tallies/__init__.py": TALLY_FIXED}),
        "test_patch": working_diff(repo.path, {COUNT: COUNT_TESTS_NEW}),
        "FAIL_TO_PASS": ["test_double_spaces"], "PASS_TO_PASS": ["test_single", "test_two", "test_printing"]})
    prepared = _prepare_and_evaluate(published, mirrors, tmp_path)
    assert prepared["test"][0].endswith(f"python bin/test -C --verbose --seed 1 {COUNT}")
    assert prepared["prepare"]["fail_to_pass"]["rules"] == {"function name": 1}
    assert prepared["prepare"]["pass_to_pass"]["rules"] == {"function name": 3}


@pytest.mark.slow
def test_a_bin_test_project_is_mined_built_and_verified(make_repo, tmp_path: Path) -> None:
    repo = make_repo("tallies", TALLIES_FILES)
    merge_pr(repo, 2, {"tallies/__init__.py": TALLY_FIXED, COUNT: COUNT_TESTS_NEW},
             "Count words split by several spaces\n\nFixes #1", "2023-05-10T12:00:00+00:00")
    repos = tmp_path / "repos.txt"
    repos.write_text(f"{repo.path} fixture/tallies\n")
    prs, out = tmp_path / "prs.jsonl", tmp_path / "instances.jsonl"
    assert run_cli("mine", str(repos), "--from-git", "--out", str(prs)).returncode == 0
    built = run_cli("build", str(prs), "--out", str(out), "--refdb", str(tmp_path / "ref.sqlite"))
    assert built.returncode == 0, built.stderr[-3000:]
    instance = json.loads(out.read_text())
    assert json.loads(instance["FAIL_TO_PASS"]) == [f"{COUNT}::test_double_spaces"]
    assert sorted(json.loads(instance["PASS_TO_PASS"])) == [
        f"{COUNT}::test_printing", f"{COUNT}::test_single", f"{COUNT}::test_two",
        f"{COUNT}::test_unicode_digits"]  # an expected failure counts as a pass
    assert instance["runner"] == "bintest" and instance["test_spec"]["script"]["path"] == "bin/test"
    verified = run_cli("verify", str(out), "--source", f"fixture/tallies={repo.path}")
    assert verified.returncode == 0 and verified.stdout.count("ok ") == 1, verified.stdout + verified.stderr


@pytest.mark.slow
@pytest.mark.docker
def test_a_runtests_instance_reproduces_on_docker(make_repo, tmp_path: Path) -> None:
    published, mirrors = _shelving_instance(make_repo, tmp_path)
    prepared = _prepare_and_evaluate(published, mirrors, tmp_path, "--backend", "docker")
    assert prepared["image"] and prepared["test"][0].endswith("--verbosity 2 titles.tests")
