#!/usr/bin/env bash
# Executor benchmark: the same setup-batch list with local threads (--jobs 2) and on a two-node
# Ray cluster started here on 127.0.0.1 (1 CPU per node), then the driver's dispatch overhead
# with no-op tasks. Compares the validated sets, throughput and where the CPU went.
#
#   scripts/bench-ray.sh LIST MIRRORS OUTDIR [setup-batch options...]
#
# Writes OUTDIR/{local,ray}.jsonl (+ .log), OUTDIR/noop.json and OUTDIR/figures.json.
# Both runs use this machine's uv cache (warm); COLD=1 gives each run (and each Ray node)
# a fresh cache of its own instead; LEAN=0 starts Ray with its default services; FIRST=ray
# runs Ray before the threads (the second run finds a warmer page cache). The cluster is
# stopped on exit, also on failure.
set -euo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: $0 LIST MIRRORS OUTDIR [setup-batch options...]" >&2
  exit 2
fi
list=$1 mirrors=$2 out=$3
shift 3
mkdir -p "$out"
out=$(cd "$out" && pwd)
step() { echo "== $* $(date -Is)"; }
cache() { if [[ "${COLD:-0}" == 1 ]]; then echo "$out/uv-cache-$1"; else echo "${UV_CACHE_DIR:-$HOME/.cache/uv}"; fi; }
now() { date +%s.%N; }
# Busy CPU-seconds of the whole machine so far (user+nice+system+irq+softirq+steal, /proc/stat).
busy() { awk -v hz="$(getconf CLK_TCK)" '/^cpu /{print ($2+$3+$4+$7+$8+$9)/hz}' /proc/stat; }

# benchsmith's CLI, writing at exit the CPU-seconds of its own process and of its children
# (the setups' commands) to the file named first: where a run's CPU went.
benchsmith_cpu() {
  local file=$1
  shift
  python -c '
import atexit, json, resource, sys
path = sys.argv.pop(1)
def dump():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    json.dump({"driver_self_cpu_s": round(me.ru_utime + me.ru_stime, 1),
               "driver_children_cpu_s": round(kids.ru_utime + kids.ru_stime, 1)}, open(path, "w"))
atexit.register(dump)
sys.argv[0] = "benchsmith"
from benchsmith.cli import main
main()
' "$file" "$@"
}

run_local() {
  step "local --jobs 2"
  local start cpu
  start=$(now) cpu=$(busy)
  UV_CACHE_DIR=$(cache local) benchsmith_cpu "$out/local.rusage" setup-batch "$list" \
    --mirrors "$mirrors" --out "$out/local.jsonl" --refdb "$out/local-ref.sqlite" --jobs 2 "$@" \
    >"$out/local.log" 2>&1 || echo "local run exited $?"
  echo "$(now) - $start" | bc >"$out/local.wall"
  echo "$(busy) - $cpu" | bc >"$out/local.cpu"
}

ray_tmp=$(mktemp -d /tmp/bsrb.XXXXXX)  # Ray's socket paths must stay short
address=
common=(--num-cpus=1 --node-ip-address=127.0.0.1 --disable-usage-stats --temp-dir="$ray_tmp")
# A lean cluster (LEAN=0 for Ray's defaults): no log monitor (the driver reads no task logs:
# log_to_driver=False), no metrics, no task events. Idle, it uses ~0.6 CPU-s per 30 s
# instead of ~1.0 on this machine.
if [[ "${LEAN:-1}" == 1 ]]; then
  common+=(--include-log-monitor=false)
  export RAY_enable_metrics_collection=0 RAY_task_events_report_interval_ms=0
fi
pids=()
stop_cluster() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  sleep 5
  for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
  pids=()
}
trap 'stop_cluster; rm -rf "$ray_tmp"' EXIT
alive() { python -c "import logging, ray; ray.init(address='$address', logging_level=logging.ERROR); print(sum(n['Alive'] for n in ray.nodes()))" 2>/dev/null | tail -1; }

start_cluster() {
  step "start a two-node Ray cluster"
  local port
  port=$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  address=127.0.0.1:$port
  UV_CACHE_DIR=$(cache node0) setsid ray start --block --head --port="$port" --include-dashboard=false \
    "${common[@]}" >"$out/ray-head.log" 2>&1 &
  pids+=($!)
  until [[ "$(alive)" == 1 ]]; do sleep 1; done
  UV_CACHE_DIR=$(cache node1) setsid ray start --block --address="$address" "${common[@]}" \
    >"$out/ray-node.log" 2>&1 &
  pids+=($!)
  until [[ "$(alive)" == 2 ]]; do sleep 1; done
}

