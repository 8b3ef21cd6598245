"""Turn a test command's console output into per-test results."""

from __future__ import annotations

import re

from benchsmith.core import LogParser, TestResult
from benchsmith.parsing.bintest_log import (
    BintestLogParser,
    bintest_failure_messages,
    started_function,
)
from benchsmith.parsing.pytest_log import (
    PytestLogParser,
    failure_details,
    failure_messages,
    started_test,
    strip_ansi,
)
from benchsmith.parsing.unittest_log import (
    UnittestLogParser,
    started_description,
    unittest_failure_messages,
)

__all__ = ["BintestLogParser", "PytestLogParser", "UnittestLogParser", "network_failures",
           "parse_test_output", "reaches_network", "running_test", "service_failures", "strip_ansi",
           "unreachable_hosts"]

# Exceptions and messages of a test that tried to reach another host (sandboxes reach only the
# package indexes).
_NETWORK = re.compile(
    r"ConnectionError|ConnectionRefusedError|NewConnectionError|MaxRetryError|gaierror|URLError|"
    r"RemoteDisconnected|ProxyError|Name or service not known|Temporary failure in name resolution|"
    r"nodename nor servname|Network is unreachable|getaddrinfo failed|Failed to establish a new "
    r"connection|Could not resolve host|No address associated with hostname")

# A local server the tests expected is not there: the environment's to provide, not the network.
_SERVICES: dict[str, re.Pattern[str]] = {
    "postgresql": re.compile(
        r"could not connect to server|connection to server at \"[^\"]*\"(?: \([^)]*\))?, port 5432 "
        r"failed|Is the server running locally and accepting|Connect call failed \('[^']*', 5432\)|"
        r"connection to server on socket \"[^\"]*\.s\.PGSQL\.5432\" failed"),
    "mysql": re.compile(r"Can't connect to (?:local )?(?:MySQL|MariaDB) server|"
                        r"Connect call failed \('[^']*', 3306\)"),
    "redis": re.compile(r"Error \d+ connecting to [\w.\-]+:6379|Connection refused[^\n]*:6379\b|"
                        r"Connect call failed \('[^']*', 6379\)|redis\.exceptions\.ConnectionError"),
}

# The endpoint a failed connection names, and the ports benchsmith starts its services on: a
# refusal on another port (a cluster node, a sentinel, a server with modules of its own) is a
# server the sandbox does not provide, out of reach like another host.
_ENDPOINT = re.compile(r"connecting to [\w.\-]+:(?P<a>\d{1,5})\b|Connect call failed \('[^']*', "
                       r"(?P<b>\d{1,5})\)|server at \"[^\"]*\"(?: \([^)]*\))?, port (?P<c>\d{1,5}) failed")
_SERVICE_PORTS = frozenset({5432, 3306, 6379})


def _elsewhere(message: str) -> bool:
    ports = {int(port) for match in _ENDPOINT.finditer(message)
             for port in match.group("a", "b", "c") if port}
    return bool(ports) and not ports & _SERVICE_PORTS


_PARSERS: dict[str, type[LogParser]] = {
    "pytest": PytestLogParser,
    "unittest": UnittestLogParser,
    "runtests": UnittestLogParser,  # a Django-shaped runtests.py prints unittest's format
    "bintest": BintestLogParser,
}


def parse_test_output(output: str, runner: str) -> list[TestResult]:
    """Parse `output` of a test run made with `runner` (a :data:`~benchsmith.core.RunnerKind`)."""
    parser = _PARSERS.get(runner)
    if parser is None:
        raise ValueError(f"unknown test runner {runner!r}; expected one of {sorted(_PARSERS)}")
    return parser().parse(output)


def running_test(output: str, runner: str) -> str | None:
    """The test that had started but not finished when `output` ends (a hung test), in the
    names :func:`parse_test_output` gives; None when the last test that started finished
    (or no test started: a hang during collection)."""
    if runner == "bintest":
        return started_function(output)
    finished = {t.name for t in parse_test_output(output, runner)}
    started = started_test if runner == "pytest" else started_description
    for line in reversed(strip_ansi(output).splitlines()):
        if name := started(line):
            return None if name in finished else name
    return collecting_module(output) if runner == "pytest" else None


