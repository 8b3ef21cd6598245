#!/usr/bin/env bash
# Mining benchmark: mine merged PRs from local mirrors, build instances, then evaluate every
# built instance with its gold patch and with an empty patch. Resumable: re-run the same command.
#
#   scripts/bench-mining.sh LIST MIRRORS OUTDIR [build/evaluate sandbox options, e.g. --backend docker]
#
# With ALSO_DOCKER=1, the built instances are graded in Docker too (OUTDIR/runs-docker/).
# Writes OUTDIR/prs.jsonl, OUTDIR/instances.jsonl (+ .log.jsonl, .funnel.json), OUTDIR/runs/,
# and OUTDIR/figures.json (scripts/mining_figures.py): instances, gold resolved, empty
# resolved, whether the funnel equals a recount of the outcome log, quality-flag shares.
set -euo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: $0 LIST MIRRORS OUTDIR [sandbox options...]" >&2
  exit 2
fi
list=$1 mirrors=$2 out=$3
shift 3
per_repo=${PER_REPO:-3}
max_prs=${MAX_PRS:-15}
mkdir -p "$out"
step() { echo "== $* $(date -Is)"; }
step mine
benchsmith mine "$list" --from-git --mirrors "$mirrors" --max-prs "$max_prs" --out "$out/prs.jsonl" \
  >>"$out/mine.log" 2>&1 || echo "mine exited $?"
step build
benchsmith build "$out/prs.jsonl" --per-repo "$per_repo" --out "$out/instances.jsonl" \
  --refdb "$out/refdb.sqlite" "$@" >>"$out/build.log" 2>&1 || echo "build exited $?"
for predictions in gold empty; do
  step "evaluate $predictions"
  benchsmith evaluate --instances "$out/instances.jsonl" --predictions "$predictions" \
    --mirrors "$mirrors" --out "$out/runs" "$@" >>"$out/evaluate-$predictions.log" 2>&1 \
    || echo "evaluate $predictions exited $?"
done
if [[ -n "${ALSO_DOCKER:-}" ]]; then  # the same instances graded in Docker as well
  for predictions in gold empty; do
    step "evaluate $predictions (docker)"
    benchsmith evaluate --instances "$out/instances.jsonl" --predictions "$predictions" \
      --mirrors "$mirrors" --out "$out/runs-docker" --backend docker \
      >>"$out/evaluate-$predictions-docker.log" 2>&1 || echo "evaluate $predictions (docker) exited $?"
  done
fi
PER_REPO="$per_repo" python "$(dirname "$0")/mining_figures.py" "$out" | tee "$out/figures.json"
