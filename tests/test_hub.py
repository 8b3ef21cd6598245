"""Instances as SWE-bench users have them: a Hugging Face dataset saved to disk or in the
local cache (nothing is downloaded), and `--instance-ids` to pick some. Real `datasets`, a real
evaluation on the local backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .evaluation_fixture import build_instances, write_instances
from .test_cli_batch import one_line_error, run_cli


@pytest.mark.slow
def test_a_dataset_saved_to_disk_is_evaluated_for_the_ids_asked(make_repo, tmp_path: Path) -> None:
    import datasets

    repo, instances = build_instances(make_repo)
    rows = [json.loads(line) for line in
            write_instances(tmp_path / "i.jsonl", instances).read_text().splitlines()]
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "lite"))
    result = run_cli("evaluate", "--instances", str(tmp_path / "lite"), "--predictions", "gold",
                     "--instance-ids", "fixture__calc-1,fixture__calc-9",
                     "--source", f"fixture/calc={repo}", "--out", str(tmp_path / "runs"))
    assert result.returncode == 0, result.stderr
    assert "warning: no instance fixture__calc-9: skipped" in result.stderr
    final = json.loads((tmp_path / "runs" / "fix-gold" / "gold.fix-gold.json").read_text())
    assert final["resolved_ids"] == ["fixture__calc-1"] and final["submitted_instances"] == 1


def test_a_dataset_name_not_in_the_local_cache_is_one_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    result = run_cli("evaluate", "--instances", "nobody-here/SWE-bench_Nothing:test",
                     "--predictions", "gold", "--out", str(tmp_path / "runs"))
    line = one_line_error(result)
    assert line.startswith("error: cannot read the instances dataset nobody-here/SWE-bench_Nothing:test "
                           "(split test) from the local cache or disk"), line


@pytest.fixture
def saved_splits(make_repo, tmp_path: Path) -> Path:
    """A DatasetDict saved to disk: calc-1 in `test`, calc-2 in `dev`."""
    import datasets

    _, instances = build_instances(make_repo)
    rows = {json.loads(line)["instance_id"]: json.loads(line) for line in
            write_instances(tmp_path / "i.jsonl", instances).read_text().splitlines()}
    saved = tmp_path / "lite"
    datasets.DatasetDict({
        "test": datasets.Dataset.from_list([rows["fixture__calc-1"]]),
        "dev": datasets.Dataset.from_list([rows["fixture__calc-2"]]),
    }).save_to_disk(str(saved))
    return saved


def _listed(result) -> list[str]:
    assert result.returncode == 0, result.stderr
    return [word for line in result.stdout.splitlines() for word in line.split()
            if word.startswith("fixture__calc-")]


def test_split_picks_one_split_of_a_dataset_saved_to_disk(saved_splits: Path) -> None:
    assert _listed(run_cli("prepare", str(saved_splits), "--dry-run")) == ["fixture__calc-1"]
    assert _listed(run_cli("prepare", str(saved_splits), "--split", "dev", "--dry-run")) == [
        "fixture__calc-2"]
    assert _listed(run_cli("prepare", "--instances", str(saved_splits), "--split", "test",
                           "--dry-run")) == ["fixture__calc-1"]
    assert _listed(run_cli("prepare", f"{saved_splits}:dev", "--dry-run")) == ["fixture__calc-2"]


def test_a_split_the_dataset_lacks_is_one_line_naming_the_ones_it_has(saved_splits: Path) -> None:
    line = one_line_error(run_cli("prepare", str(saved_splits), "--split", "train", "--dry-run"))
    assert line == f"error: the instance dataset {saved_splits} has no split train: it has test, dev"


def test_split_on_what_has_no_splits_is_one_line(saved_splits: Path, tmp_path: Path) -> None:
    jsonl = tmp_path / "i.jsonl"
    line = one_line_error(run_cli("prepare", str(jsonl), "--split", "dev", "--dry-run"))
    assert line == ("error: --split applies to a Hugging Face dataset name or a dataset saved to "
                    f"disk, not to the file {jsonl}")
    line = one_line_error(run_cli("evaluate", "owner/lite:dev", "--split", "test",
                                  "--predictions", "gold"))
    assert line == "error: owner/lite:dev names the split dev, --split says test"
    line = one_line_error(run_cli("evaluate", "owner/lite", "--split", "a/b", "--predictions", "gold"))
    assert line.startswith("error: bad split name 'a/b'")


def test_split_of_a_name_reads_that_split_from_the_local_cache(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    result = run_cli("evaluate", "nobody-here/SWE-bench_Nothing", "--split", "dev",
                     "--predictions", "gold", "--out", str(tmp_path / "runs"))
    line = one_line_error(result)
    assert line.startswith("error: cannot read the instances dataset nobody-here/SWE-bench_Nothing:dev "
                           "(split dev) from the local cache or disk"), line
