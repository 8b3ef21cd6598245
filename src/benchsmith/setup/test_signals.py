"""What a test run's output says beyond its per-test results: that no test ran, that the tests
or their collection needed another host, which steps of the project's own they ask for first."""

from __future__ import annotations

import re

from benchsmith.core import Diagnosis, ExecResult, output_tail
from benchsmith.parsing import (
    network_failures,
    parse_test_output,
    pytest_rootdir,
    reaches_network,
    unreachable_hosts,
)
from benchsmith.setup.context_model import Hint

__all__ = ["COLLECTION_INTERRUPTED", "collection_needs_network", "log_tail", "needs_browser",
           "needs_network", "no_tests_ran", "runner_failure", "steps_asked_for"]

COLLECTION_INTERRUPTED = re.compile(r"Interrupted: (\d+) errors? during collection")
# A test that asks for a step of the project's own first: "Please run the following command to
# populate it: python3 scripts/update_package_cache.py data /abs/checkout/.cache", "run
# `./build.sh` first". Only a script of the repository is ever run (the repair checks).
_RUN_FIRST = re.compile(
    r"\b[Rr]un\b(?: the following command| this command)?[^:`'\"\n]{0,60}?:?\s*[`'\"]?"
    r"(?P<command>(?:python3?|bash|sh) [\w.-]+(?:/[\w.-]+)*\.(?:py|sh)(?: [^`'\"\n]*)?|"
    r"\./[\w.-]+(?:/[\w.-]+)*(?: [^`'\"\n]*)?)")

# A traceback frame, as pytest prints it in a collection error ("path.py:12: in name") and as
# Python prints it (in an INTERNALERROR block: 'File "path.py", line 12, in name').
_FRAME = re.compile(r'^(?:INTERNALERROR>)?\s*(?:File "(?P<python>[^"]+\.py)", line \d+, in \S+|'
                    r'(?P<pytest>\S+\.py):\d+: in \S+)\s*$', re.MULTILINE)
_RAISED = re.compile(r"^(?:E|INTERNALERROR>)\s+(?P<error>(?:\w+\.)*\w*(?:Error|Exception)\b.*)$",
                     re.MULTILINE)
_SECTION = re.compile(r"^(?:_+ ERROR collecting \S+ _+|INTERNALERROR>.*)$", re.MULTILINE)
_PYTEST_CODE = re.compile(r"(?:^|/)(?:_pytest/[\w/]+|pytest)\.py$")


def runner_failure(out: str) -> str | None:
    """The error pytest's own code raised while it collected the tests or ran itself (its last
    frame in ``_pytest/`` or ``pytest.py``), never the code under test: the pytest of the date
    does not run on this Python (an assertion rewriter older than the interpreter's ast)."""
    for raised in _RAISED.finditer(out):
        before = out[:raised.start()]
        section = max((m.start() for m in _SECTION.finditer(before)), default=-1)
        frames = [m["python"] or m["pytest"] for m in _FRAME.finditer(before, section + 1)]
        if section >= 0 and frames and _PYTEST_CODE.search(frames[-1]):
            return raised["error"].strip()[:200]
    return None


def log_tail(text: str, lines: int = 15) -> str:
    """The last `lines` lines of a command's output, as a diagnosis quotes it."""
    return output_tail(text, lines=lines, width=10_000)


def steps_asked_for(out: str) -> tuple[list[str], list[str]]:
    """The commands test messages ask to run first, with the checkout's path (pytest's rootdir)
    made relative: they run in the next sandbox, at another path. Also the checkout's paths
    they were given as absolute ones: places the tests look in, for the step to fill."""
    root = pytest_rootdir(out)
    steps: list[str] = []
    places: list[str] = []
    for match in _RUN_FIRST.finditer(out):
        command = match["command"].strip().rstrip(".").strip()
        if root:
            prefix = root + "/"
            places += [w.removeprefix(prefix) for w in command.split() if w.startswith(prefix)]
            command = command.replace(prefix, "").replace(root, ".")
        for word in (" first", " before running the tests", " before the tests"):
            command = command.removesuffix(word)
        if command not in steps:
            steps.append(command)
    return steps[:3], list(dict.fromkeys(places))


def no_tests_ran(out: str, returncode: int, runner: str) -> bool:
    """The runner said it ran no test at all."""
    if runner in ("unittest", "runtests"):
        return bool(re.search(r"^Ran 0 tests", out, re.MULTILINE))
    if runner == "bintest":
        return bool(re.search(r"tests finished: 0 passed, in ", out))
    return returncode == 5 or "no tests ran" in out or "collected 0 items" in out


def needs_browser(tests: list[str]) -> Diagnosis:
    """Every test that ran failed on a browser its test library drives that is not installed
    (installs skip Playwright's and Puppeteer's downloads here)."""
    return Diagnosis(category="testing", kind="test_environment",
                     reason=f"every test that ran needs a browser that is not installed here "
                            f"({len(tests)} tests, e.g. {tests[0]})", facts={"tests": tests[:20]})


def needs_network(tests: list[str], outputs: list[ExecResult],
                  test_hosts: list[Hint] | None = None) -> Diagnosis:
    """Every test that ran failed reaching another host: which tests, and which hosts (those
    the failures name, else those the URLs in the failing tests' modules name)."""
    hosts = list(dict.fromkeys(h for r in outputs for h in unreachable_hosts(r.output)))
    modules = {test.split("::", 1)[0] for test in tests}
    hosts = hosts or list(dict.fromkeys(h.value for h in test_hosts or [] if h.source in modules))
    where = f"; hosts: {', '.join(hosts)}" if hosts else ""
    return Diagnosis(category="testing", kind="needs_network",
                     reason=f"every test that ran needs the network ({len(tests)} tests, "
                            f"e.g. {tests[0]}{where})",
                     facts={"hosts": hosts, "tests": tests[:20]})


def collection_needs_network(out: str, returncode: int, runner: str) -> Diagnosis | None:
    """No test ran because collecting them (a test module, a conftest) tried to reach another
    host."""
    ran = parse_test_output(out, runner)
    failed = network_failures(out, runner)
    if ran and not (failed and (COLLECTION_INTERRUPTED.search(out) or no_tests_ran(out, returncode, runner))):
        return None
    if not failed and not reaches_network(out):
        return None
    hosts = unreachable_hosts(out)
    where = f" (hosts: {', '.join(hosts)})" if hosts else ""
    return Diagnosis(category="testing", kind="needs_network",
                     reason=f"no test ran: collecting them needs the network{where}",
                     facts={"hosts": hosts, "files": sorted(failed)}, evidence=log_tail(out))
