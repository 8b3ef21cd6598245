#!/usr/bin/env bash
# Marginal cost of one more test-mode prediction: every instance's gold tests are evaluated in
# test mode twice, under two run names. The first run computes the four prediction-independent
# runs (gold tests and no tests, before and after the fix) and stores them; the second must
# reuse them and run only the prediction's own two. Resumable: re-run the same command.
#
#   scripts/bench-marginal.sh INSTANCES MIRRORS OUTDIR [evaluate options, e.g. --backend docker]
#
# Writes OUTDIR/runs/{first,second}/ and OUTDIR/figures.json (scripts/marginal_figures.py):
# per instance the second prediction's whole time over one run of its tests, and the median.
set -euo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: $0 INSTANCES MIRRORS OUTDIR [evaluate options...]" >&2
  exit 2
fi
instances=$1 mirrors=$2 out=$3
shift 3
mkdir -p "$out"
for run in first second; do
  echo "== evaluate --mode test ($run) $(date -Is)"
  benchsmith evaluate --instances "$instances" --predictions gold --mode test --run-id "$run" \
    --mirrors "$mirrors" --out "$out/runs" "$@" >>"$out/evaluate-$run.log" 2>&1 \
    || echo "evaluate ($run) exited $?"
done
python "$(dirname "$0")/marginal_figures.py" "$out" | tee "$out/figures.json"
