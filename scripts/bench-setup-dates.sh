#!/usr/bin/env bash
# Setup benchmark over one repository list at two dates, each date cold (empty reference
# database) and warm (the other date's database). Resumable: re-run the same command.
#
#   scripts/bench-setup-dates.sh LIST MIRRORS OUTDIR DATE_A DATE_B [setup-batch options...]
#
# Writes OUTDIR/{A,B}-{cold,warm}.jsonl and .log, OUTDIR/refdb-{A,B}.sqlite; each setup-batch
# run prints its summary table (validated, median duration/clean run) at the end of its log.
set -euo pipefail
if [[ $# -lt 5 ]]; then
  echo "usage: $0 LIST MIRRORS OUTDIR DATE_A DATE_B [setup-batch options...]" >&2
  exit 2
fi
list=$1 mirrors=$2 out=$3 a=$4 b=$5
shift 5
mkdir -p "$out"
run() {  # run NAME DATE REFDB [options...]
  local name=$1 day=$2 refdb=$3
  shift 3
  echo "== $name ($day, refdb $refdb) $(date -Is)"
  benchsmith setup-batch "$list" --date "$day" --mirrors "$mirrors" --refdb "$refdb" \
    --out "$out/$name.jsonl" "$@" >"$out/$name.log" 2>&1 || echo "$name exited $?"
  tail -n 20 "$out/$name.log"
}
run_args=("$@")
cold() { run "$1-cold" "$2" "$out/refdb-$1.sqlite" "${run_args[@]}"; }
warm() {  # warm NAME DATE OTHER: start from a copy of the other date's finished database
  [[ -f "$out/refdb-$1-warm.sqlite" ]] || cp "$out/refdb-$3.sqlite" "$out/refdb-$1-warm.sqlite"
  run "$1-warm" "$2" "$out/refdb-$1-warm.sqlite" "${run_args[@]}"
}
cold "$a" "$a"
cold "$b" "$b"
warm "$a" "$a" "$b"
warm "$b" "$b" "$a"
