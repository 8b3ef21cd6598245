"""scripts/bench_rows.py turns a benchmark's output files into the markdown rows of
docs/benchmarks.md: setup-batch and setupbench records, and the figures.json the bench scripts
write."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchsmith.setup.record import Iteration, SetupRecord
from benchsmith.setupbench.models import TaskResult

ROOT = Path(__file__).resolve().parent.parent


def rows(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_rows.py"), *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def _record(repo: str, status: str, rounds: int, duration: float, clean: float | None,
            category: str | None = None) -> str:
    return SetupRecord(repo=repo, source=f"mirrors/{repo}", date="2021-06-01", status=status,  # type: ignore[arg-type]
                       iterations=[Iteration(round=n + 1, python="3.9", origin="rules") for n in range(rounds)],
                       duration_s=duration, clean_run_s=clean, failure_category=category,
                       benchsmith_version="0.9.1").model_dump_json()


def test_setup_rows_from_setup_batch_records(tmp_path: Path) -> None:
    results = tmp_path / "2021-cold.jsonl"
    results.write_text("\n".join([
        _record("a/one", "validated", 1, 10.0, 10.0),
        _record("b/two", "validated", 2, 30.0, 15.0),
        _record("c/three", "failed", 3, 50.0, None, "installation"),
        _record("d/four", "error", 0, 0.0, None, "input"),
        "{not json",  # a line cut by an interrupted run is not a record
        _record("e/five", "error", 0, 0.0, None, "crash"),
        _record("e/five", "failed", 1, 20.0, None, "installation"),  # --retry-failed: this one counts
    ]) + "\n", encoding="utf-8")
    done = rows("setup", results, "--measured", "2026-11-24")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("| 2026-11-24 | 0.9.1 | 2021-cold | 2021-06-01 | 2 of 5 | 1 | 25 s | 110 s "
                                   "| 1.5 | input 1, installation 2 |")


def test_setupbench_rows_later_results_win(tmp_path: Path) -> None:
    def result(task: str, verdict: str, agent_s: float, reason: str = "") -> str:
        return TaskResult(input="tasks.jsonl", instance_id=task, task_type="reposetup", agent="benchsmith",
                          verdict=verdict, reason=reason, agent_s=agent_s,  # type: ignore[arg-type]
                          started_at="2026-11-23T10:00:00+00:00", benchsmith_version="0.9.0").model_dump_json()
    first, rerun = tmp_path / "first.jsonl", tmp_path / "rerun.jsonl"
    first.write_text("\n".join([result("alpha", "success", 60), result("beta", "failed", 100, "no module x"),
                                result("gamma", "error", 0, "commit not in the mirror")]) + "\n")
    rerun.write_text(result("beta", "success", 140) + "\n")
    done = rows("setupbench", first, rerun)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "| 2026-11-23 | 0.9.0 | 3 | 2 | 0 | 1 | 66.7% | 100.0% | 100 s |"
    tasks = rows("setupbench", "--tasks", first, rerun)
    assert tasks.stdout.splitlines() == ["| alpha | success | — |", "| beta | success | — |",
                                         "| gamma | error | commit not in the mirror |"]


def test_rows_from_figures_files(tmp_path: Path) -> None:
    for name in ("lite-prepare", "mining-docker", "marginal", "ray-lean"):
        (tmp_path / name).mkdir()
    prepare = tmp_path / "lite-prepare" / "figures.json"
    prepare.write_text(json.dumps({
        "instances": 23, "prepared": 22, "fail_to_pass_all_reproduced": 22, "pass_to_pass_all_reproduced": 20,
        "median_instance_s_environment_reused": 28.2, "median_environment_setup_s": 49.0,
        "gold": {"evaluated": 22, "resolved": 20}, "empty": {"evaluated": 22, "resolved": 0}}))
    assert rows("prepare", prepare, "--measured", "2026-11-23", "--code", "22f745b").stdout.strip() == (
        "| 2026-11-23 | 22f745b | lite-prepare | 23 | 22 | 22 of 22 | 20 of 22 | 28 s | 49 s | 20 of 22 | 0 of 22 |")
    mining = tmp_path / "mining-docker" / "figures.json"
    mining.write_text(json.dumps({
        "repositories_mined": 24, "valid_prs": 200, "instances": 60, "repositories_with_instances": 22,
        "gold": {"evaluated": 60, "resolved": 60}, "empty": {"evaluated": 60, "resolved": 0},
        "docker": {"gold": {"evaluated": 60, "resolved": 60}, "empty": {"evaluated": 60, "resolved": 0}},
        "quality_flag_share": {"statement_from_pr": 1.0, "f2p_many": 0.067}, "hung_tests_named": 3}))
    assert rows("mining", mining, "--measured", "2026-11-23").stdout.strip() == (
        "| 2026-11-23 | — | mining-docker | 24 | 200 | 60 (22) | 60 of 60 | 60 of 60 | 0 of 60 / 0 of 60 "
        "| f2p_many 6.7%, statement_from_pr 100.0% | 3 |")
    mining_years = json.loads(mining.read_text()) | {"setup_by_year": {
        "2016": {"tried": 4, "set_up": 1, "setup_failed": 3, "errors": 0, "share": 0.25},
        "2023": {"tried": 2, "set_up": 2, "setup_failed": 0, "errors": 1, "share": 1.0}}}
    mining.write_text(json.dumps(mining_years))
    assert rows("mining-years", mining, "--measured", "2026-11-23").stdout.splitlines() == [
        "| 2026-11-23 | — | mining-docker | 2016 | 4 | 1 of 4 | 3 | 0 |",
        "| 2026-11-23 | — | mining-docker | 2023 | 2 | 2 of 2 | 0 | 1 |",
        "| 2026-11-23 | — | mining-docker | all | 6 | 3 of 6 | 3 | 1 |"]
    marginal = tmp_path / "marginal" / "figures.json"
    marginal.write_text(json.dumps({
        "instances": 21, "measured": 21, "reused_prediction_independent_runs": 21,
        "median_marginal_over_one_run": 2.32, "at_most_2_5": 13, "median_first_s": 48.3,
        "median_marginal_s": 12.8, "same_results": 21}))
    assert rows("marginal", marginal, "--measured", "2026-11-23").stdout.strip() == (
        "| 2026-11-23 | — | marginal | 21 | 21 of 21 | 2.32 | 13 of 21 | 13 s | 48 s | 21 of 21 |")
    ray = tmp_path / "ray-lean" / "figures.json"
    ray.write_text(json.dumps({
        "local": {"repositories": 24, "wall_s": 136.9, "sum_duration_s": 270.6, "busy_cpu_s": 240.0},
        "ray": {"repositories": 24, "wall_s": 145.9, "sum_duration_s": 285.6, "busy_cpu_s": 256.5,
                "cluster_cpu_s": 3.5},
        "noop": {"per_task_s": 0.0021}, "same_statuses": True, "first": "local"}))
    assert rows("ray", ray, "--measured", "2026-11-24").stdout.strip() == (
        "| 2026-11-24 | — | ray-lean | 24 | local | 136.9 s, 270.6 s | 145.9 s, 285.6 s | 240.0 / 256.5 | 3.5 "
        "| 0.938 | 2.1 ms | yes |")
    wall = tmp_path / "wall.json"
    wall.write_text(json.dumps({"straight_s": 431, "killed_s": 554, "kills": ["3.1s"] * 20, "reports": 300,
                                "differing": [], "leaked": {}}))
    assert rows("wall", wall, "--measured", "2026-11-24").stdout.splitlines() == [
        "| 2026-11-24 | — | straight | 431 s | 300 | — | — |",
        "| 2026-11-24 | — | 20 kills and resumes | 554 s | 300 | 300 of 300 | none |"]


def test_evaluate_rows_from_summaries(tmp_path: Path) -> None:
    summary = tmp_path / "runs" / "fix-gold" / "summary.json"
    summary.parent.mkdir(parents=True)
    summary.write_text(json.dumps([
        {"model": "gold", "mode": "fix", "evaluated": 43, "resolved": 43, "median_duration_s": 1.6,
         "median_duration_over_tests": 1.07, "provenance": {"benchsmith_version": "0.1.0", "backend": "local"}},
        {"model": "empty", "mode": "fix", "evaluated": 43, "resolved": 0, "empty_patches": 43,
         "median_duration_s": 0.4, "median_duration_over_tests": None}]))
    done = rows("evaluate", summary, "--measured", "2026-11-21")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "| 2026-11-21 | 0.1.0 | fix-gold | gold | fix | 43 of 43 resolved | 1.6 s | 1.07 |",
        "| 2026-11-21 | — | fix-gold | empty | fix | 0 of 43 resolved (43 empty patches) | 0.4 s | — |"]


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "figures.json"
    broken.write_text(json.dumps({"instances": 3}))
    for args in (("prepare", broken), ("setup", tmp_path / "absent.jsonl"), ("marginal", tmp_path / "nope.json")):
        done = rows(*args)
        assert done.returncode == 1
        assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith("error:"), done.stderr


def test_prs_spread_over_the_years_of_each_repository(tmp_path: Path) -> None:
    """scripts/prs_by_year.py: the newest PR, then the one farthest in years from those taken."""
    prs = tmp_path / "prs.jsonl"
    years = {1: "2014", 2: "2016", 3: "2019", 4: "2020", 5: "2023"}
    prs.write_text("".join(json.dumps({"repo": "o/a", "number": n, "merged_at": f"{y}-05-01T00:00:00Z"}) + "\n"
                           for n, y in years.items())
                   + json.dumps({"repo": "o/b", "number": 9, "created_at": "2018-01-01"}) + "\n")
    out = tmp_path / "spread.jsonl"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "prs_by_year.py"), str(prs), str(out),
                           "--per-repo", "3"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    picked = [(json.loads(line)["repo"], json.loads(line)["number"]) for line in out.read_text().splitlines()]
    assert picked == [("o/a", 5), ("o/a", 1), ("o/a", 3), ("o/b", 9)]
    missing = subprocess.run([sys.executable, str(ROOT / "scripts" / "prs_by_year.py"), str(tmp_path / "none"),
                              str(out)], capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and missing.stderr.startswith("error: ")


def test_prepare_figures_count_an_instance_redone_by_a_resumed_run_once(tmp_path: Path) -> None:
    from benchsmith.datasets.labels import LabelCheck
    from benchsmith.datasets.verdict import Verdict

    def line(instance: str, status: str, image_s: float = 0.0) -> str:
        verdict = Verdict(status=status, fail_to_pass=LabelCheck(total=1, reproduced=["t"] if status == "reproduced" else []), image_s=image_s)  # type: ignore[arg-type]
        return json.dumps({"instance_id": instance, "repo": "acme/calc",
                           "prepare": verdict.model_dump(mode="json")}) + "\n"

    (tmp_path / "prepared.jsonl").write_text(line("calc-1", "error") + line("calc-2", "reproduced", 4.0)
                                             + line("calc-1", "reproduced", 6.0))
    made = subprocess.run([sys.executable, str(ROOT / "scripts" / "prepare_figures.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr[-2000:]
    figures = json.loads(made.stdout)
    assert (figures["instances"], figures["prepared"]) == (2, 2), figures
    assert figures["median_image_s"] == 5.0
