"""The local backend: a fresh temporary directory and a uv virtualenv per sandbox."""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import shutil
import signal
import subprocess
import threading
import time
import weakref
from pathlib import Path
from typing import IO

from benchsmith.core import BenchsmithError, ExecResult
from benchsmith.sandbox.config import LocalSandboxConfig
from benchsmith.sandbox.deadline import command_timeout
from benchsmith.sandbox.env import SERVICE_MARKER, offline_env, sandbox_base_env
from benchsmith.sandbox.loopback_proxy import loopback_proxy
from benchsmith.sandbox.output import INTERRUPT_GRACE_S, read_capped
from benchsmith.sandbox.pythons import host_pythons, version_key
from benchsmith.sandbox.tools import scratch_dir, uv_binary

_LIVE: weakref.WeakSet[LocalSandbox] = weakref.WeakSet()
# Set in every command's environment: the processes a command leaves behind still carry it.
_MARKER = "BENCHSMITH_SANDBOX"


def close_all() -> None:
    """Close every open local sandbox (used on SIGTERM and at exit)."""
    for sandbox in list(_LIVE):
        sandbox.close()


atexit.register(close_all)


class LocalSandbox:
    """Runs commands on this machine in a throw-away directory with its own virtualenv.

    Layout: ``<root>/repo`` (the checkout, also :attr:`workdir`), ``<root>/venv``,
    ``<root>/home`` (a private HOME), ``<root>/logs``.
    """

    def __init__(self, config: LocalSandboxConfig | None = None) -> None:
        self.config = config or LocalSandboxConfig()
        parent = self.config.tmp_dir
        if parent:
            Path(parent).mkdir(parents=True, exist_ok=True)
        if self.config.root:
            self.root = Path(self.config.root).resolve()
            self.root.mkdir(parents=True, exist_ok=True)
        else:
            self.root = scratch_dir(parent=parent)
        self.workdir = str(self.root / "repo")
        self.venv = self.root / "venv"
        self.home = self.root / "home"
        self.home.mkdir(exist_ok=True)
        (self.root / "logs").mkdir(exist_ok=True)
        (self.home / ".gitconfig").write_text(
            "[user]\n\tname = benchsmith\n\temail = benchsmith@localhost\n"
            "[init]\n\tdefaultBranch = main\n"
        )
        self._python: str | None = None
        self._offline = False  # set_network(False): commands get offline_env()
        self._counter = 0
        self._closed = False
        self._running: subprocess.Popen[bytes] | None = None
        self._lock = threading.RLock()  # a command starts, or the sandbox closes: never both
        _LIVE.add(self)

    # -- lifecycle -----------------------------------------------------------------
    def __enter__(self) -> LocalSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Delete the sandbox directory (venv, checkout, logs)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._running is not None:
                _kill_group(self._running)
            _sweep(str(self.root), services=True)  # the servers it kept for later commands
        if not self.config.keep and not self.config.root:
            shutil.rmtree(self.root, ignore_errors=True)

    # -- files -----------------------------------------------------------------------
    def _host_path(self, path: str) -> Path:
        candidate = Path(path)
        return candidate if candidate.is_absolute() else Path(self.workdir) / candidate

    def upload(self, host_path: Path, sandbox_path: str) -> None:
        """Copy a host file or directory (symlinks kept) to `sandbox_path`."""
        target = self._host_path(sandbox_path)
        if host_path.is_dir():
            shutil.copytree(host_path, target, symlinks=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(host_path, target)

    def write_file(self, path: str, content: bytes) -> None:
        """Write `content` to `path` (relative paths are inside the checkout)."""
        target = self._host_path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)

    def read_file(self, path: str) -> bytes:
        """Read a file from the sandbox."""
        return self._host_path(path).read_bytes()

    def set_network(self, enabled: bool) -> bool:
        """Commands run on the host, with the host's network: it cannot be taken away (False).
        Without it, later commands get :func:`~benchsmith.sandbox.env.offline_env`: package
        managers and model hubs pointed at nothing, proxies at one that reaches loopback only."""
        self._offline = not enabled
        return enabled

    def snapshot(self, name: str, labels: dict[str, str]) -> str:
        """Not possible here: a local environment persists by its `root` directory instead."""
        raise BenchsmithError("the local backend cannot save a sandbox as an image")

    # -- python ------------------------------------------------------------------------
    def available_pythons(self) -> dict[str, str]:
        """The host's CPython interpreters (pyenv, PATH, uv-managed), by minor version: 3.6
        and newer (uv's virtualenvs) and 2.7 (virtualenv's)."""
        return {v: p for v, p in host_pythons().items() if version_key(v) >= (3, 6) or v == "2.7"}

    def setup_python(self, version: str) -> str:
        """Create ``<root>/venv`` with the host interpreter for `version`."""
        pythons = self.available_pythons()
        interpreter = pythons.get(version)
        if interpreter is None:
            raise BenchsmithError(
                f"Python {version} is not available here (have: {', '.join(pythons) or 'none'})"
            )
        if self.venv.exists():
            shutil.rmtree(self.venv)
        # virtualenv before 20.22 is the last that creates Python 2 environments (with pip)
        create = (f"{uv_binary()} tool run --quiet --from 'virtualenv<20.22' virtualenv --quiet "
                  f"--no-periodic-update --python {interpreter} {self.venv}"
                  if version_key(version) < (3, 0)
                  else f"{uv_binary()} venv --quiet --python {interpreter} {self.venv}")
        result = self.exec(
            create,
            cwd=str(self.root),
            timeout=300,
            use_venv=False,
        )
        if not result.ok:
            raise BenchsmithError(
                f"creating a Python {version} virtualenv failed: {result.output.strip()[-300:]}"
            )
        self._python = version
        return interpreter

    # -- exec -----------------------------------------------------------------------------
    def _env(self, extra: dict[str, str] | None, use_venv: bool) -> dict[str, str]:
        env = sandbox_base_env(self.config.pass_env, home=str(self.home))
        path = [os.path.dirname(uv_binary()), env.get("PATH", os.defpath)]
        if use_venv and self.venv.exists():
            path.insert(0, str(self.venv / "bin"))
            env["VIRTUAL_ENV"] = str(self.venv)
        env["PATH"] = os.pathsep.join(path)
        env.update(self.config.env)
        env.update(offline_env(loopback_proxy()) if self._offline else {})
        env.update(extra or {})
        env[_MARKER] = str(self.root)  # every process a command starts inherits it
        return env

    def exec(
        self,
        command: str,
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
        stall_timeout: float | None = None,
        sweep: bool = False,
        use_venv: bool = True,
    ) -> ExecResult:
        """Run `command` with bash; kill its whole process group on timeout, on a stall (no
        new output for `stall_timeout` seconds) or on Ctrl-C. On timeout the group is first
        interrupted (SIGINT) and given :data:`INTERRUPT_GRACE_S` to end by itself. With
        `sweep`, processes it left running outside its group (a daemon that kept this
        sandbox's environment marker) are killed and named in `contained`."""
        timeout = command_timeout(timeout or self.config.timeout_s)
        if self._closed:
            raise BenchsmithError(f"sandbox {self.root} is closed")
        workdir = cwd or (self.workdir if os.path.isdir(self.workdir) else str(self.root))
        self._counter += 1
        log_path = self.root / "logs" / f"{self._counter:03d}.log"
        start = time.monotonic()
        timed_out = False
        with open(log_path, "wb") as log:
            with self._lock:
                # Closed from another thread (Ctrl-C, SIGTERM, a cancelled task) between two
                # commands: the next one must not start, or the shutdown waits for it.
                if self._closed:
                    raise BenchsmithError(f"sandbox {self.root} is closed")
                proc = subprocess.Popen(
                    ["bash", "-c", command],
                    cwd=workdir,
                    env=self._env(env, use_venv),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
                self._running = proc
            stalled = False
            try:
                timed_out, stalled = _wait(proc, log, timeout, stall_timeout)
                if stalled:  # Python with PYTHONFAULTHANDLER=1 prints where it was stuck
                    _signal_group(proc, signal.SIGABRT, wait_s=2)
                if timed_out:  # pytest, interrupted, still writes its summary and report
                    _signal_group(proc, signal.SIGINT, wait_s=INTERRUPT_GRACE_S)
                if timed_out or stalled:
                    _kill_group(proc)
            except BaseException:
                _kill_group(proc)
                raise
            finally:
                _kill_group(proc, leftovers_only=True)
                self._running = None
        left = _sweep(str(self.root)) if sweep else []
        output, truncated = read_capped(log_path, self.config.max_output_bytes)
        returncode = proc.returncode if proc.returncode is not None else -9
        if timed_out:
            output += f"\n[benchsmith] command timed out after {timeout:.0f}s and was killed\n"
        if stalled:
            output += f"\n[benchsmith] no new output for {stall_timeout:.0f}s: the command was killed\n"
        contained = [f"left {len(left)} process(es) running after it ended, killed: "
                     + ", ".join(sorted(set(left)))] if left else []
        output += "".join(f"\n[benchsmith] {line}\n" for line in contained)
        return ExecResult(
            contained=contained,
            command=command,
            returncode=returncode,
            output=output,
            timed_out=timed_out,
            stalled=stalled,
            duration_s=round(time.monotonic() - start, 3),
            truncated=truncated,
        )


def _sweep(root: str, services: bool = False) -> list[str]:
    """Kill this user's processes that carry the sandbox marker `root` in their environment,
    but for servers marked :data:`SERVICE_MARKER` unless `services`; return their names. A
    process that cleared its environment is not found (documented)."""
    wanted, service = f"{_MARKER}={root}\0".encode(), f"\0{SERVICE_MARKER}=1\0".encode()
    killed: list[str] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = b"\0" + Path(f"/proc/{entry}/environ").read_bytes()
            if wanted not in environ or (not services and service in environ):
                continue
            name = Path(f"/proc/{entry}/comm").read_text().strip()
            os.kill(int(entry), signal.SIGKILL)
        except (OSError, ValueError):
            continue
        killed.append(name)
    return killed


def _wait(proc: subprocess.Popen[bytes], log: IO[bytes], timeout: float,
          stall_timeout: float | None) -> tuple[bool, bool]:
    """Wait for `proc`: (timed out, stalled). A stall is `stall_timeout` seconds in which the
    output file did not grow."""
    deadline = time.monotonic() + timeout
    if not stall_timeout:
        return not _ended(proc, timeout), False
    size, grew = -1, time.monotonic()
    while True:
        now = time.monotonic()
        if _ended(proc, max(0.0, min(0.5, deadline - now))):
            return False, False
        now = time.monotonic()
        current = os.fstat(log.fileno()).st_size
        if current != size:
            size, grew = current, now
        if now >= deadline:
            return True, False
        if now - grew >= stall_timeout:
            return False, True


def _ended(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait up to `timeout` seconds for `proc` to end; True when it did. Woken by the exit
    itself through a pidfd where Linux has them (``Popen.wait`` polls in sleeps of up to 50 ms,
    which adds up over the many short commands of an evaluation). The wait is cut into slices
    of at most half a second so that a pending KeyboardInterrupt (``_thread.interrupt_main``, a
    signal handled in another thread) is raised promptly."""
    if proc.poll() is not None:
        return True
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        deadline = time.monotonic() + timeout
        while not poller.poll(max(0.0, min(0.5, deadline - time.monotonic())) * 1000):
            if time.monotonic() >= deadline:
                break
    finally:
        os.close(pidfd)
    return proc.poll() is not None


def _signal_group(proc: subprocess.Popen[bytes], signum: int, wait_s: float) -> None:
    """Send `signum` to the process group of `proc` and give it `wait_s` seconds to act."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signum)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=wait_s)


def _kill_group(proc: subprocess.Popen[bytes], leftovers_only: bool = False) -> None:
    """SIGKILL the process group of `proc` (its children, daemons it left behind)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if not leftovers_only:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
