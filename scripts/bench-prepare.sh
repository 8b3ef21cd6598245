#!/usr/bin/env bash
# Dataset-preparation benchmark: give a published SWE-bench-format file environments with
# `benchsmith prepare`, then grade every prepared instance's gold patch and an empty patch with
# `benchsmith evaluate`. Resumable: re-run the same command.
#
#   scripts/bench-prepare.sh INSTANCES MIRRORS OUTDIR [prepare/evaluate sandbox options]
#
# Writes OUTDIR/prepared.jsonl (+ prepare.log), OUTDIR/runs/, and OUTDIR/figures.json
# (scripts/prepare_figures.py): share prepared, shares with every FAIL_TO_PASS / PASS_TO_PASS
# reproduced, times with environments reused, gold/empty resolved, every instance not reproduced.
set -euo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: $0 INSTANCES MIRRORS OUTDIR [sandbox options...]" >&2
  exit 2
fi
instances=$1 mirrors=$2 out=$3
shift 3
mkdir -p "$out"
step() { echo "== $* $(date -Is)"; }
step prepare
benchsmith prepare "$instances" --mirrors "$mirrors" --out "$out/prepared.jsonl" \
  --refdb "$out/refdb.sqlite" --jobs "${JOBS:-2}" "$@" >>"$out/prepare.log" 2>&1 \
  || echo "prepare exited $?"
python - "$out" <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
kept = [line for line in (out / "prepared.jsonl").read_text().splitlines()
        if json.loads(line)["prepare"]["status"] not in ("setup_failed", "error")]
(out / "evaluable.jsonl").write_text("".join(f"{line}\n" for line in kept))
PY
for predictions in gold empty; do
  step "evaluate $predictions"
  benchsmith evaluate --instances "$out/evaluable.jsonl" --predictions "$predictions" \
    --mirrors "$mirrors" --out "$out/runs" "$@" \
    >>"$out/evaluate-$predictions.log" 2>&1 || echo "evaluate $predictions exited $?"
done
python "$(dirname "$0")/prepare_figures.py" "$out" | tee "$out/figures.json"
