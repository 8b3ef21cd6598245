"""Building task instances from pull requests, end to end with real installs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from benchsmith.mining.build import InstanceBuilder
from benchsmith.mining.models import PullRequest
from benchsmith.sandbox import LocalSandboxConfig
from benchsmith.setup.engine import SetupEngine, SetupOptions

from .test_setup_engine import PYPROJECT_TEST_EXTRA

pytestmark = pytest.mark.slow

BUGGY = "def parse(text):\n    return text.split(',')\n"
FIXED = "def parse(text):\n    return [part.strip() for part in text.split(',')]\n"
OLD_TESTS = "from calc import parse\n\ndef test_plain():\n    assert parse('a,b') == ['a', 'b']\n"
NEW_TESTS = OLD_TESTS + "\ndef test_spaces():\n    assert parse('a, b') == ['a', 'b']\n"


def diff(repo: Path, a: str, b: str) -> str:
    return subprocess.run(["git", "diff", a, b], cwd=repo, capture_output=True, text=True, check=True).stdout


def bug_and_fix(make_repo, new_tests: str = NEW_TESTS):
    """A repository with a bug at `base` and the commit `fix` that fixes it and adds a test."""
    repo = make_repo("calc", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": BUGGY,
                              "tests/test_calc.py": OLD_TESTS})
    base = repo.commit({"README.md": "calc\n"}, date="2023-05-10T12:00:00+00:00")
    fix = repo.commit({"src/calc/__init__.py": FIXED, "tests/test_calc.py": new_tests},
                      "Strip spaces (#2)", date="2023-05-16T12:00:00+00:00")
    return repo, base, fix


def pr_from(repo, number: int, base: str, merged: str, **fields) -> PullRequest:
    from benchsmith.harness.patches import split_patch

    patch, test_patch = split_patch(diff(repo.path, base, merged))
    fields.setdefault("problem_statement", f"Issue for #{number}")
    fields.setdefault("created_at", "2023-05-15T10:00:00+00:00")
    return PullRequest(repo="fixture/calc", number=number, base_commit=base, merge_commit=merged,
                       patch=patch, test_patch=test_patch, source=str(repo.path), **fields)


# A test its own module declares flaky is no label, however it behaved here.
FLAKY_TEST = ("\nimport pytest\n\n\n@pytest.mark.flaky(reruns=3)\ndef test_spaces_timed():\n"
              "    assert parse('a, b') == ['a', 'b']\n")


def test_build_keeps_fail_to_pass_instances_and_reuses_the_environment(make_repo, tmp_path: Path) -> None:
    repo, base, fix = bug_and_fix(make_repo, NEW_TESTS + FLAKY_TEST)
    docs = repo.commit({"src/calc/__init__.py": FIXED + "# note\n",
                        "tests/test_calc.py": NEW_TESTS + "\ndef test_more():\n    assert parse('x') == ['x']\n"},
                       "Add a test that passes already (#3)", date="2023-05-20T12:00:00+00:00")
    prs = [pr_from(repo, 2, base, fix, issue_numbers=[1]), pr_from(repo, 3, fix, docs, issue_numbers=[4])]
    prs[1].created_at = "2023-05-19T10:00:00+00:00"
    engine = SetupEngine(SetupOptions(sandbox=LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")),
                                      refdb=str(tmp_path / "ref.sqlite")))
    out, log = tmp_path / "instances.jsonl", tmp_path / "build-log.jsonl"
    outcomes = InstanceBuilder(engine).build(prs, out, log)
    assert [(o.instance_id, o.stage, o.setup_reused) for o in outcomes] == [
        ("fixture__calc-3", "no_fail_to_pass", False),
        ("fixture__calc-2", "valid", True),
    ]
    [instance] = [json.loads(line) for line in out.read_text().splitlines()]
    assert instance["instance_id"] == "fixture__calc-2"
    assert json.loads(instance["FAIL_TO_PASS"]) == ["tests/test_calc.py::test_spaces"]
    assert json.loads(instance["PASS_TO_PASS"]) == ["tests/test_calc.py::test_plain"]
    assert instance["flaky"] == ["tests/test_calc.py::test_spaces_timed"]
    assert instance["environment_setup_commit"] == fix
    assert instance["tests_s"] > 0 and instance["instance_s"] >= instance["tests_s"]
    # Resumable: a second run redoes nothing.
    assert InstanceBuilder(engine).build(prs, out, log) == []


def test_build_command_writes_instances_and_funnel(make_repo, tmp_path: Path) -> None:
    from .test_cli_batch import one_line_error, run_cli

    repo, base, fix = bug_and_fix(make_repo)
    prs = tmp_path / "prs.jsonl"
    # opened long before the commit it was merged onto: pinned to that commit's day, not its own
    opened = pr_from(repo, 2, base, fix, issue_numbers=[1], created_at="2019-03-01T10:00:00+00:00")
    prs.write_text(opened.model_dump_json() + "\n")
    out = tmp_path / "instances.jsonl"
    result = run_cli("build", str(prs), "--out", str(out), "--refdb", str(tmp_path / "ref.sqlite"))
    assert result.returncode == 0, result.stderr
    [instance] = [json.loads(line) for line in out.read_text().splitlines()]
    assert instance["exclude_newer"].startswith("2023-05-10"), instance["exclude_newer"]
    assert instance["created_at"].startswith("2019-03-01")
    funnel = json.loads((tmp_path / "instances.funnel.json").read_text())
    assert funnel["pr_stages"] == {"valid PRs": 1, "setup succeeds": 1, "valid instances": 1}
    assert funnel["repo_stages"]["has valid PR"] == 1
    assert "PRs: valid instances" in result.stdout
    assert_loads_with_swebench(out, tmp_path)

    prs.write_text('{"repo": "x"}\n')
    assert "prs.jsonl:1: missing fields number" in one_line_error(run_cli("build", str(prs)))


def assert_loads_with_swebench(instances: Path, tmp_path: Path) -> None:
    """The `swebench` package's own loader reads the file (installed with uv, pinned)."""
    from benchsmith.sandbox.tools import uv_binary

    venv = tmp_path / "swebench-venv"
    subprocess.run([uv_binary(), "venv", "-q", "-p", "3.11", str(venv)], check=True)
    subprocess.run([uv_binary(), "pip", "install", "-q", "--python", str(venv / "bin" / "python"),
                    "--exclude-newer", "2025-06-01", "swebench"], check=True)
    code = ("import json, sys\n"
            "from swebench.harness.utils import load_swebench_dataset\n"
            "data = load_swebench_dataset(sys.argv[1])\n"
            "f2p = lambda v: json.loads(v) if isinstance(v, str) else v\n"
            "print(json.dumps([[d['instance_id'], f2p(d['FAIL_TO_PASS'])] for d in data]))")
    loaded = subprocess.run([str(venv / "bin" / "python"), "-c", code, str(instances)],
                            capture_output=True, text=True, check=True)
    # lists as published: JSON-encoded strings (SWE-bench's shape) or real lists
    expected = [[r["instance_id"], json.loads(r["FAIL_TO_PASS"]) if isinstance(r["FAIL_TO_PASS"], str)
                 else r["FAIL_TO_PASS"]] for r in map(json.loads, instances.read_text().splitlines())]
    assert json.loads(loaded.stdout.strip().splitlines()[-1]) == expected


