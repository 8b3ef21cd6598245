"""The command line: setup, setup-batch (resume, bad lines, summary) and bad-input handling."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchsmith.harness.jsonl import load_finished
from benchsmith.setup.batch import read_list

from .conftest import PIN_DATE
from .test_setup_engine import CALC, CALC_TESTS, PYPROJECT_TEST_EXTRA


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchsmith.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=900)


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["setup", "/no/such/repo"], "repository path does not exist"),
        (["setup", "file:///no/such/repo.git"], "cannot clone"),
        (["setup", ".", "--backend", "cloud"], "unknown backend 'cloud'"),
        (["setup-batch", "/no/such/list.txt", "--out", "x.jsonl"], "cannot read list file"),
        (["setup-batch", "list.txt", "--out", "x.jsonl", "--date", "2023-13-01"], "invalid date"),
        (["candidates"], "give exactly one of --from-pypi-top N and --repos FILE"),
        (["candidates", "--repos", "/no/such/file"], "/no/such/file"),
        (["build", "/no/such/prs.jsonl"], "PR file not found"),
        (["verify", "list.txt", "--backend", "cloud"], "unknown backend 'cloud'"),
        (["setup-batch", "list.txt", "--out", "x.jsonl", "--jobs", "0"], "Invalid value for '--jobs'"),
        (["setup", ".", "--stall-timeout", "0.5"], "Invalid value for '--stall-timeout'"),
        (["setup", ".", "--no-such-option"], "No such option: --no-such-option"),
        (["verify", "/no/such/instances.jsonl"], "instances file not found"),
        (["evaluate", "--instances", "x", "--predictions", "gold", "--backend", "cloud"],
         "unknown backend 'cloud'"),
        (["build", "list.txt", "--ca-bundle", "/no/such/ca.pem"], "CA bundle not found"),
        (["evaluate", "--instances", "x", "--predictions", "gold", "--source", "o/r"],
         "invalid --source 'o/r'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], expected: str, tmp_path: Path) -> None:
    (tmp_path / "list.txt").write_text("x\n")
    assert expected in one_line_error(run_cli(*args, cwd=tmp_path))


def test_date_before_first_commit(make_repo, tmp_path: Path) -> None:
    repo = make_repo("early", {"setup.py": "from setuptools import setup\nsetup(name='e')\n"})
    line = one_line_error(run_cli("setup", str(repo.path), "--date", "1999-01-01"))
    assert "no commit on the default branch" in line


def test_read_list_parses_targets_and_flags_bad_lines(tmp_path: Path) -> None:
    listing = tmp_path / "repos.txt"
    listing.write_text(
        "# comment\n\nrepo-a\nrepo-b 2021-06-01\nrepo-c abc123  # trailing comment\n"
        "repo-d 2021-02-30\nrepo-e one two\nrepo-f abc123 2019-07-27\nrepo-g a b c\n"
    )
    items = read_list(listing, "2023-06-01")
    assert [(i.source, i.rev, i.date, i.problem is None) for i in items] == [
        ("repo-a", None, "2023-06-01", True),
        ("repo-b", None, "2021-06-01", True),
        ("repo-c", "abc123", "2023-06-01", True),
        ("repo-d", None, "2023-06-01", False),
        ("repo-e", "one", "2023-06-01", False),  # the third field must be a date
        ("repo-f", "abc123", "2019-07-27", True),  # a commit pinned to a day
        ("repo-g", "b", "2023-06-01", False),  # four fields: a problem
    ]
    assert "invalid date" in (items[3].problem or "") and "invalid date" in (items[4].problem or "")


def test_read_list_takes_published_instances(tmp_path: Path) -> None:
    rows = [
        {"instance_id": "o__r-1", "repo": "o/r", "base_commit": "abc123",
         "created_at": "2021-10-13T19:35:57Z", "FAIL_TO_PASS": "[]"},
        {"instance_id": "o__r-2", "repo": "o/r", "base_commit": "abc123",
         "created_at": "2021-10-13T20:00:00Z"},  # the same environment: set up once
        {"instance_id": "o__r-3", "repo": "o/r", "base_commit": "def456", "created_at": "13/10/2021"},
        {"instance_id": "x", "base_commit": "abc"},
    ]
    listing = tmp_path / "lite.jsonl"
    listing.write_text("".join(json.dumps(r) + "\n" for r in rows) + "not json\n")
    items = read_list(listing, None)
    assert [(i.source, i.rev, i.date) for i in items[:1]] == [("o/r", "abc123", "2021-10-13")]
    assert items[0].key == "o/r abc123 2021-10-13" and items[0].problem is None
    assert "invalid created_at" in (items[1].problem or "")
    assert "needs 'repo' and 'base_commit'" in (items[2].problem or "")
    assert "not JSON" in (items[3].problem or "")
    assert len(items) == 4


def test_a_published_instance_is_never_pinned_before_its_commit(make_repo) -> None:
    """`created_at` can predate the base commit, whose requirement files then name releases
    the instance's day did not have yet (as `prepare` pins groups)."""
    from benchsmith.setup.batch import BatchItem, setup_day

    repo = make_repo("dated", {"a.txt": "a\n"}, date="2023-05-01T12:00:00+00:00")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo.path, capture_output=True,
                            text=True, check=True).stdout.strip()
    def item(day: str, published: bool) -> BatchItem:
        return BatchItem(line_no=1, key="k", source=str(repo.path), rev=commit, date=day,
                         not_before_commit=published)
    assert setup_day(item("2021-10-03", True), str(repo.path)) == "2023-05-01"
    assert setup_day(item("2023-06-01", True), str(repo.path)) == "2023-06-01"
    assert setup_day(item("2021-10-03", False), str(repo.path)) == "2021-10-03"  # a list line's own day


