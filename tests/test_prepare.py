"""`benchsmith prepare`: published instances (self-written, in the published shapes) get a
validated environment and a verdict on their own labels, end to end with real installs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from benchsmith.core import TestStatus
from benchsmith.datasets.labels import cause_of, check_labels
from benchsmith.harness.names import match, status_of

from .evaluation_fixture import (
    CODE,
    CODE_FILE,
    PARSE_FIXED,
    TEST_FILE,
    TESTS,
    published_file,
    working_diff,
)
from .test_cli_batch import one_line_error, run_cli
from .test_mining_build import assert_loads_with_swebench
from .test_setup_engine import PYPROJECT_TEST_EXTRA

P, F = TestStatus.PASSED, TestStatus.FAILED


def _gold_resolved(out: Path, mirrors: Path, tmp_path: Path, *more: str) -> dict[str, list[str]]:
    """`evaluate` of the gold patches of the prepared file `out`: the summary's ids by outcome."""
    evaluated = run_cli("evaluate", "--instances", str(out), "--predictions", "gold", "--mirrors",
                        str(mirrors), *more, "--run-id", "gold", "--out", str(tmp_path / "runs"))
    assert evaluated.returncode == 0, evaluated.stderr[-2000:]
    return json.loads((tmp_path / "runs" / "gold" / "summary.json").read_text())[0]["ids"]


def _prepare(published: Path, mirrors: Path, tmp_path: Path, *options: str) -> tuple[Path, str]:
    """`prepare` of the published file with `options`, which must succeed: (output, stderr)."""
    out = tmp_path / "prepared.jsonl"
    prepared = run_cli("prepare", str(published), "--out", str(out), "--mirrors", str(mirrors), *options)
    assert prepared.returncode == 0, prepared.stderr[-3000:]
    return out, prepared.stderr


def _calc_with_tests(make_repo, tmp_path: Path, tests: str, row: dict[str, object]) -> tuple[Path, Path]:
    """The calc fixture published at a base commit with the parse fix as its patch and a test
    patch writing `tests` (the rest of the instance in `row`); (file, mirrors)."""
    repo = make_repo("calc", {"pyproject.toml": PYPROJECT_TEST_EXTRA, CODE_FILE: CODE, TEST_FILE: TESTS})
    base = repo.commit({"README.md": "calc\n"}, date="2023-05-10T12:00:00+00:00")
    return published_file(repo.path, tmp_path, "calc", {
        "base_commit": base, "created_at": "2023-05-12T10:00:00Z", "version": "1.0",
        "patch": working_diff(repo.path, {CODE_FILE: PARSE_FIXED}),
        "test_patch": working_diff(repo.path, {TEST_FILE: tests}), **row})


def test_published_names_match_by_the_producers_rules_and_never_by_a_loose_prefix() -> None:
    ours = ["tests/test_q.py::test_sql[select a from b]", "tests/test_q.py::test_sql[select c]",
            "tests/test_q.py::test_sql_more", "pkg.tests.TestX.test_a", "tests/test_q.py::test_other"]
    assert match("tests/test_q.py::test_other", ours) == (["tests/test_q.py::test_other"], "exact")
    assert match("/n/fs/p-swe-bench/temp/repo/tests/test_q.py::test_other", ours) == (
        ["tests/test_q.py::test_other"], "absolute path")
    # SWE-bench's parser cut both ids at their first space: the published name stands for both.
    assert match("tests/test_q.py::test_sql[select", ours) == (
        ["tests/test_q.py::test_sql[select a from b]", "tests/test_q.py::test_sql[select c]"], "first space")
    assert match("test_a (pkg.tests.TestX)", ours) == (["pkg.tests.TestX.test_a"], "unittest description")
    assert match("test_a (pkg.tests.TestX.test_a)", ours) == (["pkg.tests.TestX.test_a"], "unittest description")
    assert match("tests/test_q.py::test_sql", ours) == ([], None)  # a prefix of test_sql_more: no
    assert match("tests/test_q.py::test_sq", ours) == ([], None)
    # grading reads a published name the same way; a cut name takes the last test reported
    statuses = {"tests/test_q.py::test_sql[select a from b]": P, "tests/test_q.py::test_sql[select c]": F,
                "pkg.tests.TestX.test_a": P}
    assert status_of("tests/test_q.py::test_sql[select", statuses) == F
    assert status_of("test_a (pkg.tests.TestX)", statuses) == P
    assert status_of("tests/test_q.py::test_sql", statuses) is None


def test_each_swe_bench_parsers_spelling_is_matched_and_two_tests_under_one_name_are_ambiguous(
        ) -> None:
    ours = ["tests/test_io.py::test_read[/work/repo/tests/data/ct.dcm]",
            "tests/test_io.py::test_read[relative.dcm]",
            "lib/tests/test_pick.py::test_press[MouseButton.LEFT]",
            "sympy/core/tests/test_basic.py::test_issue_1234",
            "sympy/core/tests/test_expr.py::test_subs", "sympy/core/tests/test_basic.py::test_subs",
            "admin.tests.AdminTests.test_login"]
    # pydicom, requests, pylint: an absolute-path parameter by its last component
    assert match("tests/test_io.py::test_read[/ct.dcm]", ours) == (
        ["tests/test_io.py::test_read[/work/repo/tests/data/ct.dcm]"], "path option")
    assert match("tests/test_io.py::test_read[/relative.dcm]", ours) == ([], None)
    # matplotlib: mouse buttons by number
    assert match("lib/tests/test_pick.py::test_press[1]", ours) == (
        ["lib/tests/test_pick.py::test_press[MouseButton.LEFT]"], "mouse button")
    # sympy: the function's name alone; two files with the same function are ambiguous
    assert match("test_issue_1234", ours) == (
        ["sympy/core/tests/test_basic.py::test_issue_1234"], "function name")
    assert match("test_subs", ours) == (
        ["sympy/core/tests/test_expr.py::test_subs", "sympy/core/tests/test_basic.py::test_subs"],
        "ambiguous: function name")
    # Django: the unittest description
    assert match("test_login (admin.tests.AdminTests)", ours)[1] == "unittest description"
    statuses = dict.fromkeys(ours, P)
    assert status_of("test_issue_1234", statuses) == P
    # two tests under one name that agree give the name their status, whichever was read ...
    assert status_of("test_subs", statuses) == P
    check = check_labels(["test_subs", "test_issue_1234"], {}, statuses, must_fail_before=False)
    assert check.reproduced == ["test_subs", "test_issue_1234"] and check.ambiguous == []
    assert check.rules == {"ambiguous: function name": 1, "function name": 1}  # still reported
    # ... two that disagree give it none: never guessed
    split = {**statuses, "sympy/core/tests/test_basic.py::test_subs": F}
    assert status_of("test_subs", split) is None
    check = check_labels(["test_subs", "test_issue_1234"], {}, split, must_fail_before=False)
    assert check.ambiguous == ["test_subs"] and check.reproduced == ["test_issue_1234"]