# pytest's header: "rootdir: /path" (and ", configfile: ..." on the same line since pytest 7)
_ROOTDIR = re.compile(r"^rootdir: (?P<root>/\S+?)/?(?:,|$)", re.MULTILINE)
_MODULE_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+\.py)", line \d+ in <module>$', re.MULTILINE)


def pytest_rootdir(output: str) -> str | None:
    """The rootdir pytest's header names (the checkout, in our runs), without a trailing slash."""
    found = _ROOTDIR.search(output)
    return found["root"] if found else None


def collecting_module(output: str) -> str | None:
    """The test module pytest was importing when a stalled run was stopped, relative to its
    rootdir; read from the traceback Python's fault handler prints on SIGABRT (sandboxes send
    one before they kill a stalled run) or on a crash (a C extension that aborts or segfaults
    while it is imported). None without such a traceback, or for a conftest."""
    root = pytest_rootdir(output)
    dump = output.rfind("Fatal Python error: ")
    if root is None or dump < 0:
        return None
    prefix = root + "/"
    modules = [frame["path"][len(prefix):] for frame in _MODULE_FRAME.finditer(output, dump)
               if frame["path"].startswith(prefix) and "/site-packages/" not in frame["path"]]
    # The outermost module of the checkout is the one pytest itself was importing.
    if not modules or modules[-1].rsplit("/", 1)[-1] == "conftest.py":
        return None
    return modules[-1]


def network_failures(output: str, runner: str) -> set[str]:
    """Tests whose failure message says they tried to reach the network (pytest summaries,
    unittest tracebacks); a refused connection to a local service is not the network, unless
    it names a port no service of ours listens on."""
    if runner == "pytest":  # the summary's line, then what the test printed or raised
        details, summary = failure_details(output), failure_messages(output)
        messages = {name: f"{summary.get(name, '')}\n{details.get(name, '')}"
                    for name in summary.keys() | details.keys()}
    elif runner == "bintest":
        messages = bintest_failure_messages(output)
    else:
        messages = unittest_failure_messages(output)
    return {name for name, message in messages.items()
            if (_NETWORK.search(message) and not service_failures(message))
            or (service_failures(message) and _elsewhere(message))}


def reaches_network(text: str) -> bool:
    """Whether `text` says something failed trying to reach another host (not a local service)."""
    return bool(_NETWORK.search(text)) and not service_failures(text)


def service_failures(output: str) -> list[str]:
    """The services (postgresql, mysql, redis) `output` says could not be reached."""
    return [kind for kind, pattern in _SERVICES.items() if pattern.search(output)]


# Where a failed connection names its host: urllib3/requests, urllib3 2, curl, and any URL.
_HOSTS = re.compile(r"host='(?P<a>[\w.\-]+)'|Failed to resolve '(?P<b>[\w.\-]+)'|"
                    r"Could not resolve host: (?P<c>[\w.\-]+)|\bhttps?://(?P<d>[\w\-]+(?:\.[\w\-]+)+)")
_LOOPBACK = frozenset({"localhost", "127.0.0.1", "0.0.0.0"})
_SECTION = re.compile(r"^=+ (?P<title>[^=]+?) =+$", re.MULTILINE)


def unreachable_hosts(output: str) -> list[str]:
    """The hosts other than loopback that the failures and errors in `output` name (pytest's
    FAILURES and ERRORS sections where it has them, else every line), in order of appearance."""
    text = strip_ansi(output)
    sections = list(_SECTION.finditer(text))
    if any(m["title"].strip() in ("FAILURES", "ERRORS") for m in sections):
        ends = [m.start() for m in sections[1:]] + [len(text)]
        text = "\n".join(text[m.end():end] for m, end in zip(sections, ends, strict=True)
                         if m["title"].strip() in ("FAILURES", "ERRORS"))
    hosts = (next(h for h in match.group("a", "b", "c", "d") if h) for match in _HOSTS.finditer(text))
    return [h for h in dict.fromkeys(hosts) if h not in _LOOPBACK]
