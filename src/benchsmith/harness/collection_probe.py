"""Test modules whose import waits on the network (test data fetched at import time, retried
with growing delays), found all at once instead of one stall limit each.

When a stalled pytest run was importing a test module and Python's fault handler shows it in
network code (a socket, urllib, a download or retry function), other modules of the suite
likely do the same. Each test module is then collected alone, several at a time in the
sandbox; those still collecting after a short limit are stopped the same way, and the ones
whose traceback is in network code too are left out of the rerun together and recorded as
needing the network (a module that is merely slow to import is not).
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
# A module still collecting after this long is stopped with SIGABRT; it is left out when the
# fault handler then shows it in network code (a slow import of a large library is not).
MODULE_LIMIT_S = 10.0

# Runs in the sandbox's environment (Python 3.6 or newer), in the checkout; argv: the time
# limit, the parallelism, the most modules to probe, then paths to leave alone. For each module that is still being
# collected at the limit: "SLOW path", its fault handler's traceback, "END".
_SCRIPT = r"""
import configparser, fnmatch, os, re, signal, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
limit, parallel, most = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
skipped = set(sys.argv[4:])
def configured():
    # python_files of the file pytest reads its configuration from, in pytest's order
    for name, section in (("pytest.ini", "pytest"), (".pytest.ini", "pytest"),
                          ("pyproject.toml", None), ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        if not os.path.isfile(name):
            continue
        text = open(name, encoding="utf-8", errors="replace").read()
        if section is None:
            table = re.search(r"^\[tool\.pytest\.ini_options\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
            if table is None:
                continue
            value = re.search(r"^python_files\s*=\s*(\[.*?\]|\"[^\"]*\"|'[^']*')", table.group(1), re.M | re.S)
            return re.findall(r"[\"']([^\"']+)[\"']", value.group(1)) if value else None
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text)
        except configparser.Error:
            continue
        if parser.has_section(section) or name.endswith("pytest.ini"):
            if parser.has_option(section, "python_files"):
                return parser.get(section, "python_files").split()
            return None
    return None
patterns = configured() or ["test_*.py", "*_test.py"]
modules = []
for root, dirs, files in os.walk("."):
    dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in (
        "node_modules", "build", "dist", "venv", "site-packages", "__pycache__"))
    for name in sorted(files):
        path = os.path.relpath(os.path.join(root, name))
        if any(fnmatch.fnmatch(path if "/" in p else name, p) for p in patterns):
            if path not in skipped:
                modules.append(path)
if len(modules) > most:
    print("TOO MANY %d" % len(modules))
    sys.exit(0)
def collect(path):
    with open(os.devnull, "wb") as null:
        process = subprocess.Popen([sys.executable, "-m", "pytest", "--collect-only", "-q",
                                    "-p", "no:cacheprovider", path], stdout=null,
                                   stderr=subprocess.PIPE, env=dict(os.environ, PYTHONFAULTHANDLER="1"))
        try:
            process.communicate(timeout=limit)
            return None
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)
            try:
                err = process.communicate(timeout=10)[1]
            except subprocess.TimeoutExpired:
                process.kill()
                err = process.communicate()[1]
            return path, err.decode("utf-8", "replace")
with ThreadPoolExecutor(max_workers=parallel) as pool:
    for slow in pool.map(collect, modules):
        if slow:
            print("SLOW " + slow[0])
            print(slow[1])
            print("END")
"""


def waits_on_network(output: str) -> bool:
    """Whether the fault handler's traceback at the end of `output` shows network code."""
    dump = output.rfind("Fatal Python error: ")
    return dump >= 0 and _NETWORK_FRAME.search(output, dump) is not None


def slow_modules(sandbox: Sandbox, env: dict[str, str], skipped: list[str],
                 limit: float = MODULE_LIMIT_S) -> list[str]:
    """The test modules (pytest's `python_files`, by default ``test_*.py`` and ``*_test.py``;
    checkout-relative) whose collection alone
    is, after `limit` seconds, still waiting in network code; `skipped` are not tried. Empty
    when the probe cannot run."""
    command = (f"python -c {shlex.quote(_SCRIPT.strip())} {limit:g} {PARALLEL} {MAX_MODULES} "
               + " ".join(shlex.quote(p) for p in skipped))
    # every module may wait out the limit (and its traceback), `PARALLEL` at a time
    budget = (limit + 10) * (MAX_MODULES / PARALLEL + 2)
    result = sandbox.exec(command, env=env, timeout=budget)
    found = re.finditer(r"^SLOW (?P<path>[^\n]+)\n(?P<dump>.*?)^END$", result.output, re.MULTILINE | re.DOTALL)
    return [m["path"].strip() for m in found if waits_on_network(m["dump"])]
