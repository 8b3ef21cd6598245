"""A sample of mined PRs spread over the years of each repository, for the mining funnel by year.

    python scripts/prs_by_year.py PRS.jsonl OUT.jsonl [--per-repo 4]

Per repository: its newest PR, then again and again the PR whose year (of the merge, else of
the creation) is farthest from the years already taken (the older on a tie), until --per-repo.
Lines are copied as they are, so `benchsmith build OUT.jsonl --per-repo N` (N at least as large)
tries every one of them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _year(pr: dict) -> int:
    return int(str(pr.get("merged_at") or pr.get("created_at") or "0")[:4] or 0)


def spread(lines: list[str], per_repo: int) -> list[str]:
    """`per_repo` lines of each repository's PRs, spread over their years."""
    by_repo: dict[str, list[tuple[str, dict, str]]] = {}
    for line in lines:
        if line.strip():
            pr = json.loads(line)
            stamp = str(pr.get("merged_at") or pr.get("created_at") or "")
            by_repo.setdefault(pr["repo"], []).append((stamp, pr, line.rstrip("\n") + "\n"))
    chosen: list[str] = []
    for rows in by_repo.values():
        rows.sort(key=lambda row: row[0], reverse=True)  # newest first
        taken = [rows[0]]
        rest = rows[1:]
        while rest and len(taken) < per_repo:
            years = [_year(row[1]) for row in taken]
            best = max(rest, key=lambda row: (min(abs(_year(row[1]) - y) for y in years),
                                              -_year(row[1])))
            taken.append(best)
            rest.remove(best)
        chosen += [row[2] for row in taken]
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prs", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--per-repo", type=int, default=4)
    args = parser.parse_args(argv)
    try:
        lines = args.prs.read_text(encoding="utf-8").splitlines()
        chosen = spread(lines, args.per_repo)
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {args.prs}: {exc}", file=sys.stderr)
        return 2
    args.out.write_text("".join(chosen), encoding="utf-8")
    print(f"{len(chosen)} PRs of {len(lines)} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
