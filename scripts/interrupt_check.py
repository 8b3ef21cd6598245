"""Interrupt `benchsmith setup --backend docker` at random moments; count Docker leftovers.

Usage: python scripts/interrupt_check.py [RUNS] [SOURCE]   (default: 20 runs of examples/minicalc)
Exit status 1 when any container or volume labelled benchsmith=1 (other than the shared uv
cache volume) is left behind, or a temporary directory of benchsmith remains.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def labelled(kind: str) -> list[str]:
    """Names of Docker containers or volumes labelled benchsmith=1."""
    command = ["docker", kind, "ls", "-a" if kind == "container" else "-q", "--filter",
               "label=benchsmith=1", "--format", "{{.Names}}" if kind == "container" else "{{.Name}}"]
    if kind == "volume":
        command.remove("-q")
    found = subprocess.run(command, capture_output=True, text=True, check=True).stdout.split()
    return [name for name in found if name != "benchsmith-uv-cache"]


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    source = sys.argv[2] if len(sys.argv) > 2 else str(ROOT / "examples" / "minicalc")
    rng = random.Random(20261121)
    tmp = Path(tempfile.mkdtemp(prefix="interrupt-check-"))
    env = {**os.environ, "TMPDIR": str(tmp)}
    started = time.monotonic()
    for run in range(1, runs + 1):
        delay = rng.uniform(0.5, 12.0)
        signum = rng.choice([signal.SIGINT, signal.SIGTERM])
        proc = subprocess.Popen([sys.executable, "-m", "benchsmith.cli", "setup", source, "--date",
                                 "2024-06-01", "--backend", "docker", "--no-refdb", "--out",
                                 str(tmp / "setup.json")], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(delay)
        finished = proc.poll() is not None
        if not finished:
            proc.send_signal(signum)
        code = proc.wait(timeout=120)
        print(f"run {run:2}: {'finished before' if finished else signal.Signals(signum).name} "
              f"at {delay:4.1f}s -> exit {code}", flush=True)
    containers, volumes = labelled("container"), labelled("volume")
    temp_left = [p.name for p in tmp.iterdir() if p.name.startswith("benchsmith-")]
    print(f"{runs} runs in {time.monotonic() - started:.0f}s; leftover containers: {len(containers)}, "
          f"volumes: {len(volumes)}, temp dirs: {len(temp_left)}")
    for name in containers + volumes + temp_left:
        print(f"  leftover: {name}")
    return 1 if containers or volumes or temp_left else 0


if __name__ == "__main__":
    sys.exit(main())