def test_label_checks_say_what_differs() -> None:
    before = {"t::new": F, "t::old": P, "t::param[a b]": F, "t::param[a c]": P}
    after = {"t::new": P, "t::old": P, "t::param[a b]": P, "t::param[a c]": P}
    f2p = check_labels(["t::new", "t::old", "t::gone", "t::param[a", "t::slow"], before, after,
                       must_fail_before=True, hung=["t::slow"])
    assert f2p.reproduced == ["t::new"] and f2p.not_found == ["t::gone"] and f2p.hung == ["t::slow"]
    # "t::param[a" names two tests; the producer's parser kept the last one reported
    assert f2p.differs == {"t::old": "already passes without the gold patch",
                           "t::param[a": "already passes without the gold patch"}
    assert f2p.rules == {"exact": 3, "first space": 1} and not f2p.all_reproduced
    reordered = {"t::param[a c]": P, "t::param[a b]": F}
    assert check_labels(["t::param[a"], reordered, after, must_fail_before=True).reproduced == [
        "t::param[a"]
    p2p = check_labels(["t::old"], before, {"t::old": F}, must_fail_before=False)
    assert p2p.differs == {"t::old": "fails with the gold patch (FAILED)"}


def test_a_fail_to_pass_test_that_hangs_only_without_the_gold_patch_is_reproduced() -> None:
    from benchsmith.datasets.verdict import judge
    from benchsmith.harness.behaviour import Behaviour
    from benchsmith.harness.testrun import TestRun
    from benchsmith.instance import TaskInstance

    loops, slow, plain = "t::loops", "t::slow", "t::plain"
    before = TestRun(statuses={loops: F, plain: P, slow: F}, hung=[loops, slow])
    after = TestRun(statuses={loops: P, plain: P}, hung=[slow])
    instance = TaskInstance(instance_id="o__r-1", repo="o/r", base_commit="a" * 40,
                            FAIL_TO_PASS=[loops, slow], PASS_TO_PASS=[plain])
    verdict = judge(instance, Behaviour(before=[before], after=[after]))
    # the bug loops: hanging without the patch is the failure the label says
    assert verdict.fail_to_pass.reproduced == [loops] and verdict.fail_to_pass.hung == [slow]
    # a PASS_TO_PASS test must pass on both sides: a hang on either says nothing
    hung_before = judge(instance.model_copy(update={"FAIL_TO_PASS": [], "PASS_TO_PASS": [loops]}),
                        Behaviour(before=[before], after=[after]))
    assert hung_before.pass_to_pass.hung == [loops] and hung_before.cause == "hung"


def test_an_instance_not_reproduced_has_one_cause_by_the_first_evidence() -> None:
    before, after = {"t::a": F, "t::b": P, "t::c": F}, {"t::a": P, "t::b": P, "t::c": F}
    good = check_labels(["t::a"], before, after, must_fail_before=True)
    assert cause_of([good]) is None
    wrong = check_labels(["t::b"], before, after, must_fail_before=True)
    assert cause_of([good, wrong]) == "label"  # passes without the gold patch
    broken = check_labels(["t::c"], before, after, must_fail_before=False)
    assert cause_of([wrong, broken]) == "environment"  # fails with the gold patch too
    assert cause_of([broken, check_labels(["t::x"], before, after, True, flaky=["t::x"])]) == "flaky"
    network = check_labels(["t::x"], before, after, True, needs_network=["t::x"])
    assert cause_of([broken, network]) == "network"
    hung = check_labels(["t::x"], before, after, True, hung=["t::x"])
    assert cause_of([network, hung]) == "hung"
    # a run stopped by a hang leaves later tests unseen: not a naming problem
    assert cause_of([hung, check_labels(["t::gone"], before, after, True)]) == "hung"
    assert cause_of([network, check_labels(["t::gone"], before, after, True)]) == "naming"


WORDS_TESTS = TESTS + '''

import pytest


@pytest.mark.parametrize("text", ["a b", "c"])
def test_words(text):
    assert parse(text) == [text]
'''
SPACES_TEST = WORDS_TESTS + '''

def test_spaces():
    assert parse("a, b") == ["a", "b"]


def test_remote():
    import socket

    socket.create_connection(("benchsmith-fixture.invalid", 80), timeout=5)
'''


SPACES_ONLY = """

def test_spaces():
    assert parse("a, b") == ["a", "b"]
"""


DOWNLOADING = "tests/test_data_download.py"


