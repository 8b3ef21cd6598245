"""The runner-integrity guard from benchsmith's side: installing it into a test environment,
the environment a test command runs it with, and reading what it found.

The guard itself (:mod:`benchsmith.harness.benchsmith_guard`) runs in the test environment's
Python, loaded at interpreter start-up by a ``.pth`` file outside the checkout, and appends its
findings to a record file next to pytest's JUnit report. Its docstring says what it catches and
what it cannot stop. A finding makes the run fail: every pass of the command's run counts as a
failure (a reporting function replaced, the JUnit report changed after pytest wrote it), or
the one test a ``pytest.xfail`` outside the tests turned into an expected failure.

Without a record (an environment without the guard: Python 2, another interpreter) nothing is
concluded either way.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from benchsmith.core import Sandbox

# Where the guard of each test command writes (outside any checkout; one file per command).
RECORD_DIR = "/tmp/benchsmith-guard"
RECORD_ENV = "BENCHSMITH_GUARD"
CHECKOUT_ENV = "BENCHSMITH_CHECKOUT"
_SOURCE = Path(__file__).with_name("benchsmith_guard.py")
# The .pth line: load the guard by its path (a module of the checkout cannot stand in for it)
# when the command asks for it, once (a virtualenv's lib64 links to lib: the line runs twice);
# any failure leaves the interpreter as it was.
_PTH = ("import os, sys; exec(\"if os.environ.get('BENCHSMITH_GUARD') and "
        "'benchsmith_guard' not in sys.modules:\\n try:\\n"
        "  import importlib.util as u\\n"
        "  s = u.spec_from_file_location('benchsmith_guard', {path!r})\\n"
        "  m = sys.modules['benchsmith_guard'] = u.module_from_spec(s)\\n"
        "  s.loader.exec_module(m); m.install()\\n"
        " except Exception:\\n  pass\")\n")


def install_script() -> str:
    """Python (any version) that installs the guard into the interpreter's site-packages
    (3.6 and newer; older ones are left without it)."""
    source = _SOURCE.read_text(encoding="utf-8")
    return ("import os, sys, sysconfig\n"
            "if sys.version_info >= (3, 6):\n"
            "    site = sysconfig.get_paths()['purelib']\n"
            "    module = os.path.join(site, '_benchsmith_guard.py')\n"
            f"    open(module, 'w').write({source!r})\n"
            "    open(os.path.join(site, 'benchsmith_guard.pth'), 'w').write("
            f"{_PTH!r}.format(path=module))\n")


def guard_env(record: str, checkout: str) -> dict[str, str]:
    """What a test command's environment needs for the guard to record to `record`."""
    return {RECORD_ENV: record, CHECKOUT_ENV: checkout}


@dataclass
class Findings:
    """What the guard recorded about one test command."""

    replaced: dict[str, list[str]] = field(default_factory=dict)  # runner -> "name by file"
    junit_changed: bool = False  # the report read is not the one pytest wrote
    xfailed: dict[str, str] = field(default_factory=dict)  # test -> file that called xfail
    flooded: bool = False  # the record was larger than a command's output may be

    def reasons(self) -> list[str]:
        """One line per finding, for reports."""
        lines = [f"the code under test replaced {runner}'s reporting ({', '.join(names[:5])})"
                 for runner, names in sorted(self.replaced.items())]
        if self.junit_changed:
            lines.append("pytest's JUnit report was changed after pytest wrote it")
        if self.flooded:
            lines.append("the guard's record was written past the size a command's output "
                         "may have")
        if self.xfailed:
            where = sorted(set(self.xfailed.values()))
            lines.append(f"the code under test declared {len(self.xfailed)} test(s) expected "
                         f"failures (pytest.xfail in {', '.join(where[:3])}): "
                         f"{', '.join(sorted(self.xfailed)[:5])}")
        return lines

    @property
    def run_failed(self) -> bool:
        """True when no result of the command can be believed."""
        return bool(self.replaced) or self.junit_changed or self.flooded


def read_findings(sandbox: Sandbox, record: str, report: str | None,
                  junit: bytes | None) -> Findings:
    """What the guard recorded at `record`, with `junit` (the bytes of the report read from
    `report`) checked against the digest pytest's session recorded for it. The record is read
    and removed, with the report, in one command; no record: no guard in this run's Python."""
    result = sandbox.exec(f"cat {shlex.quote(record)} 2>/dev/null; rm -f {shlex.quote(record)}"
                          + (f" {shlex.quote(report)}" if report else ""), timeout=60)
    if result.truncated:  # a guard writes a few lines: this is not its doing
        return Findings(flooded=True)
    return parse_findings(result.output, report, junit)


def parse_findings(text: str, report: str | None, junit: bytes | None) -> Findings:
    """:func:`read_findings` on the record's text (lines that are not JSON are skipped: a
    process killed while writing)."""
    findings = Findings()
    written: str | None = None
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        kind = entry.get("kind")
        if kind == "replaced":
            names = findings.replaced.setdefault(str(entry.get("runner", "pytest")), [])
            name = f"{entry.get('name')} by {entry.get('where')}"
            if name not in names:
                names.append(name)
        elif kind == "xfail":
            findings.xfailed[str(entry.get("test"))] = str(entry.get("where"))
        elif kind == "junit" and report is not None and entry.get("path") == report:
            written = str(entry.get("sha256"))
    if written is not None and junit is not None:
        findings.junit_changed = hashlib.sha256(junit).hexdigest() != written
    return findings
