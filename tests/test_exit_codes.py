"""Every command that did nothing says so in one line and exits non-zero; a re-run redoes what
ended in an infrastructure error, not what ended in a verdict."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from .test_cli_batch import run_cli


def _one_error(result: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def test_setup_batch_whose_every_line_is_an_input_error_fails(tmp_path: Path) -> None:
    listing = tmp_path / "list.txt"
    listing.write_text(f"{tmp_path / 'no-such-one'}\n{tmp_path / 'no-such-two'}\n")
    result = run_cli("setup-batch", str(listing), "--out", str(tmp_path / "out.jsonl"))
    line = _one_error(result)
    assert "every one is an input error" in line and "no-such-one" in line


def test_nearby_on_a_malformed_file_names_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "results.jsonl"
    bad.write_text("not json at all\n")
    assert _one_error(run_cli("nearby", str(bad))) == (
        f"error: {bad}:1: not valid JSON (expected a line written by setup-batch)")
    bad.write_text(json.dumps({"status": "validated"}) + "\n")
    assert "results.jsonl:1: missing fields repo, source" in _one_error(run_cli("nearby", str(bad)))
    bad.write_text("")
    assert "it is empty" in _one_error(run_cli("nearby", str(bad)))


def test_build_on_an_empty_list_or_a_bad_record_fails(tmp_path: Path) -> None:
    prs = tmp_path / "prs.jsonl"
    prs.write_text("")
    assert "no pull request in" in _one_error(run_cli("build", str(prs)))
    prs.write_text(json.dumps({"repo": "a/b"}) + "\n")
    line = _one_error(run_cli("build", str(prs)))
    assert "prs.jsonl:1: missing fields number, base_commit" in line
    assert "validation error" not in line


def test_mine_whose_only_clone_failed_fails_and_is_retried(tmp_path: Path) -> None:
    repos = tmp_path / "repos.txt"
    repos.write_text(f"{tmp_path / 'no-such-clone'} owner/name\n")
    out = tmp_path / "prs.jsonl"
    first = run_cli("mine", str(repos), "--from-git", "--out", str(out))
    assert "no repository could be mined" in _one_error(first, 1)
    assert "--retry-failed" in first.stderr
    again = run_cli("mine", str(repos), "--from-git", "--out", str(out), "--retry-failed")
    assert "mining owner/name" in again.stderr, again.stderr  # the error is redone
    assert "no repository could be mined" in _one_error(again, 1)
    log = [json.loads(line) for line in out.with_name("prs.jsonl.repos.jsonl").read_text().splitlines()]
    assert len(log) == 2 and all(entry["error"] for entry in log)


def test_setupbench_run_on_a_malformed_file_fails(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("garbage\n")
    line = _one_error(run_cli("setupbench", "run", str(tasks), "--out", str(tmp_path / "r.jsonl")))
    assert "no usable task in" in line
    assert not (tmp_path / "r.jsonl").exists()


def test_refresh_on_an_empty_list_fails_without_using_up_its_cutoff(make_repo, tmp_path: Path) -> None:
    empty = tmp_path / "repos.txt"
    empty.write_text("# nothing yet\n")
    dataset = tmp_path / "dataset"
    assert "no repository in" in _one_error(run_cli("refresh", str(dataset), "--repos", str(empty)))
    assert not dataset.exists()
    # An existing dataset whose list became empty: no split is added, the cut-off stays.
    repo = make_repo("calc", {"calc.py": "A = 1\n"})
    listed = tmp_path / "one.txt"
    listed.write_text(f"{repo.path} fixture/calc\n")
    created = run_cli("refresh", str(dataset), "--repos", str(listed), "--until", "2023-01-01",
                      "--no-refdb")
    assert created.returncode == 0, created.stderr
    manifest = json.loads((dataset / "dataset.json").read_text())
    (dataset / "repos.txt").write_text("\n")
    line = _one_error(run_cli("refresh", str(dataset), "--until", "2024-01-01"))
    assert "the cut-off is not used up" in line
    assert json.loads((dataset / "dataset.json").read_text()) == manifest


def test_setup_batch_redoes_infrastructure_errors_not_verdicts(tmp_path: Path) -> None:
    listing = tmp_path / "list.txt"
    listing.write_text(f"{tmp_path / 'gone'}\n")
    out = tmp_path / "out.jsonl"
    run_cli("setup-batch", str(listing), "--out", str(out))
    record = json.loads(out.read_text())
    for status, category, redone in (("error", "infrastructure", True), ("failed", "tests", False)):
        out.write_text(json.dumps({**record, "status": status, "failure_category": category}) + "\n")
        run_cli("setup-batch", str(listing), "--out", str(out))
        lines = out.read_text().splitlines()
        assert len(lines) == (2 if redone else 1), (status, lines)
