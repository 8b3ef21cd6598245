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
from collections.abc import Iterator
from typing import Any

from benchsmith.core import ExecResult
from benchsmith.sandbox.output import _HEAD_BYTES, INTERRUPT_GRACE_S

LOG_DIR = "/var/tmp/benchsmith"
_MARK = b"@@benchsmith-exec@@"
_HEADER = re.compile(rb"@@benchsmith-exec@@ rc=(\d+) size=(\d+) stalled=(\d)\n")
# $1 pid file, $2 log file, $3 command, $4 output cap, $5 head bytes kept when cut, $6 cwd,
# $7 stall limit in seconds (0: none): a watcher kills the session once the log stops growing.
_WRAPPER = r"""exec 2>&1
mkdir -p "${1%/*}"
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
        pkill -KILL -s "$sid"; kill -KILL -- "-$sid"; break
      fi
    done ) >/dev/null 2>&1 &
  watcher=$!
fi
# The braces also silence bash's own "Killed" notice when the session is killed.
{ setsid -w bash -c 'echo $$ > "$1"; exec > "$2" 2>&1 < /dev/null; cd -- "$6" && exec bash -c "$3"' \
  benchsmith "$@"; } 2>/dev/null
rc=$?
if [ -n "$watcher" ]; then kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null; fi
sid=$(cat "$1" 2>/dev/null)
if [ -n "$sid" ]; then pkill -KILL -s "$sid" 2>/dev/null; kill -KILL -- "-$sid" 2>/dev/null; fi
stalled=0
if [ -f "$1.stalled" ]; then stalled=1; rm -f "$1.stalled"; fi
rm -f "$1"
size=$(stat -c %s "$2" 2>/dev/null || echo 0)
printf '%s rc=%s size=%s stalled=%s\n' '@@benchsmith-exec@@' "$rc" "$size" "$stalled"
if [ "$size" -le "$4" ]; then cat "$2"; else head -c "$5" "$2"; tail -c "$(($4 - $5))" "$2"; fi
"""
# $1 pid file, $2 seconds the session gets to end after SIGINT (0: killed at once). The pid
# file may not be written yet when a very short timeout expires.
_KILL = r"""for i in 1 2 3 4 5 6 7 8 9 10; do [ -s "$1" ] && break; sleep 0.1; done
sid=$(cat "$1" 2>/dev/null) || exit 0
if [ "$2" -gt 0 ]; then
  pkill -INT -s "$sid" 2>/dev/null
  for i in $(seq $(($2 * 10))); do pgrep -s "$sid" >/dev/null || break; sleep 0.1; done
fi
pkill -KILL -s "$sid" 2>/dev/null; kill -KILL -- "-$sid" 2>/dev/null; exit 0
"""
_GRACE_S = 30


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
                max_output_bytes: int, stall_timeout: float | None = None) -> ExecResult:
    """Run `command` with bash in the container; kill its whole session on timeout, or once
    its output has not grown for `stall_timeout` seconds."""
    pid_file, log_file = f"{LOG_DIR}/{seq:04d}.pid", f"{LOG_DIR}/{seq:04d}.log"
    head = min(_HEAD_BYTES, max_output_bytes // 4)
    stall = max(1, math.ceil(stall_timeout)) if stall_timeout else 0
    argv = ["bash", "-c", _WRAPPER, "benchsmith", pid_file, log_file, command,
            str(max_output_bytes), str(head), cwd, str(stall)]
    start = time.monotonic()
    exec_id = client.api.exec_create(container_id, argv, stdout=True, stderr=True,
                                     environment=env, workdir="/")["Id"]
    # A client without read timeout: the wrapper is silent until the command ends.
    reader = _Reader(stream_client.api.exec_start(exec_id, stream=True, demux=False))
    reader.start()
    timed_out = False
    deadline = start + timeout
    try:
        # Short slices: a Ctrl-C that lands on another thread is acted on within 0.2 s.
        while reader.is_alive() and time.monotonic() < deadline:
            reader.join(min(0.2, max(deadline - time.monotonic(), 0)))
        if reader.is_alive():
            timed_out = True  # interrupted first: pytest still writes its summary and report
            kill_session(client, container_id, pid_file, grace_s=INTERRUPT_GRACE_S)
            reader.join(_GRACE_S)
    except BaseException:
        with contextlib.suppress(Exception):
            kill_session(client, container_id, pid_file)
        raise
    result = _parse(b"".join(reader.chunks), max_output_bytes, head)
    if result is None:
        result = (-9, _lost(client, exec_id, reader), False, False)
    returncode, output, truncated, stalled = result
    if timed_out:
        returncode = -9
        output += f"\n[benchsmith] command timed out after {timeout:.0f}s and was killed\n"
    elif stalled:
        returncode = -9
        output += f"\n[benchsmith] no new output for {stall}s: the command was killed\n"
    return ExecResult(command=command, returncode=returncode, output=output,
                      timed_out=timed_out, stalled=stalled and not timed_out,
                      duration_s=round(time.monotonic() - start, 3), truncated=truncated)


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


def _parse(data: bytes, max_output_bytes: int, head: int) -> tuple[int, str, bool, bool] | None:
    """(returncode, output, truncated, stalled) from the wrapper's stream; None if cut short."""
    match = _HEADER.search(data)
    if match is None:
        return None
    noise, content = data[: match.start()], data[match.end():]
    size = int(match.group(2))
    truncated = size > max_output_bytes
    if truncated:  # the same shape as output.read_capped
        marker = f"\n[benchsmith] ... {size - max_output_bytes} bytes of output cut ...\n"
        content = content[:head] + marker.encode() + content[head:]
    return (int(match.group(1)), (noise + content).decode("utf-8", errors="replace"), truncated,
            match.group(3) == b"1")
