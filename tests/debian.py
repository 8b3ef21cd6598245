"""Debian packages the suite needs (a Docker engine, a browser): installed as root when their
tools are missing, so the test command works on a fresh machine of this kind."""

from __future__ import annotations

import os
import shutil
import subprocess


def ensure_tools(tools: dict[str, str], recommends: bool = True) -> str | None:
    """Install the packages of the `tools` (tool -> Debian package) not on PATH; why that
    could not be done, or None."""
    missing = sorted({package for tool, package in tools.items() if shutil.which(tool) is None})
    if not missing:
        return None
    if os.geteuid() != 0:
        return f"{', '.join(missing)} cannot be installed without root: install them and run again"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"],
                    ["apt-get", "install", "-y", "-qq",
                     *([] if recommends else ["--no-install-recommends"]), *missing]):
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            return f"installing {', '.join(missing)} failed: {tail}"
    return None
