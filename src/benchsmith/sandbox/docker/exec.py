"""Run one command in a container: its own session, a deadline, and capped output.

The command runs under ``setsid`` with its output in a log file inside the container and its
session id in a pid file. A small bash wrapper waits for it, kills whatever it left behind
in its session (like the local backend kills the process group), then prints a header line
and the log, cut in the middle past the size cap, on the exec's stream. On timeout or
Ctrl-C, a second exec SIGKILLs the whole session (on timeout, after interrupting it first). Daemons that escaped the session keep
only the log file open, never the stream, so they cannot make an exec hang.
"""

from __future__ import annotations

import contextlib
import math
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from benchsmith.core import ExecResult
from benchsmith.sandbox.output import _HEAD_BYTES, INTERRUPT_GRACE_S

LOG_DIR = "/var/tmp/benchsmith"
_MARK = b"@@benchsmith-exec@@"
_HEADER = re.compile(rb"@@benchsmith-exec@@ rc=(\d+) size=(\d+) stalled=(\d) oom=(\d+) "
                     rb"forks=(\d+) disk=(\d) left=([^\n]*)\n")
# $1 pid file, $2 log file, $3 command, $4 output cap, $5 head bytes kept when cut, $6 cwd,
# $7 stall limit in seconds (0: none): a watcher kills the session once the log stops growing;
# $8 disk limit in KiB (0: none): no file may grow past it (ulimit -f; the container's own
# writable layer is watched from outside, see run_command); $9 1: processes the command left
# running outside its session (a daemon) are killed and named. The header also counts the
# container's out-of-memory kills and refused forks (its cgroup's counters) during the command.
_WRAPPER = r"""exec 2>&1
mkdir -p "${1%/*}"
# count KEY FILE...: the sum of KEY's values in the cgroup files, in $n (builtins only: no fork,
# which a command at the container's process limit leaves none of)
count() { n=0; key=$1; shift; for f in "$@"; do [ -r "$f" ] || continue
  while read -r k v; do [ "$k" = "$key" ] && n=$((n + v)); done < "$f"; done; }
oom() { count oom_kill /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; }
forks() { count max /sys/fs/cgroup/pids.events /sys/fs/cgroup/pids/pids.events; }
# stop the group first (a stopped process forks no more), then kill; `kill -0` asks whether any
# is left without forking, which pgrep at the process limit could not do
kill_all() { i=0; while [ $i -lt 50 ]; do i=$((i + 1))
  kill -STOP -- "-$1" 2>/dev/null; kill -KILL -- "-$1" 2>/dev/null
  kill -0 -- "-$1" 2>/dev/null || break; pkill -KILL -s "$1" 2>/dev/null; done; }
oom; oom0=$n; forks; forks0=$n
before=" $(ls /proc | grep -E '^[0-9]+$' | tr '\n' ' ') "
watcher=""
if [ "$7" -gt 0 ]; then
  ( last=-1; idle=0
    while sleep 1; do
      [ -s "$1" ] || continue
      now=$(stat -c %s "$2" 2>/dev/null || echo 0)
      if [ "$now" != "$last" ]; then last=$now; idle=0; else idle=$((idle + 1)); fi
      if [ "$idle" -ge "$7" ]; then
        : > "$1.stalled"; sid=$(cat "$1")
        # SIGABRT first: Python with PYTHONFAULTHANDLER=1 prints where it was stuck
        pkill -ABRT -s "$sid"; sleep 2
        kill_all "$sid"; break
      fi
    done ) >/dev/null 2>&1 &
  watcher=$!
fi
# The braces also silence bash's own "Killed" notice when the session is killed.
{ setsid -w bash -c 'echo $$ > "$1"; [ "$8" -gt 0 ] && ulimit -f "$8"; exec > "$2" 2>&1 < /dev/null; cd -- "$6" && exec bash -c "$3"' \
  benchsmith "$@"; } 2>/dev/null
rc=$?
# the watcher and its children (one may still be retrying a fork the process limit refused)
# the session first, with builtins only: at the process limit nothing can be forked
sid=""; [ -s "$1" ] && read -r sid < "$1"
if [ -n "$sid" ]; then kill_all "$sid"; fi
if [ -n "$watcher" ]; then pkill -KILL -P "$watcher" 2>/dev/null; kill -KILL "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null; fi
stalled=0; disk=0  # the disk limit is watched, and reported, from outside (run_command)
if [ -f "$1.stalled" ]; then stalled=1; rm -f "$1.stalled"; fi
left=""
if [ "$9" = 1 ]; then
  for p in $(ls /proc | grep -E '^[0-9]+$'); do
    case "$before" in *" $p "*) continue ;; esac
    [ "$p" = "$$" ] && continue
    ppid=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f2) || continue
    exe=$(readlink "/proc/$p/exe" 2>/dev/null) || continue
    # our own subshells, and other commands docker started (their parent is outside: 0)
    [ "$ppid" = "$$" ] || [ "$ppid" = 0 ] && continue
    case "${exe##*/}" in postgres|redis-server|mariadbd|mysqld) continue ;; esac
    tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -q -e mysqld_safe -e "$1" && continue
    tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx BENCHSMITH_SERVICE=1 && continue
    kill -KILL "$p" 2>/dev/null && left="$left ${exe##*/}"
  done
fi
rm -f "$1"
size=$(stat -c %s "$2" 2>/dev/null || echo 0)
oom; oom1=$((n - oom0)); forks; forks1=$((n - forks0))
printf '%s rc=%s size=%s stalled=%s oom=%s forks=%s disk=%s left=%s\n' '@@benchsmith-exec@@' "$rc" "$size" "$stalled" \
  "$oom1" "$forks1" "$disk" "${left# }"
if [ "$size" -le "$4" ]; then cat "$2"; else head -c "$5" "$2"; tail -c "$(($4 - $5))" "$2"; fi
"""
# $1 pid file, $2 seconds the session gets to end after SIGINT (0: killed at once). The pid
# file may not be written yet when a very short timeout expires.
_KILL = r"""for i in 1 2 3 4 5 6 7 8 9 10; do [ -s "$1" ] && break; sleep 0.1; done
sid=""; [ -s "$1" ] && read -r sid < "$1"; [ -n "$sid" ] || exit 0
if [ "$2" -gt 0 ]; then
  pkill -INT -s "$sid" 2>/dev/null
  for i in $(seq $(($2 * 10))); do pgrep -s "$sid" >/dev/null || break; sleep 0.1; done
fi
i=0; while [ $i -lt 50 ]; do  # a fork bomb forks on: stop the group, kill it, ask without forking
  kill -STOP -- "-$sid" 2>/dev/null; kill -KILL -- "-$sid" 2>/dev/null
  kill -0 -- "-$sid" 2>/dev/null || break; pkill -KILL -s "$sid" 2>/dev/null; i=$((i + 1))
done; exit 0
"""
_GRACE_S = 30
_KILLED = 128 + 9  # a shell's status for a command killed with SIGKILL