def test_a_kill_between_instance_and_log_line_neither_loses_nor_duplicates(make_repo, tmp_path: Path) -> None:
    repo, base, fix = bug_and_fix(make_repo)
    engine = SetupEngine(SetupOptions(sandbox=LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")),
                                      refdb=str(tmp_path / "ref.sqlite")))
    out, log = tmp_path / "instances.jsonl", tmp_path / "build-log.jsonl"
    InstanceBuilder(engine).build([pr_from(repo, 2, base, fix)], out, log)
    log.write_text("")  # killed after writing the instance, before its log line
    with open(out, "a") as handle:
        handle.write('{"instance_id": "fixture__calc-9", "rep')  # and a half-written line
    assert InstanceBuilder(engine).build([pr_from(repo, 2, base, fix)], out, log) == []
    assert [json.loads(line)["instance_id"] for line in out.read_text().splitlines()] == ["fixture__calc-2"]


def test_the_funnel_counts_base_commits_set_up_per_year_of_the_pr() -> None:
    from benchsmith.mining.funnel import build_funnel
    from benchsmith.mining.models import Outcome

    def pr(number: int, merged: str | None, created: str) -> PullRequest:
        return PullRequest(repo="o/r", number=number, base_commit="b", created_at=created,
                           merged_at=merged, patch="p", test_patch="t")

    prs = [pr(1, "2015-03-01T00:00:00Z", "2014-12-30"), pr(2, None, "2015-07-01"),
           pr(3, "2022-01-01T00:00:00Z", "2021-12-31"), pr(4, "2022-02-01T00:00:00Z", "2022-01-01")]
    outcomes = [Outcome(instance_id="o__r-1", repo="o/r", stage="setup_failed"),
                Outcome(instance_id="o__r-2", repo="o/r", stage="no_fail_to_pass"),
                Outcome(instance_id="o__r-3", repo="o/r", stage="valid"),
                Outcome(instance_id="o__r-4", repo="o/r", stage="error", reason="no runnable test")]
    years = build_funnel(prs, outcomes).setup_by_year
    # the year of the merge, else of the creation; an error is not a setup that was tried
    assert list(years) == ["2015", "2022"]
    assert (years["2015"].tried, years["2015"].set_up, years["2015"].setup_failed) == (2, 1, 1)
    assert years["2015"].share == 0.5
    assert (years["2022"].tried, years["2022"].set_up, years["2022"].errors) == (1, 1, 1)