@pytest.mark.slow
def test_setup_batch_resumes_and_summarises(make_repo, tmp_path: Path) -> None:
    good = make_repo("good", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                              "tests/test_calc.py": CALC_TESTS})
    listing = tmp_path / "repos.txt"
    listing.write_text(f"{good.path}\n/no/such/repo\n{good.path} 2021-02-30\n")
    out = tmp_path / "results.jsonl"
    first = run_cli("setup-batch", str(listing), "--date", PIN_DATE, "--out", str(out), "--jobs", "2")
    assert first.returncode == 0, first.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["status"] for r in records) == ["error", "error", "validated"]
    bad = {r["input"]: r for r in records if r["status"] == "error"}
    assert "repository path does not exist" in bad[f"/no/such/repo {PIN_DATE}"]["failure_reason"]
    assert "validated" in first.stdout and "1 (33.3%)" in first.stdout
    assert "not validated: input" in first.stdout
    # each round of each setup has a progress line naming its commit (stderr is a file here)
    assert any("round 1: Python" in line and "@" in line
               for line in first.stderr.splitlines()), first.stderr

    # A batch killed while writing leaves half a line: the re-run cuts it and redoes nothing else.
    with open(out, "a") as handle:
        handle.write('{"repo": "half-writ')
    finished = load_finished(out)
    assert len(finished) == 3 and out.read_text().endswith("}\n")
    second = run_cli("setup-batch", str(listing), "--date", PIN_DATE, "--out", str(out))
    assert second.returncode == 0, second.stderr
    assert len(out.read_text().splitlines()) == 3
    assert "repositories" in second.stdout


@pytest.mark.slow
def test_setup_command_writes_the_record(make_repo, tmp_path: Path) -> None:
    repo = make_repo("cli", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                             "tests/test_calc.py": CALC_TESTS})
    out = tmp_path / "setup.json"
    result = run_cli("setup", str(repo.path), "--date", PIN_DATE, "--out", str(out))
    assert result.returncode == 0, result.stderr
    record = json.loads(out.read_text())
    for key in ("repo", "commit", "date", "status", "python", "install", "test", "tests", "pass_rate",
                "iterations", "duration_s", "clean_run_s", "llm_calls"):
        assert key in record
    assert record["status"] == "validated" and record["date"] == PIN_DATE
    assert record["tests"]["PASSED"] == 4


def test_bundled_example_validates(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parent.parent / "examples" / "minicalc"
    out = tmp_path / "setup.json"
    result = run_cli("setup", str(example), "--date", "2024-06-01", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text())["status"] == "validated"


def test_nearby_lists_older_commits_of_validated_records(make_repo, tmp_path: Path) -> None:
    from benchsmith.setup.batch import nearby_lines
    from benchsmith.setup.record import SetupRecord

    repo = make_repo("history", {"a.txt": "1\n"})
    first = repo.commit({"a.txt": "2\n"})
    last = repo.commit({"a.txt": "3\n"})
    validated = SetupRecord(repo="h", source=str(repo.path), commit=last, status="validated")
    failed = SetupRecord(repo="h", source=str(repo.path), commit=last, status="failed")
    assert nearby_lines([validated, failed], back=1) == [f"{repo.path} {first}"]
    result = run_cli("nearby", str(tmp_path / "missing.jsonl"))
    assert "results file not found" in one_line_error(result)