@pytest.mark.slow
def test_prepare_end_to_end_with_published_shapes(make_repo, tmp_path: Path) -> None:
    # A module that never finishes importing (as a test-data download retried without network
    # does): the environment is validated on the instances' own test files, so it never runs.
    repo = make_repo("calc", {"pyproject.toml": PYPROJECT_TEST_EXTRA, CODE_FILE: CODE,
                              TEST_FILE: WORDS_TESTS, DOWNLOADING: "import time\n\ntime.sleep(3600)\n"})
    base = repo.commit({"README.md": "calc\n"}, date="2023-05-10T12:00:00+00:00")
    later = repo.commit({"NEWS.md": "news\n"}, date="2023-05-12T12:00:00+00:00")
    mirrors = tmp_path / "mirrors"
    (mirrors / "fixture+calc").mkdir(parents=True)
    os.symlink(repo.path, mirrors / "fixture+calc" / "repo")
    patch = working_diff(repo.path, {CODE_FILE: PARSE_FIXED})
    test_patch = working_diff(repo.path, {TEST_FILE: SPACES_TEST})
    common = {"repo": "fixture/calc", "patch": patch, "test_patch": test_patch,
              "created_at": "2023-05-15T10:00:00Z", "version": "1.0", "problem_statement": "spaces"}
    p2p = [f"{TEST_FILE}::test_plain", f"{TEST_FILE}::test_total", f"{TEST_FILE}::test_words[a",
           f"{TEST_FILE}::test_words[c]"]
    rows = [
        # SWE-bench's own shape: lists JSON-encoded in strings, a parametrized id cut at a space.
        {"instance_id": "fixture__calc-1", "base_commit": base, **common,
         "FAIL_TO_PASS": json.dumps([f"{TEST_FILE}::test_spaces"]), "PASS_TO_PASS": json.dumps(p2p)},
        # Real lists; shares the environment (same version); one PASS_TO_PASS name does not exist.
        {"instance_id": "fixture__calc-2", "base_commit": later, **common, "extra_field": {"kept": True},
         "FAIL_TO_PASS": [f"{TEST_FILE}::test_spaces"],
         "PASS_TO_PASS": [*p2p, f"{TEST_FILE}::test_gone", f"{TEST_FILE}::test_remote"]},
        # A wrong label: test_plain passes without the fix.
        {"instance_id": "fixture__calc-3", "base_commit": later, **common,
         "FAIL_TO_PASS": [f"{TEST_FILE}::test_spaces", f"{TEST_FILE}::test_plain"], "PASS_TO_PASS": []},
        {"instance_id": "fixture__calc-1", "base_commit": base, **common},  # duplicate
        {"instance_id": "fixture__calc-4", "repo": "fixture/calc", "base_commit": base},  # no patches
        {"instance_id": "fixture__calc-5", "base_commit": base, **common, "FAIL_TO_PASS": 5},
        # A commit the repository does not have: an error for this instance alone.
        {"instance_id": "fixture__calc-6", "base_commit": "0" * 40, **common,
         "created_at": "2023-05-16T10:00:00Z", "FAIL_TO_PASS": [], "PASS_TO_PASS": []},
    ]
    published = tmp_path / "published.jsonl"
    published.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "prepared.jsonl"
    args = ("prepare", str(published), "--out", str(out), "--mirrors", str(mirrors),
            "--refdb", str(tmp_path / "ref.sqlite"))
    first = run_cli(*args)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "duplicate instance_id fixture__calc-1" in first.stderr
    assert "published.jsonl:5: missing patch, test_patch" in first.stderr
    assert "fixture__calc-5: FAIL_TO_PASS/PASS_TO_PASS must be lists" in first.stderr
    records = {r["instance_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert sorted(records) == [f"fixture__calc-{n}" for n in (1, 2, 3, 6)]
    assert records["fixture__calc-6"]["prepare"]["status"] == "error"
    one, two, three = (records[f"fixture__calc-{n}"] for n in (1, 2, 3))
    assert one["prepare"]["status"] == "reproduced", one["prepare"]
    assert one["prepare"]["pass_to_pass"]["rules"] == {"exact": 3, "first space": 1}
    assert one["FAIL_TO_PASS"] == rows[0]["FAIL_TO_PASS"]  # published fields unchanged
    assert two["prepare"]["status"] == "fail_to_pass_reproduced"
    assert two["prepare"]["pass_to_pass"]["not_found"] == [f"{TEST_FILE}::test_gone"]
    assert two["prepare"]["pass_to_pass"]["needs_network"] == [f"{TEST_FILE}::test_remote"]
    assert two["extra_field"] == {"kept": True} and two["test_spec"]["files"] == [TEST_FILE]
    assert three["prepare"]["status"] == "differs"
    assert three["prepare"]["fail_to_pass"]["differs"] == {
        f"{TEST_FILE}::test_plain": "already passes without the gold patch"}
    # one cause per instance not reproduced, counted in the summary
    assert one["prepare"]["cause"] is None
    assert 0 < one["prepare"]["tests_s"] < one["prepare"]["instance_s"]  # its test runs, timed
    assert two["prepare"]["cause"] == "naming"  # a published name no test has
    assert three["prepare"]["cause"] == "label"  # the gold patch's own run shows the label wrong
    assert records["fixture__calc-6"]["prepare"]["cause"] == "error"
    assert "not reproduced, by cause: error 1, label 1, naming 1" in first.stdout, first.stdout
    assert one["prepare"]["setup_commit"] == two["prepare"]["setup_commit"] == base  # set up once
    assert one["python"] == "3.11" and one["exclude_newer"].startswith("2023-05-15")
    assert "prepare summary" in first.stdout and "statuses:" in first.stdout
    assert "validated on 1 test file" in first.stderr and "hung:" not in first.stderr, first.stderr

    # Re-running skips everything; a changed label redoes that instance only.
    again = run_cli(*args)
    assert again.returncode == 0 and "environment at" not in again.stderr
    assert "reproduced" not in again.stderr and "prepare summary" in again.stdout
    assert "skipped 4 already done (--retry-failed redoes the 1 that failed)" in again.stderr
    retried = run_cli(*args, "--retry-failed")  # only the instance that ended in an error
    assert "skipped 3 already done (--retry-failed: redoing the 1 that failed)" in retried.stderr
    assert "fixture__calc-6" in retried.stderr and "fixture__calc-1 " not in retried.stderr
    rows[2]["FAIL_TO_PASS"] = [f"{TEST_FILE}::test_spaces"]
    published.write_text("".join(json.dumps(r) + "\n" for r in rows[:3]))
    third = run_cli(*args)
    assert third.returncode == 0
    assert "fixture__calc-3" in third.stderr and "fixture__calc-2 " not in third.stderr
    latest = {r["instance_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert latest["fixture__calc-3"]["prepare"]["status"] == "reproduced"
    # The evaluator takes the prepared file as it takes mined instances.
    evaluated = run_cli("evaluate", "--instances", str(out), "--predictions", "gold", "--mode", "fix",
                        "--source", f"fixture/calc={repo.path}", "--run-id", "gold",
                        "--out", str(tmp_path / "runs"))
    assert evaluated.returncode == 0, evaluated.stderr[-2000:]
    # graded by the published names: "test_words[a" is read as its producer wrote it, so the
    # instances whose every label reproduced are resolved; calc-2 names a test that is gone
    summary = json.loads((tmp_path / "runs" / "gold" / "summary.json").read_text())[0]
    assert sorted(summary["ids"]["RESOLVED"]) == ["fixture__calc-1", "fixture__calc-3"], summary["ids"]
    assert_loads_with_swebench(out, tmp_path)  # the `swebench` package's loader reads the output


def test_a_group_is_pinned_no_earlier_than_its_setup_commit() -> None:
    from benchsmith.datasets.prepare import pin_day
    from benchsmith.instance import TaskInstance

    first = TaskInstance(instance_id="o__r-1", repo="o/r", base_commit="a" * 40,
                         created_at="2021-01-29T10:00:00Z")
    assert pin_day(first, "2023-03-17") == "2023-03-17"  # the setup commit needs newer releases
    assert pin_day(first, "2020-05-01") == "2021-01-29"
    assert pin_day(first.model_copy(update={"created_at": ""}), "2020-05-01") == "2020-05-01"


def test_a_test_left_out_for_hanging_runs_again_where_an_instance_is_judged_by_it() -> None:
    """A test hung while the group's environment was validated (a loaded machine, another
    commit): it stays out of the other instances' runs, but an instance whose labels name it
    runs it, under the stall watchdog, rather than finding its label missing."""
    from benchsmith.datasets.verdict import keeping_labels
    from benchsmith.instance import TaskInstance, TestSpec

    spec = TestSpec(runner="bintest", deselect=[
        "sympy/functions/combinatorial/tests/test_comb_numbers.py::test_bell",
        "sympy/sets/tests/test_sets.py::test_union[a b]"])
    judged = TaskInstance(instance_id="sympy__sympy-13437", repo="sympy/sympy", base_commit="a" * 40,
                          FAIL_TO_PASS=["test_bell"], PASS_TO_PASS=["test_bernoulli"])
    assert keeping_labels(spec, judged).deselect == ["sympy/sets/tests/test_sets.py::test_union[a b]"]
    other = judged.model_copy(update={"FAIL_TO_PASS": ["test_catalan"]})
    assert keeping_labels(spec, other) is spec
    # names read as grading reads them: a name cut at its first space, a Django description
    cut = judged.model_copy(update={"FAIL_TO_PASS": ["sympy/sets/tests/test_sets.py::test_union[a"]})
    assert keeping_labels(spec, cut).deselect == spec.deselect[:1]
    unrelated = judged.model_copy(update={"FAIL_TO_PASS": ["test_union (sets.tests.SetTests)"]})
    assert keeping_labels(spec, unrelated) is spec  # never a bare function name's guess
    django = TestSpec(runner="runtests", deselect=["forms_tests.tests.FormsTests.test_union"])
    assert keeping_labels(django, unrelated.model_copy(update={"FAIL_TO_PASS": [
        "test_union (forms_tests.tests.FormsTests)"]})).deselect == []


def test_an_instance_whose_environment_failed_reproduces_no_label() -> None:
    from benchsmith.datasets.prepare import Preparer, Published
    from benchsmith.datasets.prepare_summary import summarize
    from benchsmith.instance import TaskInstance

    instance = TaskInstance(instance_id="o__r-1", repo="o/r", base_commit="a" * 40,
                            FAIL_TO_PASS=["t.py::a"], PASS_TO_PASS=["t.py::b", "t.py::c"])
    published = Published(instance=instance, raw={"instance_id": "o__r-1"}, fingerprint="f")
    _, verdict, record = Preparer(None)._failed(published, "setup_failed", "no", "c")  # type: ignore[arg-type]
    assert not verdict.fail_to_pass.all_reproduced and verdict.pass_to_pass.total == 2
    assert summarize([record]).fail_to_pass_reproduced == 0


def test_prepare_with_nothing_usable_is_one_line(tmp_path: Path) -> None:
    published = tmp_path / "bad.jsonl"
    published.write_text('{"instance_id": "x"}\n')
    result = run_cli("prepare", str(published), "--out", str(tmp_path / "out.jsonl"))
    assert result.returncode == 2
    assert "no usable instance in" in result.stderr.strip().splitlines()[-1]
    missing = run_cli("prepare", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "o.jsonl"))
    assert missing.returncode == 2 and "not found" in missing.stderr


def test_published_parquet_is_read_like_jsonl(tmp_path: Path) -> None:
    import pyarrow
    import pyarrow.parquet

    from benchsmith.datasets.prepare import read_published

    rows = [{"instance_id": "o__r-1", "repo": "o/r", "base_commit": "a" * 40, "patch": "p",
             "test_patch": "t", "FAIL_TO_PASS": json.dumps(["t.py::a"]), "PASS_TO_PASS": "[]"},
            {"instance_id": "o__r-2", "repo": "o/r", "base_commit": "b" * 40, "patch": "p",
             "test_patch": "", "FAIL_TO_PASS": "[]", "PASS_TO_PASS": "[]"}]
    path = tmp_path / "test-00000-of-00001.parquet"
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), path)
    published, problems = read_published(path)
    assert [p.instance.instance_id for p in published] == ["o__r-1"]
    assert published[0].instance.FAIL_TO_PASS == ["t.py::a"]
    assert problems == ["test-00000-of-00001.parquet[1]: missing test_patch"]
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    result = run_cli("prepare", str(broken), "--out", str(tmp_path / "out.jsonl"))
    assert "cannot read instance file" in one_line_error(result)


def test_a_fault_in_one_group_is_recorded_and_the_other_groups_go_on(tmp_path: Path, monkeypatch) -> None:
    from benchsmith.datasets import prepare
    from benchsmith.instance import TaskInstance
    from benchsmith.setup.engine import SetupEngine, SetupOptions

    def broken(*args, **kwargs):
        raise RuntimeError("AST constructor recursion depth mismatch")

    monkeypatch.setattr(prepare, "resolve", broken)
    items = [prepare.Published(instance=TaskInstance(instance_id=f"o__{r}-1", repo=f"o/{r}",
                                                     base_commit="a" * 40, FAIL_TO_PASS=["t.py::a"]),
                               raw={"instance_id": f"o__{r}-1", "repo": f"o/{r}"}, fingerprint=r)
             for r in ("x", "y")]
    out = tmp_path / "out.jsonl"
    verdicts = prepare.Preparer(SetupEngine(SetupOptions())).prepare(items, out, jobs=2)
    assert sorted(v.status for v in verdicts) == ["error", "error"]
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["instance_id"] for r in records} == {"o__x-1", "o__y-1"}
    assert all("internal error (RuntimeError: AST constructor" in r["prepare"]["reason"] for r in records)


