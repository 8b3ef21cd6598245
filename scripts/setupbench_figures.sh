#!/usr/bin/env bash
# Merge a first run with reruns of some tasks (later lines of a task win) and report the figures.
#   scripts/setupbench_figures.sh OUT.jsonl FIRST.jsonl [RERUN.jsonl ...]
set -euo pipefail
out=$1; shift
cat "$@" > "$out"
benchsmith setupbench report "$out" --html "${out%.jsonl}.html"
python3 - "$out" <<'PY'
import json, sys
latest = {}
for line in open(sys.argv[1]):
    record = json.loads(line)
    latest[record["instance_id"]] = record
for iid, r in sorted(latest.items()):
    print(f"{r['verdict']:8} {iid}: {r['reason'][:150]}")
PY
