"""Test modules whose import waits on the network (test data fetched at import time, retried
with growing delays), found all at once instead of one stall limit each.

When a stalled pytest run was importing a test module and Python's fault handler shows it in
network code (a socket, urllib, a download or retry function), other modules of the suite
likely do the same. Each test module is then collected alone, several at a time in the
sandbox, and those whose collection does not end within a short limit are left out of the
rerun together, and recorded as needing the network.
"""

from __future__ import annotations

import re
import shlex

from benchsmith.core import Sandbox

# Frames of the fault handler's traceback that wait on another host.
_NETWORK_FRAME = re.compile(
    r'^\s*File "[^"]*(?:/socket\.py|/ssl\.py|/urllib/|/http/client\.py|/requests/|/urllib3/|/httpx/'
    r'|/httpcore/|/aiohttp/|download[^"/]*\.py|retry[^"/]*\.py)", line \d+'
    r'|^\s*File "[^"]+", line \d+ in \w*(?:download|urlopen|retry|fetch)\w*$',
    re.MULTILINE | re.IGNORECASE)
MAX_MODULES = 400  # a larger suite is not probed: the rounds of stall limits stay the backstop
PARALLEL = 8  # collections at a time: they mostly wait
MODULE_LIMIT_S = 30.0  # a module that takes longer to collect than this waits on something

# Runs in the sandbox's environment (Python 3.6 or newer), in the checkout; argv: the time
# limit, the parallelism, then paths to leave alone. Prints one "SLOW path" per module.
_SCRIPT = r"""
import fnmatch, os, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
limit, parallel, skipped = float(sys.argv[1]), int(sys.argv[2]), set(sys.argv[3:])
modules = []
for root, dirs, files in os.walk("."):
    dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in (
        "node_modules", "build", "dist", "venv", "site-packages", "__pycache__"))
    for name in sorted(files):
        if fnmatch.fnmatch(name, "test_*.py") or fnmatch.fnmatch(name, "*_test.py"):
            path = os.path.relpath(os.path.join(root, name))
            if path not in skipped:
                modules.append(path)
if len(modules) > int(os.environ.get("PROBE_MAX", "400")):
    print("TOO MANY %d" % len(modules))
    sys.exit(0)
def collect(path):
    with open(os.devnull, "wb") as null:
        process = subprocess.Popen([sys.executable, "-m", "pytest", "--collect-only", "-q",
                                    "-p", "no:cacheprovider", path], stdout=null, stderr=null)
        try:
            process.wait(timeout=limit)
            return None
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            return path
with ThreadPoolExecutor(max_workers=parallel) as pool:
    for slow in pool.map(collect, modules):
        if slow:
            print("SLOW " + slow)
"""


def waits_on_network(output: str) -> bool:
    """Whether the fault handler's traceback at the end of `output` shows network code."""
    dump = output.rfind("Fatal Python error: ")
    return dump >= 0 and _NETWORK_FRAME.search(output, dump) is not None


def probe_limit(stall_timeout: float | None) -> float:
    """How long one module's collection may take: half the stall limit, 8 to 30 seconds."""
    return min(MODULE_LIMIT_S, max((stall_timeout or MODULE_LIMIT_S) / 2, 8.0))


def slow_modules(sandbox: Sandbox, env: dict[str, str], skipped: list[str],
                 limit: float = MODULE_LIMIT_S) -> list[str]:
    """The test modules (``test_*.py``, ``*_test.py``, checkout-relative) whose collection
    alone takes longer than `limit`; `skipped` are not tried. Empty when the probe cannot run."""
    command = (f"python -c {shlex.quote(_SCRIPT.strip())} {limit:g} {PARALLEL} "
               + " ".join(shlex.quote(p) for p in skipped))
    # every module may wait out the limit, `PARALLEL` at a time
    budget = limit * (MAX_MODULES / PARALLEL + 2)
    result = sandbox.exec(command, env={**env, "PROBE_MAX": str(MAX_MODULES)}, timeout=budget)
    return [line[5:].strip() for line in result.output.splitlines() if line.startswith("SLOW ")]