@pytest.mark.parametrize("fault", ["sandbox", "internal"])
def test_an_interrupted_prepare_writes_no_verdict_for_the_instance_it_was_in(
        tmp_path: Path, monkeypatch, fault: str) -> None:
    """Ctrl-C cancels the engine, which tears the running sandbox down under the instance: what
    that run then says is no verdict (a resume must redo the instance, not skip it)."""
    from benchsmith.core import BenchsmithError
    from benchsmith.datasets import prepare
    from benchsmith.instance import TaskInstance
    from benchsmith.setup.engine import SetupEngine, SetupOptions

    engine = SetupEngine(SetupOptions())

    def torn_down(*args, **kwargs):
        engine.cancelled.set()
        raise BenchsmithError("the sandbox is gone") if fault == "sandbox" else RuntimeError("gone")

    monkeypatch.setattr(prepare, "resolve", torn_down)
    item = prepare.Published(instance=TaskInstance(instance_id="o__x-1", repo="o/x", base_commit="a" * 40,
                                                   FAIL_TO_PASS=["t.py::a"]),
                             raw={"instance_id": "o__x-1", "repo": "o/x"}, fingerprint="x")
    out = tmp_path / "out.jsonl"
    assert prepare.Preparer(engine).prepare([item], out) == []
    assert not out.exists() or out.read_text() == ""


