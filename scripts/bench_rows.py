"""Markdown rows for the tables of docs/benchmarks.md, from a benchmark's output files.

    python scripts/bench_rows.py setup RESULTS.jsonl...       # setup-batch results (one row per file)
    python scripts/bench_rows.py setupbench RESULTS.jsonl...  # setupbench run results (merged)
    python scripts/bench_rows.py setupbench --tasks RESULTS.jsonl...  # one row per task
    python scripts/bench_rows.py prepare|mining|marginal|ray|wall FIGURES.json
    python scripts/bench_rows.py mining-years FIGURES.json   # base commits set up, by year of the PR
    python scripts/bench_rows.py evaluate OUTPUT_DIR/RUN_ID/summary.json...  # benchsmith evaluate

FIGURES.json is what bench-prepare.sh, bench-mining.sh, bench-marginal.sh and bench-ray.sh
write into their output folder (its name is the row's "run"), and what wall_check.py prints.
Every row starts with the date of measurement (--measured, else the file's modification date)
and the code version (--code, else the benchsmith version the records carry, else a dash).
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

DASH = "—"


def row(cells: list[object]) -> str:
    """One markdown table row."""
    return "| " + " | ".join(DASH if c is None or c == "" else str(c) for c in cells) + " |"


def _seconds(value: float | None) -> str | None:
    return None if value is None else f"{value:.0f} s" if value >= 10 else f"{value:.1f} s"


def _share(part: int | None, whole: int | None) -> str | None:
    return f"{part} of {whole}" if part is not None and whole else None


def _measured(args: argparse.Namespace, path: Path) -> str:
    if args.measured:
        return str(args.measured)
    return datetime.date.fromtimestamp(path.stat().st_mtime).isoformat()


def _run(args: argparse.Namespace) -> str:
    return args.files[0].resolve().parent.name


def _figures(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path} holds no figures object")
    return data


def setup_rows(args: argparse.Namespace) -> list[str]:
    """measured | code | results | pinned date | validated | first round | median time | total |
    median duration/clean run | not validated, by cause."""
    from benchsmith.setup.batch import read_records, summarize

    rows = []
    for path in args.files:
        # a resumed or --retry-failed run appends: a repository's later record wins
        records = list({(r.repo, r.date): r for r in read_records(path)}.values())
        if not records:
            raise ValueError(f"{path} holds no setup records")
        summary = summarize(records)
        dates = sorted({r.date for r in records if r.date})
        pinned = dates[0] if len(dates) == 1 else f"per instance ({len(dates)} dates)" if dates else None
        versions = Counter(r.benchsmith_version for r in records if r.benchsmith_version)
        causes = ", ".join(f"{name} {count}" for name, count in sorted(summary.failures.items()))
        rows.append(row([_measured(args, path), args.code or (versions.most_common(1) or [(None,)])[0][0],
                         path.stem, pinned, _share(summary.validated, summary.total), summary.one_round,
                         _seconds(summary.median_duration_s), _seconds(summary.total_duration_s),
                         summary.median_overhead, causes]))
    return rows


def setupbench_rows(args: argparse.Namespace) -> list[str]:
    """Summary: measured | code | tasks | success | failed | error | success rate | mean agent
    time. With --tasks: task | verdict | reason. Later lines of a task win, across files."""
    from benchsmith.setupbench.models import TaskResult

    latest: dict[str, TaskResult] = {}
    for path in args.files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                result = TaskResult.model_validate_json(line)
                latest[result.instance_id] = result
    if not latest:
        raise ValueError("no setupbench results in " + ", ".join(map(str, args.files)))
    results = [latest[k] for k in sorted(latest)]
    if args.tasks:
        return [row([r.instance_id, r.verdict, r.reason.splitlines()[0][:150] if r.reason else None])
                for r in results]
    count = Counter(r.verdict for r in results)
    judged = count["success"] + count["failed"]
    versions = Counter(r.benchsmith_version for r in results if r.benchsmith_version)
    started = sorted(r.started_at[:10] for r in results if r.started_at)
    measured = args.measured or (started[-1] if started else _measured(args, args.files[-1]))
    ran = [r.agent_s for r in results if r.verdict != "error"]
    return [row([measured, args.code or (versions.most_common(1) or [(None,)])[0][0], len(results),
                 count["success"], count["failed"], count["error"],
                 f"{count['success'] / len(results):.1%}" if results else None,
                 f"{count['success'] / judged:.1%}" if judged else None,
                 _seconds(statistics.mean(ran)) if ran else None])]


def prepare_rows(args: argparse.Namespace) -> list[str]:
    """measured | code | run | instances | prepared | every FAIL_TO_PASS | every PASS_TO_PASS | median
    instance time | median environment setup | gold resolved | empty resolved."""
    f = _figures(args.files[0])
    gold, empty = f.get("gold") or {}, f.get("empty") or {}
    return [row([_measured(args, args.files[0]), args.code, _run(args), f["instances"], f["prepared"],
                 _share(f.get("fail_to_pass_all_reproduced"), f["prepared"]),
                 _share(f.get("pass_to_pass_all_reproduced"), f["prepared"]),
                 _seconds(f.get("median_instance_s_environment_reused")),
                 _seconds(f.get("median_environment_setup_s")),
                 _share(gold.get("resolved"), gold.get("evaluated")),
                 _share(empty.get("resolved"), empty.get("evaluated"))])]


def mining_rows(args: argparse.Namespace) -> list[str]:
    """measured | code | run | repositories mined | valid PRs | instances (repositories) | gold local |
    gold Docker | empty local / Docker | quality flags | hung tests named."""
    f = _figures(args.files[0])
    docker = f.get("docker") or {}

    def resolved(summary: dict[str, Any] | None) -> str | None:
        return _share((summary or {}).get("resolved"), (summary or {}).get("evaluated"))

    flags = ", ".join(f"{name} {share:.1%}" for name, share in sorted(f.get("quality_flag_share", {}).items()))
    empties = " / ".join(x for x in (resolved(f.get("empty")), resolved(docker.get("empty"))) if x)
    return [row([_measured(args, args.files[0]), args.code, _run(args), f["repositories_mined"], f["valid_prs"],
                 f"{f['instances']} ({f['repositories_with_instances']})", resolved(f.get("gold")),
                 resolved(docker.get("gold")), empties, flags, f.get("hung_tests_named")])]


def mining_year_rows(args: argparse.Namespace) -> list[str]:
    """measured | code | run | year | PRs tried | base commit set up | setup failed | errors."""
    f = _figures(args.files[0])
    years = f.get("setup_by_year") or {}
    total = {k: sum(y[k] for y in years.values()) for k in ("tried", "set_up", "setup_failed", "errors")}
    lines = [row([_measured(args, args.files[0]), args.code, _run(args), year, y["tried"],
                  _share(y["set_up"], y["tried"]), y["setup_failed"], y["errors"]])
             for year, y in years.items()]
    if years:
        lines.append(row([_measured(args, args.files[0]), args.code, _run(args), "all", total["tried"],
                          _share(total["set_up"], total["tried"]), total["setup_failed"], total["errors"]]))
    return lines


def marginal_rows(args: argparse.Namespace) -> list[str]:
    """measured | code | run | instances | prediction-independent runs reused | median whole time / one
    run | at most 2.5 | median time, second prediction | median time, first | same results."""
    f = _figures(args.files[0])
    return [row([_measured(args, args.files[0]), args.code, _run(args), f["instances"],
                 _share(f["reused_prediction_independent_runs"], f["measured"]),
                 f.get("median_marginal_over_one_run"), _share(f.get("at_most_2_5"), f["measured"]),
                 _seconds(f.get("median_marginal_s")), _seconds(f.get("median_first_s")),
                 _share(f.get("same_results"), f["measured"])])]


def ray_rows(args: argparse.Namespace) -> list[str]:
    """measured | code | run | repositories | first | local wall, sum of setups | Ray wall, sum | busy
    CPU-s local / Ray | cluster CPU-s | Ray / local throughput | no-op task | same statuses."""
    f = _figures(args.files[0])
    local, ray = f["local"], f["ray"]
    noop = f.get("noop") or {}
    busy = (f"{local['busy_cpu_s']} / {ray['busy_cpu_s']}"
            if "busy_cpu_s" in local and "busy_cpu_s" in ray else None)
    return [row([_measured(args, args.files[0]), args.code, _run(args), local["repositories"], f.get("first"),
                 f"{local['wall_s']:.1f} s, {local['sum_duration_s']:.1f} s",
                 f"{ray['wall_s']:.1f} s, {ray['sum_duration_s']:.1f} s", busy, ray.get("cluster_cpu_s"),
                 f"{local['wall_s'] / ray['wall_s']:.3f}" if ray["wall_s"] else None,
                 f"{noop['per_task_s'] * 1000:.1f} ms" if "per_task_s" in noop else None,
                 "yes" if f.get("same_statuses") else "no"])]


def wall_rows(args: argparse.Namespace) -> list[str]:
    """measured | code | run | wall time | reports | grades equal to the straight run | leftovers."""
    f = _figures(args.files[0])
    measured = _measured(args, args.files[0])
    leaked = f.get("leaked") or {}
    leftovers = ", ".join(f"{n} {k}" for k, n in sorted(leaked.items())) or "none"
    equal = f["reports"] - len(f.get("differing") or [])
    return [row([measured, args.code, "straight", f"{f['straight_s']} s", f["reports"], None, None]),
            row([measured, args.code, f"{len(f.get('kills') or [])} kills and resumes", f"{f['killed_s']} s",
                 f["reports"], f"{equal} of {f['reports']}", leftovers])]


def evaluate_rows(args: argparse.Namespace) -> list[str]:
    """measured | code | run | model | mode | result | median time per prediction | time / test
    time (reused environments), one row per model of each summary.json."""
    rows = []
    for path in args.files:
        summaries = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(summaries, list) or not summaries:
            raise ValueError(f"{path} holds no evaluation summaries")
        for s in summaries:
            verb = "resolved" if s["mode"] == "fix" else "success"
            result = f"{s['resolved']} of {s['evaluated']} {verb}"
            if s.get("empty_patches"):
                result += f" ({s['empty_patches']} empty patches)"
            rows.append(row([_measured(args, path), args.code or (s.get("provenance") or {}).get("benchsmith_version"),
                             path.resolve().parent.name, s["model"], s["mode"], result,
                             _seconds(s.get("median_duration_s")), s.get("median_duration_over_tests")]))
    return rows


KINDS = {"evaluate": evaluate_rows, "setup": setup_rows, "setupbench": setupbench_rows, "prepare": prepare_rows,
         "mining": mining_rows, "mining-years": mining_year_rows, "marginal": marginal_rows, "ray": ray_rows, "wall": wall_rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=sorted(KINDS))
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--measured", type=datetime.date.fromisoformat, help="date of measurement")
    parser.add_argument("--code", help="code version or commit measured")
    parser.add_argument("--tasks", action="store_true", help="setupbench: one row per task")
    args = parser.parse_args(argv)
    try:
        lines = KINDS[args.kind](args)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0]
        print(f"error: {args.kind}: {what}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
