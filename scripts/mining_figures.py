"""The mining benchmark's figures from its output directory (see bench-mining.sh), as JSON."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

from benchsmith.mining.build import read_outcomes
from benchsmith.mining.funnel import TERMINAL, build_funnel
from benchsmith.mining.models import PullRequest


def _summary(run: Path) -> dict:
    try:
        return json.loads((run / "summary.json").read_text())[0]
    except (OSError, ValueError, IndexError):
        return {}


def main(out: Path) -> dict:
    prs = [PullRequest.model_validate_json(line)
           for line in (out / "prs.jsonl").read_text().splitlines() if line.strip()]
    outcomes = read_outcomes(out / "instances.log.jsonl")
    per_repo = int(os.environ.get("PER_REPO", "3"))  # as bench-mining.sh built them
    recount = build_funnel(prs, outcomes, per_repo=per_repo).model_dump(mode="json")
    try:  # an interrupted build writes no funnel: the recount stands alone then
        written = json.loads((out / "instances.funnel.json").read_text())
    except FileNotFoundError:
        written = None
    instances = [json.loads(line) for line in (out / "instances.jsonl").read_text().splitlines()
                 if line.strip()]
    flags = Counter(flag for i in instances for flag in i.get("quality_flags") or {})
    gold, empty = _summary(out / "runs" / "fix-gold"), _summary(out / "runs" / "fix-empty")
    docker = {name: _summary(out / "runs-docker" / f"fix-{name}") for name in ("gold", "empty")}
    stages = Counter(o.stage for o in outcomes)
    return {
        "repositories_mined": len((out / "prs.jsonl.repos.jsonl").read_text().splitlines()),
        "valid_prs": len(prs),
        "instances": len(instances),
        "repositories_with_instances": len({i["repo"] for i in instances}),
        # "not tried" and "limit" are the PRs with no outcome: counted, never logged
        "terminal": {s: (stages[s] if s not in ("not tried", "limit") else recount["terminal"][s])
                     for s in TERMINAL},
        "funnel_equals_recount": {k: written[k] == recount[k]
                                  for k in ("pr_stages", "terminal", "flags")}
        if written is not None else "no funnel written (the build was interrupted)",
        "gold": {k: gold.get(k) for k in ("evaluated", "resolved", "infrastructure_failures", "errors")},
        "gold_unresolved": sorted(set().union(*(v for k, v in (gold.get("ids") or {}).items()
                                               if k != "RESOLVED")) if gold else []),
        "empty": {k: empty.get(k) for k in ("evaluated", "resolved", "empty_patches")},
        "docker": {name: {k: summary.get(k) for k in ("evaluated", "resolved", "empty_patches",
                                                       "infrastructure_failures", "errors")}
                   for name, summary in docker.items() if summary},
        "quality_flag_share": {f: round(n / len(instances), 3) for f, n in sorted(flags.items())}
        if instances else {},
        "hung_tests_named": sum(bool(o.hung) for o in outcomes),
        "setup_by_year": {year: {**row, "share": round(row["set_up"] / row["tried"], 3)
                                 if row["tried"] else None}
                          for year, row in recount["setup_by_year"].items()},
    }


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1])), indent=2))