def test_a_group_that_ends_on_ctrl_c_starts_no_other_group() -> None:
    """Ctrl-C cancels the engine, which ends the running group; the next group must not start
    in the moment before the pool is shut down."""
    import signal
    import threading
    import time

    from benchsmith.setup.environments import run_groups

    cancelled, ended, started = threading.Event(), threading.Event(), []

    class Engine:
        def cancel(self) -> None:
            cancelled.set()
            ended.wait(10)  # the running group ends on the cancel; its thread is free
            time.sleep(0.3)

    def work(group: str) -> None:
        started.append(group)
        if group == "first":
            time.sleep(0.2)  # every group submitted: the run waits on the first
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)  # Ctrl-C
            cancelled.wait(10)
            ended.set()

    with pytest.raises(KeyboardInterrupt):
        run_groups(Engine(), work, ["first", "second"], jobs=1)  # type: ignore[arg-type]
    assert started == ["first"]


def _fixed_after_base(make_repo, tmp_path: Path) -> tuple[Path, Path]:
    """A published instance whose base_commit cannot install its test extra (a package that
    does not exist) and whose environment_setup_commit (later) fixed that; (file, mirrors)."""
    broken = PYPROJECT_TEST_EXTRA.replace('test = ["pytest"]',
                                          'test = ["pytest", "benchsmith-no-such-package-xyz"]')
    repo = make_repo("calc", {"pyproject.toml": broken, CODE_FILE: CODE, TEST_FILE: TESTS})
    base = repo.commit({"README.md": "calc\n"}, date="2023-05-10T12:00:00+00:00")
    setup = repo.commit({"pyproject.toml": PYPROJECT_TEST_EXTRA}, date="2023-05-20T12:00:00+00:00")
    mirrors = tmp_path / "mirrors"
    (mirrors / "fixture+calc").mkdir(parents=True)
    os.symlink(repo.path, mirrors / "fixture+calc" / "repo")
    row = {"instance_id": "fixture__calc-9", "repo": "fixture/calc", "base_commit": base,
           "environment_setup_commit": setup, "created_at": "2023-05-12T10:00:00Z",
           "patch": working_diff(repo.path, {CODE_FILE: PARSE_FIXED}),
           "test_patch": working_diff(repo.path, {TEST_FILE: WORDS_TESTS + SPACES_TEST[len(WORDS_TESTS):]}),
           "FAIL_TO_PASS": [f"{TEST_FILE}::test_spaces"], "PASS_TO_PASS": [f"{TEST_FILE}::test_plain"]}
    published = tmp_path / "published.jsonl"
    published.write_text(json.dumps(row) + "\n")
    return published, mirrors