class _Reader(threading.Thread):
    """Drains an exec's output stream in the background."""

    def __init__(self, stream: Iterator[bytes]) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.chunks: list[bytes] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for chunk in self.stream:
                self.chunks.append(chunk)
        except Exception as exc:  # the container was removed under us, the daemon went away
            self.error = exc


def run_command(client: Any, stream_client: Any, container_id: str, command: str, *,
                env: dict[str, str], cwd: str, timeout: float, seq: int,
                max_output_bytes: int, stall_timeout: float | None = None,
                disk_kib: int = 0, sweep: bool = False,
                closed: Callable[[], bool] = lambda: False) -> ExecResult:
    """Run `command` with bash in the container; kill its whole session on timeout, or once
    its output has not grown for `stall_timeout` seconds, or once it used more than `disk_kib`
    of the file system. With `sweep`, processes it left running are killed afterwards.
    `contained` in the result says which of these (and out-of-memory kills, refused forks)
    happened."""
    pid_file, log_file = f"{LOG_DIR}/{seq:04d}.pid", f"{LOG_DIR}/{seq:04d}.log"
    head = min(_HEAD_BYTES, max_output_bytes // 4)
    stall = max(1, math.ceil(stall_timeout)) if stall_timeout else 0
    argv = ["bash", "-c", _WRAPPER, "benchsmith", pid_file, log_file, command,
            str(max_output_bytes), str(head), cwd, str(stall), str(disk_kib), str(int(sweep))]
    start = time.monotonic()
    exec_id = client.api.exec_create(container_id, argv, stdout=True, stderr=True,
                                     environment=env, workdir="/")["Id"]
    # A client without read timeout: the wrapper is silent until the command ends.
    reader = _Reader(stream_client.api.exec_start(exec_id, stream=True, demux=False))
    reader.start()
    timed_out = False
    deadline = start + timeout
    disk = _DiskWatch(client, container_id, disk_kib * 1024)
    try:
        # Short slices: a Ctrl-C that lands on another thread is acted on within 0.2 s.
        while reader.is_alive() and time.monotonic() < deadline:
            reader.join(min(0.2, max(deadline - time.monotonic(), 0)))
            if disk.exceeded():
                kill_session(client, container_id, pid_file)
        if reader.is_alive():
            timed_out = True  # interrupted first: pytest still writes its summary and report
            kill_session(client, container_id, pid_file, grace_s=INTERRUPT_GRACE_S)
            reader.join(_GRACE_S)
    except BaseException:
        with contextlib.suppress(Exception):
            kill_session(client, container_id, pid_file)
        raise
    killed_for_disk = disk.hit
    wrote_past = not killed_for_disk and disk.exceeded(now=True)
    parsed = _parse(b"".join(reader.chunks), max_output_bytes, head)
    lost = parsed is None
    if parsed is None:
        parsed = (-9, _lost(client, exec_id, reader), False, False, [])
    returncode, output, truncated, stalled, contained = parsed
    stopped = False
    if lost and not timed_out:
        reason, stopped = stopped_reason(client, container_id, closed)
        contained.append(reason)
    elif lost and at_process_limit(client, container_id):  # no fork left to report with
        contained.append("the container's processes reached its process limit")
    if timed_out:
        returncode = -9
        output += f"\n[benchsmith] command timed out after {timeout:.0f}s and was killed\n"
    elif stalled:
        returncode = -9
        output += f"\n[benchsmith] no new output for {stall}s: the command was killed\n"
    if killed_for_disk:  # seen while it ran: killed (the header cannot know; this side does)
        contained.append("the disk limit was reached: the command was killed")
    elif wrote_past:  # it ended between two looks, having written more than the limit
        contained.append("the disk limit was reached: the command wrote past it")
    if returncode == _KILLED and not (timed_out or stalled or lost or contained):
        # SIGKILL that neither a limit nor benchsmith sent: the command's own processes did
        contained.append("the command was killed (SIGKILL) from inside: a process of its own "
                         "killed the test process or its parent")
    if contained:
        output += "".join(f"\n[benchsmith] {line}" for line in contained) + "\n"
    return ExecResult(command=command, returncode=returncode, output=output,
                      timed_out=timed_out, stalled=stalled and not timed_out,
                      duration_s=round(time.monotonic() - start, 3), truncated=truncated,
                      contained=contained, sandbox_stopped=stopped)


class _DiskWatch:
    """How much the container's writable layer grew since the command started, asked of the
    engine once a second (its own layer only: what other containers write or free on the
    same disk does not count). A limit of 0 watches nothing."""

    def __init__(self, client: Any, container_id: str, limit_bytes: int) -> None:
        self.client, self.container_id, self.limit = client, container_id, limit_bytes
        self.start: int | None = None
        self.hit = False
        if limit_bytes:  # an engine too busy to answer now: the whole layer counts as growth
            sizes = (self._size() for _ in range(3))
            self.start = next((size for size in sizes if size is not None), 0)
        self.checked = time.monotonic()

    def _size(self) -> int | None:
        try:
            found = self.client.api.containers(all=True, size=True, filters={"id": self.container_id})
        except Exception:  # the engine is busy or the container went: no verdict this time
            return None
        return int(found[0].get("SizeRw") or 0) if found else None

    def exceeded(self, now: bool = False) -> bool:
        """True once (then never again) when the layer grew past the limit; asked at most once
        a second unless `now` (the command ended: a fast writer is caught too)."""
        if self.start is None or self.hit or (not now and time.monotonic() - self.checked < 1):
            return False
        self.checked = time.monotonic()
        size = self._size()
        if size is None or size - self.start <= self.limit:
            return False
        self.hit = True
        return True


def at_process_limit(client: Any, container_id: str) -> bool:
    """Whether the container's process count is at its limit now (asked of the engine, for a
    command whose own report could not be made: no process could be started to make it)."""
    try:
        pids = client.api.stats(container_id, stream=False).get("pids_stats") or {}
    except Exception:
        return False
    limit = pids.get("limit") or 0
    return bool(limit) and (pids.get("current") or 0) >= limit - 2


def stopped_reason(client: Any, container_id: str, closed: Callable[[], bool] = lambda: False
                   ) -> tuple[str, bool]:
    """One line on a container that a command stopped (every process in it killed) or the
    kernel stopped (out of memory), and True; where it still runs, that the command's report
    was lost, and False."""
    for _ in range(10):  # a container whose processes were all killed takes a moment to stop
        try:
            state = client.api.inspect_container(container_id)["State"]
        except Exception as exc:  # removed under us
            return f"the container is gone: {str(exc)[:200]}", True
        if not state.get("Running") or state.get("Status") == "removing" or closed():
            break
        time.sleep(0.3)
    if state.get("Running"):
        return ("the command killed the process that watched it: its report was lost, the "
                "container kept running"), False
    if state.get("OOMKilled"):
        return "the container ran out of memory and stopped", True
    return f"the command stopped its container (exit code {state.get('ExitCode')})", True


def _lost(client: Any, exec_id: str, reader: _Reader) -> str:
    """Explain an exec whose wrapper never reported (the container was removed or stopped)."""
    try:
        exit_code = client.api.exec_inspect(exec_id).get("ExitCode")
    except Exception:
        exit_code = None
    reason = f" ({reader.error})" if reader.error else ""
    raw = b"".join(reader.chunks).decode("utf-8", errors="replace")
    return (f"{raw}\n[benchsmith] the command ended without a report (exit code {exit_code}): "
            f"the container was removed or stopped{reason}\n")


def kill_session(client: Any, container_id: str, pid_file: str, grace_s: float = 0) -> None:
    """SIGKILL every process in the session of the command whose pid file is `pid_file`; with
    `grace_s`, interrupt it first and give it that long to end by itself."""
    exec_id = client.api.exec_create(container_id, ["bash", "-c", _KILL, "benchsmith", pid_file,
                                                    str(math.ceil(grace_s))])
    client.api.exec_start(exec_id["Id"])


def _parse(data: bytes, max_output_bytes: int, head: int
           ) -> tuple[int, str, bool, bool, list[str]] | None:
    """(returncode, output, truncated, stalled, contained) from the wrapper's stream; None if
    cut short."""
    match = _HEADER.search(data)
    if match is None:
        return None
    contained = []
    if int(match.group(4)):
        contained.append(f"out of memory: the kernel killed {int(match.group(4))} process(es) "
                         "at the container's memory limit")
    if int(match.group(5)):
        contained.append(f"the container's process limit refused {int(match.group(5))} fork(s)")
    if left := match.group(7).decode("utf-8", "replace").split():
        contained.append(f"left {len(left)} process(es) running after it ended, killed: "
                         + ", ".join(sorted(set(left))))
    noise, content = data[: match.start()], data[match.end():]
    size = int(match.group(2))
    truncated = size > max_output_bytes
    if truncated:  # the same shape as output.read_capped
        marker = f"\n[benchsmith] ... {size - max_output_bytes} bytes of output cut ...\n"
        content = content[:head] + marker.encode() + content[head:]
    return (int(match.group(1)), (noise + content).decode("utf-8", errors="replace"), truncated,
            match.group(3) == b"1", contained)
