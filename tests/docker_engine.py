"""The Docker engine the suite's Docker tests need: used when one answers, else installed (Debian's
docker.io and debootstrap, as root) and started for the session, and stopped at its end."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from .debian import ensure_tools

_LOG = Path(tempfile.gettempdir()) / "benchsmith-tests-dockerd.log"


def _answers() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "info"], capture_output=True, timeout=60).returncode == 0


def start_engine() -> tuple[subprocess.Popen[bytes] | None, str | None]:
    """(the dockerd started here or None, why no engine is available or None)."""
    if _answers():
        return None, None
    problem = ensure_tools({"dockerd": "docker.io", "debootstrap": "debootstrap"})
    if problem:
        return None, f"no Docker engine answers and {problem}"
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
