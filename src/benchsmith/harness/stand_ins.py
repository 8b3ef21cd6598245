"""Local stand-ins for public hosts that test suites call (httpbin.org): a WSGI app from PyPI,
served on loopback at a free port, and the variables that point a suite at it.

A plan that needs a stand-in installs it, during the install phase (which has the network),
into a virtual environment of its own under ``$HOME/.benchsmith/stand-ins/<name>`` with any
Python 3.6+ the sandbox has (never into the project's environment, which may be Python 2),
pinned to :data:`EXCLUDE_NEWER`. Every test command begins by starting it (idempotently:
a stand-in that still answers is reused) and exporting where it listens, so tests that run
offline, in an environment image or in a later sandbox reach it too. The server runs in a
session of its own with ``BENCHSMITH_SERVICE=1`` in its environment: the sandboxes' sweep of
processes a command left running spares it; closing the sandbox ends it.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from benchsmith.sandbox.env import SERVICE_MARKER

ROOT = "$HOME/.benchsmith/stand-ins"
# The stand-ins' own pin: fixed, whatever the project's date (the app only has to answer).
EXCLUDE_NEWER = "2024-06-01T00:00:00Z"
_PYTHONS = ("python3.13", "python3.12", "python3.11", "python3.10", "python3.9", "python3.8",
            "python3.7", "python3.6", "python3", "python")
# Serves module:attribute with waitress on 127.0.0.1 at a port the kernel picks, and writes that
# port to the file named by argv[1] once it listens. A connection that sends no complete request
# (a suite's https:// call, whose TLS handshake a plain-HTTP server never answers) is closed after
# IDLE_S, not waitress's default two minutes, so the test fails in seconds instead of stalling.
IDLE_S = 10
_LAUNCHER = ("import importlib, sys, waitress; module, _, name = sys.argv[2].partition(':'); "
             "app = getattr(importlib.import_module(module), name); "
             "server = waitress.create_server(app, host='127.0.0.1', port=0, threads=8, "
             f"channel_timeout={IDLE_S}, cleanup_interval={max(1, IDLE_S // 4)}); "
             "open(sys.argv[1] + '.tmp', 'w').write(str(server.effective_port)); "
             "__import__('os').rename(sys.argv[1] + '.tmp', sys.argv[1]); server.run()")


@dataclass(frozen=True)
class StandIn:
    """A public host a suite calls and the local app that answers in its place."""

    host: str  # the public host, e.g. "httpbin.org"
    name: str  # the stand-in's directory and the word the start command prints
    packages: tuple[str, ...]  # installed into its own environment (waitress serves it)
    app: str  # the WSGI application, "module:attribute"
    # words in test sources that say the suite calls the host (or reads where it is)
    markers: tuple[str, ...]
    # requirement names that mean the suite serves its own stand-in (it then gets none)
    serves_own: tuple[str, ...]
    # variables that point the suite at the stand-in; "{url}" is its address, with a slash
    env: dict[str, str] = field(default_factory=dict)


STAND_INS: dict[str, StandIn] = {
    "httpbin.org": StandIn(
        host="httpbin.org", name="httpbin", packages=("httpbin", "waitress"), app="httpbin:app",
        markers=("httpbin.org", "HTTPBIN_URL"), serves_own=("pytest-httpbin", "pytest_httpbin"),
        env={"HTTPBIN_URL": "{url}"}),
}


def known(hosts: list[str]) -> list[StandIn]:
    """The stand-ins for `hosts` that the table knows, once each, in the table's order."""
    return [s for host, s in STAND_INS.items() if host in hosts]


def _home(stand_in: StandIn) -> str:
    return f"{ROOT}/{stand_in.name}"


def start_path(stand_in: StandIn) -> str:
    """Where the install writes `stand_in`'s start script (a shell word, $HOME unexpanded)."""
    return f"{_home(stand_in)}/start"


def install_command(stand_in: StandIn) -> str:
    """One shell line that installs `stand_in` into its own environment with the newest Python
    3.6+ found (a sandbox without one says so and installs nothing) and writes its start
    script (one line, so it fits a Dockerfile RUN)."""
    home = _home(stand_in)
    candidates = " ".join(_PYTHONS)
    check = shlex.quote("import sys; assert sys.version_info >= (3, 6); print(sys.executable)")
    packages = " ".join(stand_in.packages)
    script = shlex.quote(start_script(stand_in))
    return (f'py=""; for p in {candidates}; do py=$("$p" -c {check} 2>/dev/null) && break; done; '
            f'rm -rf "{home}" && if [ -z "$py" ]; then echo "benchsmith: no Python 3.6+ here for '
            f'the local stand-in of {stand_in.host}" >&2; else uv venv --quiet --python "$py" '
            f'"{home}" && uv pip install --quiet --python "{home}/bin/python" --exclude-newer '
            f'{EXCLUDE_NEWER} {packages}; fi && mkdir -p "{home}" && '
            f'printf \'%s\\n\' {script} > "{start_path(stand_in)}"')


def start_script(stand_in: StandIn) -> str:
    """POSIX shell that starts `stand_in` unless it answers already, waits until it listens,
    and prints ``export VAR=address`` lines for the suite (errors go to stderr)."""
    home = _home(stand_in)
    probe = shlex.quote("import socket, sys; socket.create_connection(('127.0.0.1', "
                        "int(sys.argv[1])), 2)")
    exports = " ".join(f"{var}={value.replace('{url}', '$url')}"
                       for var, value in sorted(stand_in.env.items()))
    return (
        f'd="{home}"; '
        f'if [ ! -x "$d/bin/python" ]; then echo "benchsmith: the local stand-in of {stand_in.host} '
        'is not installed" >&2; exit 0; fi; '
        'port=$(cat "$d/port" 2>/dev/null); '
        f'if [ -z "$port" ] || ! "$d/bin/python" -c {probe} "$port" 2>/dev/null; then '
        'rm -f "$d/port"; '
        f'{SERVICE_MARKER}=1 setsid "$d/bin/python" -c {shlex.quote(_LAUNCHER)} "$d/port" '
        f'{stand_in.app} >"$d/log" 2>&1 </dev/null & '
        'i=0; until [ -s "$d/port" ]; do i=$((i+1)); '
        f'if [ $i -ge 300 ]; then echo "benchsmith: the local stand-in of {stand_in.host} did '
        'not start: $(tail -n 3 "$d/log")" >&2; exit 0; fi; sleep 0.1; done; '
        'port=$(cat "$d/port"); '
        'fi; '
        'url="http://127.0.0.1:$port/"; '
        f'echo "export {exports}"'
    )


def start_prefix(hosts: list[str]) -> str:
    """What precedes a test command that needs stand-ins for `hosts`: start each and export
    where it listens (empty without any; a stand-in that cannot start says so, and the tests
    run without it)."""
    return "".join(f'eval "$(sh "{start_path(s)}")" && ' for s in known(hosts))


def install_commands(hosts: list[str]) -> list[str]:
    """The install commands of the stand-ins for `hosts`."""
    return [install_command(s) for s in known(hosts)]
