"""What the harness asks of pytest that old releases cannot do, and how to do without it.

pytest reads ``PYTEST_ADDOPTS`` (where the harness asks for its JUnit report) from 2.7 on,
knows ``-o``/``--override-ini`` (how a plan sets ini values: nose-era discovery patterns, an
``addopts`` cancelled) from 3.0 on, and ``--deselect`` (how a hung test is left out) from 3.5 on. Suites of 2012-2017 run
with the pytest of their date: its version is read from the test environment before a run.
"""

from __future__ import annotations

import re
import shlex

from benchsmith.core import ExecResult

# Ends a Python script run with its errors sent elsewhere: prints the environment's pytest
# version last, or nothing (no pytest there, or it does not import).
VERSION_PRINT = "\ntry:\n    import pytest\n    print(pytest.__version__)\nexcept Exception:\n    pass\n"
READS_ADDOPTS = (2, 7)
KNOWS_OVERRIDE_INI = (3, 0)
KNOWS_DESELECT = (3, 5)
_OVERRIDE = re.compile(r"""\s(?:-o|--override-ini)(?:\s+|=)('(?:[^']|'"'"')*'|\S+)""")
_DESELECT = re.compile(r"""\s--deselect\s+('(?:[^']|'"'"')*'|\S+)""")
_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")


def printed_version(result: ExecResult) -> tuple[int, int] | None:
    """(major, minor) of pytest from the last line a script ending in :data:`VERSION_PRINT`
    printed; None if the environment has none."""
    match = re.match(r"(\d+)\.(\d+)", result.output.strip().splitlines()[-1]
                     if result.returncode == 0 and result.output.strip() else "")
    return (int(match[1]), int(match[2])) if match else None


def without_deselect(command: str) -> str:
    """`command` with its ``--deselect ID`` options replaced by one ``-k "not a and not b"``
    expression over the tests' function names (parameters and all: pytest before 3.5 matches
    keywords, so a test whose name contains a left-out name is left out too)."""
    names: list[str] = []
    for match in _DESELECT.finditer(command):
        node_id = shlex.split(match[1])[0]
        name = node_id.split("::")[-1].split("[")[0]
        if _IDENTIFIER.match(name) and name not in names:
            names.append(name)
    stripped = _DESELECT.sub("", command)
    if not names:
        return stripped
    # "not (a)" would be read as the keyword "(a)" by pytest 2's shortcut for "not word"
    return f"{stripped} -k {shlex.quote(' and '.join(f'not {name}' for name in names))}"


def without_override_ini(command: str) -> str:
    """`command` without its ``-o KEY=VALUE`` options: pytest before 3.0 stops on them as
    unknown arguments, and has no other way to take an ini value from the command line; it
    then runs with the project's own settings and its default discovery."""
    return _OVERRIDE.sub("", command)


def adapt(command: str, version: tuple[int, int] | None) -> str:
    """`command` as the environment's pytest (`version`) can run it."""
    if version is not None and version < KNOWS_OVERRIDE_INI:
        command = without_override_ini(command)
    if version is not None and version < KNOWS_DESELECT and "--deselect" in command:
        return without_deselect(command)
    return command


def reads_report_option(version: tuple[int, int] | None) -> bool:
    """False where pytest ignores ``PYTEST_ADDOPTS`` (before 2.7): no JUnit report to confirm
    the console with, which is then read alone (as for runners without a report)."""
    return version is None or version >= READS_ADDOPTS