def test_the_funnel_adds_up_to_a_recount_of_the_outcome_log(tmp_path: Path) -> None:
    from benchsmith.harness.jsonl import JsonlWriter
    from benchsmith.mining.build import read_outcomes
    from benchsmith.mining.funnel import build_funnel
    from benchsmith.mining.models import Outcome

    prs = [PullRequest(repo=f"o/r{n % 2}", number=n, base_commit="b", created_at="2023-01-01",
                       patch="p", test_patch="t") for n in range(1, 11)]
    stages = ["valid", "valid", "no_fail_to_pass", "setup_failed", "error", "error", "limit",
              "hung", "gold_unresolved"]
    log = tmp_path / "build.log.jsonl"
    writer = JsonlWriter(log)
    writer.write(Outcome(instance_id="o__r1-1", repo="o/r1", stage="error", reason="first try"))
    for n, stage in enumerate(stages, start=1):  # PR 10 has no outcome: never tried
        writer.write(Outcome(instance_id=f"o__r{n % 2}-{n}", repo=f"o/r{n % 2}", stage=stage,
                             reason="no available Python" if stage == "error" else ""))
    outcomes = read_outcomes(log)  # the last line of a PR wins
    funnel = build_funnel(prs, outcomes)
    recount: dict[str, int] = {}
    for outcome in outcomes:
        recount[outcome.stage] = recount.get(outcome.stage, 0) + 1
    assert funnel.terminal == {"not tried": 1, **{s: recount.get(s, 0) for s in
                               ("limit", "setup_failed", "error", "no_fail_to_pass", "hung",
                                "low_quality", "gold_unresolved", "valid")}}
    assert sum(funnel.terminal.values()) == funnel.pr_stages["valid PRs"] == 10
    # errors are never "setup succeeds": only the PRs whose tests ran are
    assert funnel.pr_stages == {"valid PRs": 10, "setup succeeds": 5, "valid instances": 2}
    assert funnel.error_reasons == {"no available Python": 2}
    assert sum(row.errors for row in funnel.rows) == 2
    # by year of the PR: only PRs whose base commit went through setup count as tried
    assert {y: r.model_dump() for y, r in funnel.setup_by_year.items()} == {
        "2023": {"tried": 6, "set_up": 5, "setup_failed": 1, "errors": 2}}
    # with a cap of 1 instance per repository, which o/r0 reached, its untried PR is `limit`
    capped = build_funnel(prs, outcomes, per_repo=1)
    assert capped.terminal["limit"] == 2 and capped.terminal["not tried"] == 0
    assert sum(capped.terminal.values()) == 10


WORDS = "def split_words(text):\n    return text.split()\n"
WORDS_TESTS = "from calc.words import split_words\n\n\ndef test_split_words():\n    assert split_words('a b') == ['a', 'b']\n"