run_ray() {
  step "ray (2 nodes x 1 CPU)"
  local start cpu
  start=$(now) cpu=$(busy)
  benchsmith_cpu "$out/ray.rusage" setup-batch "$list" --mirrors "$mirrors" --out "$out/ray.jsonl" \
    --refdb "$out/ray-ref.sqlite" --executor ray --ray-address "$address" "$@" \
    >"$out/ray.log" 2>&1 || echo "ray run exited $?"
  echo "$(now) - $start" | bc >"$out/ray.wall"
  echo "$(busy) - $cpu" | bc >"$out/ray.cpu"
  # CPU-seconds the cluster's own processes used so far (GCS, raylets, agents, `ray start`;
  # not the workers, which Ray renames "ray::..." and replaces when idle): what two nodes on
  # one host cost beyond the work.
  python - "$ray_tmp" >"$out/ray.cluster-cpu" <<'PY'
import json, os, sys
tick = os.sysconf("SC_CLK_TCK")
total = 0.0
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        continue
    if sys.argv[1] in cmd:
        total += (int(fields[11]) + int(fields[12])) / tick  # utime + stime
print(json.dumps({"cluster_cpu_s": round(total, 1)}))
PY
}

echo "${FIRST:-local}" >"$out/first"
if [[ "${FIRST:-local}" == ray ]]; then
  start_cluster
  run_ray "$@"
  stop_cluster  # the threads run on a quiet machine
  run_local "$@"
  start_cluster  # for the no-op tasks
else
  run_local "$@"
  start_cluster
  run_ray "$@"
fi

step "driver overhead: no-op tasks"
python - "$address" "$out/noop.json" <<'PY'
import json, statistics, sys, threading, time
from benchsmith.executor import ExecutorConfig, Resources, make_executor

def noop(payload: int, cancelled: threading.Event) -> int:
    return payload

executor = make_executor(ExecutorConfig(type="ray", address=sys.argv[1]))
executor.run(noop, [("warm", 0)], Resources(), lambda outcome: None)  # start the workers
outcomes = []
started = time.time()
executor.run(noop, [(str(i), i) for i in range(200)], Resources(), outcomes.append)
wall = time.time() - started
executor.close()
lag = [o.received_at - o.finished_at for o in outcomes]
figures = {"tasks": len(outcomes), "wall_s": round(wall, 3),
           "per_task_s": round(wall / len(outcomes), 4),
           "result_to_driver_median_s": round(statistics.median(lag), 4),
           "result_to_driver_max_s": round(max(lag), 4)}
json.dump(figures, open(sys.argv[2], "w"), indent=2)
print(json.dumps(figures))
PY

step figures
python - "$out" <<'PY' | tee "$out/figures.json"
import json, statistics, sys
from pathlib import Path
out = Path(sys.argv[1])
def records(name):
    path = out / f"{name}.jsonl"
    return [json.loads(l) for l in path.read_text().splitlines()] if path.exists() else []
figures = {}
for name in ("local", "ray"):
    rs = records(name)
    wall = float((out / f"{name}.wall").read_text())
    durations = [r["duration_s"] for r in rs if r.get("duration_s")]
    figures[name] = {
        "repositories": len(rs), "validated": sorted(r["input"] for r in rs if r["status"] == "validated"),
        "wall_s": round(wall, 1),
        "busy_cpu_s": round(float((out / f"{name}.cpu").read_text()), 1),
        "repos_per_hour": round(len(rs) / wall * 3600, 1) if wall else None,
        "sum_duration_s": round(sum(durations), 1),
        "median_duration_s": round(statistics.median(durations), 1) if durations else None,
        "per_repo_s": {r["input"]: r.get("duration_s") for r in rs},
        "statuses": {r["input"]: r["status"] for r in rs},
    }
figures["same_validated_set"] = figures["local"]["validated"] == figures["ray"]["validated"]
figures["same_statuses"] = figures["local"]["statuses"] == figures["ray"]["statuses"]
figures["noop"] = json.loads((out / "noop.json").read_text())
for name in ("local", "ray"):  # where the CPU went
    rusage = out / f"{name}.rusage"
    figures[name].update(json.loads(rusage.read_text()) if rusage.exists() else {})
figures["ray"].update(json.loads((out / "ray.cluster-cpu").read_text()))
figures["first"] = (out / "first").read_text().strip()
print(json.dumps(figures, indent=2))
PY