@pytest.mark.slow
def test_an_instance_is_evaluated_in_the_environment_of_its_setup_commit(make_repo, tmp_path: Path) -> None:
    # The environment is built at the setup commit, as the dataset's producer built it, and
    # the project then goes in at base_commit (an install at base_commit fails).
    published, mirrors = _fixed_after_base(make_repo, tmp_path)
    out = tmp_path / "prepared.jsonl"
    prepared = run_cli("prepare", str(published), "--out", str(out), "--mirrors", str(mirrors),
                       "--refdb", str(tmp_path / "ref.sqlite"))
    assert prepared.returncode == 0, prepared.stderr[-3000:]
    record = json.loads(out.read_text())
    assert record["prepare"]["status"] == "reproduced", record["prepare"]
    assert record["reinstall"].startswith("uv pip install") and "--no-deps" in record["reinstall"]
    ids = _gold_resolved(out, mirrors, tmp_path)
    assert ids.get("RESOLVED") == ["fixture__calc-9"], ids


@pytest.mark.slow
def test_a_dependency_only_the_base_commit_declares_is_installed_when_the_environment_moves_there(
        make_repo, tmp_path: Path) -> None:
    # pytest 5.4 needed wcwidth and 6.0 dropped it: the environment of the later setup commit
    # lacks what the base commit imports, until the move adds what that commit declares
    uses_six = PYPROJECT_TEST_EXTRA.replace('requires-python = ">=3.8"',
                                            'requires-python = ">=3.8"\ndependencies = ["six"]')
    repo = make_repo("calc", {"pyproject.toml": uses_six, CODE_FILE: "import six\n" + CODE,
                              TEST_FILE: TESTS})
    base = repo.commit({"README.md": "calc\n"}, date="2023-05-10T12:00:00+00:00")
    row = {"instance_id": "fixture__calc-11", "base_commit": base,
           "created_at": "2023-05-12T10:00:00Z",
           "patch": working_diff(repo.path, {CODE_FILE: "import six\n" + PARSE_FIXED}),
           "test_patch": working_diff(repo.path, {TEST_FILE: TESTS + SPACES_ONLY}),
           "FAIL_TO_PASS": [f"{TEST_FILE}::test_spaces"], "PASS_TO_PASS": [f"{TEST_FILE}::test_plain"]}
    row["environment_setup_commit"] = repo.commit(
        {"pyproject.toml": PYPROJECT_TEST_EXTRA, CODE_FILE: CODE}, date="2023-05-20T12:00:00+00:00")
    published, mirrors = published_file(repo.path, tmp_path, "calc", row)
    out, _ = _prepare(published, mirrors, tmp_path, "--no-refdb")
    record = json.loads(out.read_text())
    assert record["prepare"]["status"] == "reproduced", record["prepare"]
    ids = _gold_resolved(out, mirrors, tmp_path)
    assert ids.get("RESOLVED") == ["fixture__calc-11"], ids


@pytest.mark.slow
def test_an_environment_whose_setup_commit_tests_are_broken_is_validated_at_a_base_commit(
        make_repo, tmp_path: Path) -> None:
    # At the environment_setup_commit the instance's test module raises on import (a bug of
    # that commit, as sympy's quantum module recursing without the cache): no rule explains it,
    # so the same environment is validated again at the group's first base commit.
    repo = make_repo("calc", {"pyproject.toml": PYPROJECT_TEST_EXTRA, CODE_FILE: CODE, TEST_FILE: TESTS})
    base = repo.commit({"README.md": "calc\n"}, date="2023-05-10T12:00:00+00:00")
    patch = working_diff(repo.path, {CODE_FILE: PARSE_FIXED})
    test_patch = working_diff(repo.path, {TEST_FILE: WORDS_TESTS + SPACES_TEST[len(WORDS_TESTS):]})
    setup = repo.commit({TEST_FILE: 'raise RuntimeError("broken at this commit")\n' + TESTS},
                        date="2023-05-20T12:00:00+00:00")
    published, mirrors = published_file(repo.path, tmp_path, "calc", {
        "instance_id": "fixture__calc-7", "base_commit": base, "environment_setup_commit": setup,
        "created_at": "2023-05-12T10:00:00Z", "patch": patch, "test_patch": test_patch,
        "FAIL_TO_PASS": [f"{TEST_FILE}::test_spaces"], "PASS_TO_PASS": [f"{TEST_FILE}::test_plain"]})
    out = tmp_path / "prepared.jsonl"
    prepared = run_cli("prepare", str(published), "--out", str(out), "--mirrors", str(mirrors),
                       "--no-refdb", "--max-iterations", "1")
    assert prepared.returncode == 0, prepared.stderr[-3000:]
    assert f"the tests fail at {setup[:12]}" in prepared.stderr, prepared.stderr[-3000:]
    record = json.loads(out.read_text())
    assert record["prepare"]["status"] == "reproduced", record["prepare"]
    assert record["prepare"]["setup_commit"] == base
    ids = _gold_resolved(out, mirrors, tmp_path)
    assert ids.get("RESOLVED") == ["fixture__calc-7"], ids


ALTERNATES = """

def test_alternates():
    # an outcome that depends on string hashing, as sympy's tests that walk sets do under
    # its bin/test's random hash seed; the harness runs with seed 0 unless told otherwise
    import os

    assert os.environ.get("PYTHONHASHSEED") != "0"
"""

HANGS = """

def test_hangs():
    with open({log!r}, "a") as log:
        log.write("started\\n")
    import time

    time.sleep(600)
"""


LOOPS = """

def test_loops():
    import time

    while parse("a, b") != ["a", "b"]:
        time.sleep(1)


def test_slow_spaces():
    import time

    assert parse("a, b") == ["a", "b"]
    time.sleep(11)


def test_slow_plain():
    import time

    time.sleep(11)
"""


