"""The Docker engine the suite's Docker tests need: used when one answers, else installed (Debian's
docker.io and debootstrap, as root) and started for the session, and stopped at its end."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

_LOG = Path(tempfile.gettempdir()) / "benchsmith-tests-dockerd.log"


def _answers() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "info"], capture_output=True, timeout=60).returncode == 0


def start_engine() -> tuple[subprocess.Popen[bytes] | None, str | None]:
    """(the dockerd started here or None, why no engine is available or None)."""
    if _answers():
        return None, None
    missing = [package for tool, package in (("dockerd", "docker.io"), ("debootstrap", "debootstrap"))
               if shutil.which(tool) is None]
    if missing:
        if os.geteuid() != 0:
            return None, (f"no Docker engine answers and {', '.join(missing)} cannot be installed "
                          "without root: install and start Docker, then run the tests again")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for command in (["apt-get", "update", "-qq"],
                        ["apt-get", "install", "-y", "-qq", *missing]):
            done = subprocess.run(command, capture_output=True, text=True, env=env)
            if done.returncode != 0:
                tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
                return None, f"installing {', '.join(missing)} failed: {tail}"
    if os.geteuid() != 0:
        return None, "no Docker engine answers and dockerd needs root to start"
    with open(_LOG, "wb") as log:
        engine = subprocess.Popen(["dockerd"], stdout=log, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    for _ in range(60):
        if _answers():
            return engine, None
        if engine.poll() is not None:
            break
        time.sleep(1)
    stop_engine(engine)
    tail = " | ".join(_LOG.read_text(errors="replace").strip().splitlines()[-3:])
    return None, f"dockerd did not start: {tail}"


def stop_engine(engine: subprocess.Popen[bytes] | None) -> None:
    """Stop an engine this module started."""
    if engine is None or engine.poll() is not None:
        return
    engine.terminate()
    try:
        engine.wait(timeout=30)
    except subprocess.TimeoutExpired:
        engine.kill()
        engine.wait()