def test_quality_flags_drop_leaking_statements_and_flag_import_error_f2p(make_repo, tmp_path: Path) -> None:
    repo, base, _ = bug_and_fix(make_repo)
    run = subprocess.run
    run(["git", "checkout", "-q", base], cwd=repo.path, check=True)
    added = repo.commit({"src/calc/words.py": WORDS, "tests/test_words.py": WORDS_TESTS},
                        "Words (#5)", date="2023-05-17T12:00:00+00:00")
    honest = ("Callers keep writing their own loops to cut a sentence into its words, and each "
              "of them handles repeated blanks differently; calc should offer this once.")
    leaking = "Add split_words to calc.words, it should return text.split() for the caller."
    prs = [pr_from(repo, 5, base, added, issue_numbers=[4], problem_statement=honest),
           pr_from(repo, 6, base, added, issue_numbers=[7], problem_statement=leaking),
           pr_from(repo, 8, base, added, issue_numbers=[9],
                   problem_statement="https://example.org/tracker/issue/9")]
    engine = SetupEngine(SetupOptions(sandbox=LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")),
                                      refdb=str(tmp_path / "ref.sqlite")))
    out, log = tmp_path / "instances.jsonl", tmp_path / "build-log.jsonl"
    outcomes = {o.instance_id: o for o in InstanceBuilder(engine).build(prs, out, log)}
    assert outcomes["fixture__calc-5"].stage == "valid"
    assert set(outcomes["fixture__calc-5"].flags) == {"f2p_by_collection_error"}
    assert outcomes["fixture__calc-6"].stage == "low_quality"
    assert "solution_leak: split_words" in outcomes["fixture__calc-6"].reason
    assert outcomes["fixture__calc-8"].stage == "low_quality"
    assert outcomes["fixture__calc-8"].reason.startswith("statement_is_link")
    [instance] = [json.loads(line) for line in out.read_text().splitlines()]
    assert instance["quality_flags"]["f2p_by_collection_error"].startswith("1 test(s)")

    from benchsmith.mining.build import read_outcomes
    from benchsmith.mining.funnel import build_funnel

    funnel = build_funnel(prs, read_outcomes(log))
    assert funnel.flags == {"f2p_by_collection_error": 3, "solution_leak": 1, "statement_is_link": 1}
    assert funnel.terminal["low_quality"] == 2 and funnel.terminal["valid"] == 1


def test_quality_flag_rules() -> None:
    from benchsmith.core import TestStatus
    from benchsmith.mining.quality import dropped, leaked, quality_flags

    patch = ("--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,3 @@\n def parse(text):\n"
             "-    return text\n+    check_imaginary = True  # new\n+    return text.strip()\n")
    assert leaked("added check_imaginary parameter to the function", patch) == ["check_imaginary"]
    assert leaked("parse() keeps the text as it is", patch) == []  # parse exists already
    flags = quality_flags("Fixes it", "pr", patch, [f"t.py::test_{n}" for n in range(25)],
                          {"t.py": TestStatus.ERROR})
    assert set(flags) == {"statement_too_short", "statement_from_pr", "f2p_by_collection_error",
                          "f2p_many"}
    assert dropped(flags, "default") == [] and dropped(flags, "off") == []
    assert dropped(flags, "strict") == sorted(flags)


def test_a_setup_that_ends_in_an_error_is_no_setup_verdict(make_repo, tmp_path: Path, monkeypatch) -> None:
    """A repository's task limit (or the machine) ending a base commit's setup is an error, not
    a base commit that fails to set up: the funnel's setup share counts verdicts only."""
    from benchsmith.mining import build
    from benchsmith.setup.record import SetupRecord

    repo, base, fix = bug_and_fix(make_repo)
    ended = {"error": "exceeded the wall-clock limit of 900s; cancelled", "failed": "tests fail"}
    for status, reason in ended.items():
        monkeypatch.setattr(build, "set_up", lambda *a, status=status, reason=reason, **k: SetupRecord(
            repo="fixture/calc", source=str(repo.path), status=status, failure_reason=reason))
        out, log = tmp_path / f"{status}.jsonl", tmp_path / f"{status}-log.jsonl"
        [outcome] = InstanceBuilder(SetupEngine(SetupOptions())).build(
            [pr_from(repo, 2, base, fix, issue_numbers=[1])], out, log)
        assert (outcome.stage, outcome.reason) == (
            "error" if status == "error" else "setup_failed", reason)