@pytest.mark.slow
def test_a_bug_that_loops_reproduces_its_fail_to_pass_label_and_gold_resolves_it(
        make_repo, tmp_path: Path) -> None:
    # test_loops hangs without the fix: the failure its label says. The slow tests pass past
    # the stall limit (8 s) and within twice it, in the run of their own that a label gets.
    published, mirrors = _calc_with_tests(make_repo, tmp_path, TESTS + LOOPS, {
        "instance_id": "fixture__calc-10",
        "FAIL_TO_PASS": [f"{TEST_FILE}::test_loops", f"{TEST_FILE}::test_slow_spaces"],
        "PASS_TO_PASS": [f"{TEST_FILE}::test_plain", f"{TEST_FILE}::test_slow_plain"]})
    out, _ = _prepare(published, mirrors, tmp_path, "--no-refdb", "--stall-timeout", "8")
    verdict = json.loads(out.read_text())["prepare"]
    assert verdict["status"] == "reproduced", verdict
    assert verdict["fail_to_pass"]["reproduced"] == [f"{TEST_FILE}::test_loops",
                                                     f"{TEST_FILE}::test_slow_spaces"]
    assert f"{TEST_FILE}::test_slow_plain" in verdict["pass_to_pass"]["reproduced"], verdict
    ids = _gold_resolved(out, mirrors, tmp_path, "--stall-timeout", "8")
    assert ids.get("RESOLVED") == ["fixture__calc-10"], ids


@pytest.mark.slow
def test_a_pass_to_pass_label_that_hangs_alone_before_the_patch_gets_no_run_of_its_own_after_it(
        make_repo, tmp_path: Path) -> None:
    # before the patch: hangs in the run, then in its run of its own (twice the limit); after
    # it: hangs in the run, and its verdict is known already, so no run of its own again
    log = tmp_path / "hang-starts.log"
    published, mirrors = _calc_with_tests(make_repo, tmp_path, SPACES_TEST + HANGS.format(log=str(log)), {
        "instance_id": "fixture__calc-11", "FAIL_TO_PASS": [f"{TEST_FILE}::test_spaces"],
        "PASS_TO_PASS": [f"{TEST_FILE}::test_hangs"]})
    out, _ = _prepare(published, mirrors, tmp_path, "--no-refdb", "--stall-timeout", "8")
    verdict = json.loads(out.read_text())["prepare"]
    assert verdict["pass_to_pass"]["hung"] == [f"{TEST_FILE}::test_hangs"], verdict
    assert verdict["fail_to_pass"]["reproduced"] == [f"{TEST_FILE}::test_spaces"]
    assert log.read_text().splitlines() == ["started"] * 3  # the seeded reruns leave it out


@pytest.mark.slow
def test_a_label_that_differs_once_is_run_again_and_a_flaky_test_is_no_verdict(
        make_repo, tmp_path: Path) -> None:
    tests = SPACES_TEST + ALTERNATES + HANGS.format(log=str(tmp_path / "hang-starts.log"))
    published, mirrors = _calc_with_tests(make_repo, tmp_path, tests, {
        "instance_id": "fixture__calc-8",
        "FAIL_TO_PASS": [f"{TEST_FILE}::test_spaces"], "PASS_TO_PASS": [f"{TEST_FILE}::test_alternates"]})
    out, stderr = _prepare(published, mirrors, tmp_path, "--no-refdb", "--stall-timeout", "8")
    assert "fixture__calc-8: labels differ; two more runs per side, under other hash seeds" in stderr
    # a test that never ends hangs once per side, not once per run (6 runs)
    assert (tmp_path / "hang-starts.log").read_text().splitlines() == ["started", "started"]
    verdict = json.loads(out.read_text())["prepare"]
    # the first run alone said "fails with the gold patch"; two more, under other seeds, pass
    assert verdict["pass_to_pass"]["differs"] == {}, verdict
    assert verdict["pass_to_pass"]["flaky"] == [f"{TEST_FILE}::test_alternates"], verdict
    assert verdict["fail_to_pass"]["reproduced"] == [f"{TEST_FILE}::test_spaces"]
    assert verdict["cause"] == "flaky" and verdict["runs"] == 3


@pytest.mark.slow
@pytest.mark.docker
def test_prepare_on_docker_leaves_instance_images_that_evaluate_uses(make_repo, tmp_path: Path) -> None:
    import docker

    published, mirrors = _fixed_after_base(make_repo, tmp_path)
    out = tmp_path / "prepared.jsonl"
    prepared = run_cli("prepare", str(published), "--out", str(out), "--mirrors", str(mirrors),
                       "--refdb", str(tmp_path / "ref.sqlite"), "--backend", "docker")
    assert prepared.returncode == 0, prepared.stderr[-3000:]
    record = json.loads(out.read_text())
    assert record["prepare"]["status"] == "reproduced", record["prepare"]
    labels = docker.from_env().images.get(record["image"]).labels  # the instance image exists
    assert labels["benchsmith.commit"] == record["base_commit"]
    # built while the next instance would run: the record waited for it and says what it keeps
    assert record["history"]["base_commit"] == record["base_commit"]
    assert record["prepare"]["image_s"] > 0
    ids = _gold_resolved(out, mirrors, tmp_path, "--backend", "docker")
    assert ids.get("RESOLVED") == ["fixture__calc-9"], ids


