"""A real Ray cluster on 127.0.0.1 for the tests: a head and worker nodes, each `ray start
--block` in a process group of its own, so one node can be killed alone and everything it
started goes with it. `ray stop` is never used: it stops every Ray process on the machine."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))
# Dead nodes are noticed within seconds instead of the default ~30 s.
SYSTEM_CONFIG = {"health_check_period_ms": 1000, "health_check_failure_threshold": 3,
                 "health_check_timeout_ms": 1000}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Node:
    """One `ray start --block` process group, with its own TMPDIR for the tasks it runs."""

    def __init__(self, args: list[str], tmp: Path, log: Path) -> None:
        self.tmp = tmp
        tmp.mkdir(parents=True, exist_ok=True)
        # Each node's own clone and environment cache, as on separate machines, fresh per run.
        env = {**os.environ, "TMPDIR": str(tmp), "RAY_USAGE_STATS_ENABLED": "0",
               "BENCHSMITH_CACHE": str(tmp.with_name(tmp.name + "-cache"))}
        env.pop("RAY_ADDRESS", None)
        self.log = log
        with open(log, "wb") as handle:
            self.process = subprocess.Popen([RAY, "start", "--block", *args], env=env,
                                            stdout=handle, stderr=subprocess.STDOUT,
                                            start_new_session=True)

    def kill(self) -> None:
        """SIGKILL the node and everything it started, as when its machine dies: its process
        group, and every descendant (Ray workers and the commands they run in sessions of
        their own outlive a killed raylet)."""
        family = [self.process.pid, *_descendants(self.process.pid)]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        for pid in family:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait(timeout=30)


class RayCluster:
    """`head + workers` nodes with `cpus` CPUs each; `address` is what drivers join."""

    def __init__(self, root: Path | None = None) -> None:
        _become_subreaper()
        self.root = root or Path(tempfile.mkdtemp(prefix="bsray-"))
        # Ray's socket paths must stay short: its temp dir lives directly under /tmp.
        self.temp_dir = Path(tempfile.mkdtemp(prefix="bsr", dir="/tmp"))
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.nodes: list[Node] = []

    def _common(self, cpus: int) -> list[str]:
        # Every node offers Docker (the machine's one engine): `--backend docker` tasks need it.
        return [f"--num-cpus={cpus}", "--node-ip-address=127.0.0.1", "--disable-usage-stats",
                f"--temp-dir={self.temp_dir}", '--resources={"docker": 1}']

    def start_head(self, cpus: int = 1) -> Node:
        node = Node(["--head", f"--port={self.port}", "--include-dashboard=false",
                     f"--system-config={json.dumps(SYSTEM_CONFIG)}", *self._common(cpus)],
                    self.root / "node0-tmp", self.root / "node0.log")
        self.nodes.append(node)
        self.wait_for(1)
        return node

    def add_node(self, cpus: int = 1) -> Node:
        index = len(self.nodes)
        node = Node([f"--address={self.address}", *self._common(cpus)],
                    self.root / f"node{index}-tmp", self.root / f"node{index}.log")
        self.nodes.append(node)
        self.wait_for(sum(1 for n in self.nodes if n.process.poll() is None))
        return node

    def pids(self) -> set[int]:
        """Every process the cluster's nodes have started (Ray workers among them)."""
        return {pid for node in self.nodes for pid in [node.process.pid, *_descendants(node.process.pid)]}

    def alive_nodes(self) -> int:
        code = (f"import ray, logging; ray.init(address={self.address!r}, logging_level=logging.ERROR); "
                "print(sum(1 for n in ray.nodes() if n['Alive']))")
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                timeout=120, env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"})
        lines = result.stdout.strip().splitlines()
        return int(lines[-1]) if result.returncode == 0 and lines else 0

    def wait_for(self, count: int, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while self.alive_nodes() != count:
            for node in self.nodes:
                if node.process.poll() is not None and node.process.returncode not in (None, -9):
                    raise RuntimeError(f"ray node exited: {node.log.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Ray cluster did not reach {count} nodes")
            time.sleep(1)

    def stop(self) -> None:
        """Stop every node (gracefully first), then kill anything still running from this
        cluster's temp dir and reap what was orphaned to us."""
        for node in reversed(self.nodes):
            if node.process.poll() is None:
                node.process.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    node.process.wait(timeout=20)
            node.kill()
        for pid in _pids_mentioning(str(self.temp_dir)):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
        time.sleep(1)
        _reap()
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def _become_subreaper() -> None:
    """Orphans of killed nodes come to this process (to be reaped) instead of to PID 1, which
    on these machines never reaps them."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _reap() -> None:
    """Collect our zombie children (never a live one: another Popen may still wait for it)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "Z" and int(fields[1]) == os.getpid():
            try:
                os.waitpid(int(entry.name), os.WNOHANG)
            except ChildProcessError:
                continue


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _pids_mentioning(text: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline and int(entry.name) != os.getpid():
            pids.append(int(entry.name))
    return pids