def test_django_docstring_names_are_the_tests_that_printed_them() -> None:
    from benchsmith.parsing import parse_test_output

    output = ("test_plain (admin.tests.AdminTests) ... ok\n"
              "test_login (admin.tests.AdminTests)\n"
              "A staff user can log in. ... ok\n"
              "test_logout (admin.tests.AdminTests)\n"
              "A staff user can log in. ... FAIL\n"
              "test_docs (admin.tests.DocTests.test_docs)\n"
              "Documentation pages render. ... ok\n")
    parsed = {t.name: t for t in parse_test_output(output, "unittest")}
    assert parsed["admin.tests.AdminTests.test_login"].description == "A staff user can log in."
    assert parsed["admin.tests.DocTests.test_docs"].description == "Documentation pages render."
    assert parsed["admin.tests.AdminTests.test_plain"].description is None
    described = {"A staff user can log in.": ["admin.tests.AdminTests.test_login",
                                              "admin.tests.AdminTests.test_logout"],
                 "Documentation pages render.": ["admin.tests.DocTests.test_docs"]}
    statuses = {name: test.status for name, test in parsed.items()}
    assert match("Documentation pages render.", statuses, described) == (
        ["admin.tests.DocTests.test_docs"], "docstring")
    assert status_of("Documentation pages render.", statuses, described) == P
    assert match("A staff user can log in.", statuses, described)[1] == "ambiguous: docstring"
    assert status_of("A staff user can log in.", statuses, described) is None


@pytest.mark.slow
def test_an_instance_older_than_its_groups_python_gets_an_environment_of_its_own(
        make_repo, tmp_path: Path) -> None:
    # The base commit imports an ABC from `collections`, gone in Python 3.10; the environment
    # commit, two years on, gets a Python of its date, where the base commit's code cannot
    # import. The instance is set up again alone, at its base commit, with a Python of its date.
    old = "from collections import Mapping\n\n" + CODE
    pyproject = PYPROJECT_TEST_EXTRA.replace('">=3.8"', '">=3.7"')
    repo = make_repo("calc", {"pyproject.toml": pyproject, CODE_FILE: old, TEST_FILE: TESTS},
                     date="2020-06-01T12:00:00+00:00")
    base = repo.commit({"README.md": "calc\n"}, date="2020-06-10T12:00:00+00:00")
    patch = working_diff(repo.path, {CODE_FILE: old.replace(CODE, PARSE_FIXED)})
    test_patch = working_diff(repo.path, {TEST_FILE: SPACES_TEST})
    setup = repo.commit({CODE_FILE: CODE.replace("def parse", "from collections.abc import Mapping"
                                                 "\n\n\ndef parse")},
                        date="2022-11-20T12:00:00+00:00")
    published, mirrors = published_file(repo.path, tmp_path, "calc", {
        "instance_id": "fixture__calc-10", "base_commit": base, "environment_setup_commit": setup,
        "created_at": "2020-06-15T10:00:00Z", "patch": patch, "test_patch": test_patch,
        "FAIL_TO_PASS": [f"{TEST_FILE}::test_spaces"], "PASS_TO_PASS": [f"{TEST_FILE}::test_plain"]})
    out = tmp_path / "prepared.jsonl"
    prepared = run_cli("prepare", str(published), "--out", str(out), "--mirrors", str(mirrors),
                       "--no-refdb")
    assert prepared.returncode == 0, prepared.stderr[-3000:]
    assert "labels not reproduced on a Python newer than the instance" in prepared.stderr, prepared.stderr[-3000:]
    record = json.loads(out.read_text())
    assert record["prepare"]["status"] == "reproduced", record["prepare"]
    assert record["prepare"]["setup_commit"] == base and record["python"] in ("3.7", "3.8")
    ids = _gold_resolved(out, mirrors, tmp_path)
    assert ids.get("RESOLVED") == ["fixture__calc-10"], ids


DOWNLOADS = '''
import urllib.request

urllib.request.urlopen("http://data.invalid/tables.csv")  # data fetched while collected
'''


@pytest.mark.slow
def test_tests_that_download_while_collected_are_not_reproduced_for_the_network(
        make_repo, tmp_path: Path) -> None:
    # calc-12's test patch adds a conftest that downloads: the tests give no results at all;
    # calc-13's test module downloads on import: pytest names only the module. Neither is an
    # error of the harness nor a naming problem: the cause is the network.
    import subprocess

    from benchsmith.parsing import reaches_network

    repo = make_repo("calc", {"pyproject.toml": PYPROJECT_TEST_EXTRA, CODE_FILE: CODE, TEST_FILE: TESTS})
    base = repo.commit({"README.md": "calc\n"}, date="2023-05-10T12:00:00+00:00")

    def diff(files: dict[str, str]) -> str:
        for name, text in files.items():
            (repo.path / name).write_text(text)
        subprocess.run(["git", "add", "-A"], cwd=repo.path, check=True)
        patch = subprocess.run(["git", "diff", "--cached"], cwd=repo.path, capture_output=True,
                               text=True, check=True).stdout
        subprocess.run(["git", "reset", "-q", "--hard"], cwd=repo.path, check=True)
        return patch

    rows = [{"instance_id": f"fixture__calc-{n}", "base_commit": base, "version": "1.0",
             "created_at": "2023-05-12T10:00:00Z", "patch": diff({CODE_FILE: PARSE_FIXED}),
             "test_patch": diff(files), "FAIL_TO_PASS": [f"{TEST_FILE}::test_spaces"],
             "PASS_TO_PASS": [f"{TEST_FILE}::test_plain"]}
            for n, files in ((12, {TEST_FILE: SPACES_TEST, "tests/conftest.py": DOWNLOADS}),
                             (13, {TEST_FILE: DOWNLOADS + SPACES_TEST}))]
    published, mirrors = published_file(repo.path, tmp_path, "calc", rows[0])
    published.write_text("".join(json.dumps({**json.loads(published.read_text()), **row}) + "\n"
                                 for row in rows))
    out, _ = _prepare(published, mirrors, tmp_path, "--no-refdb")
    verdicts = {r["instance_id"]: r["prepare"] for r in map(json.loads, out.read_text().splitlines())}
    conftest, module = verdicts["fixture__calc-12"], verdicts["fixture__calc-13"]
    assert conftest["status"] == "error" and conftest["cause"] == "network", conftest
    assert reaches_network(conftest["reason"]), conftest  # the error, as the log says it
    assert module["status"] == "differs" and module["cause"] == "network", module
    assert module["fail_to_pass"]["needs_network"] == [f"{TEST_FILE}::test_spaces"], module
