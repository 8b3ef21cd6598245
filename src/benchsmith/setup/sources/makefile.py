"""Makefile recipes of install and test targets."""

from __future__ import annotations

import re

from benchsmith.setup.sources.collector import Collector

MAKEFILES = ("Makefile", "makefile", "GNUmakefile")
TARGETS = frozenset(
    [
        "test",
        "tests",
        "check",
        "ci",
        "install",
        "dev",
        "develop",
        "requirements",
        "test-all",
        "install-dev",
        "dev-install",
        "install-deps",
        "deps",
        "unittest",
        "pytest",
    ]
)
DEFAULT_VARIABLES = {
    "PYTHON": "python",
    "PY": "python",
    "PYTHON3": "python3",
    "PIP": "pip",
    "PYTEST": "pytest",
    "MAKE": "make",
}
_VARIABLE = re.compile(r"^(?:export\s+|override\s+)?([A-Za-z_][\w]*)\s*(?:\?|:|::|\+)?=\s*(.*)$")
_RULE = re.compile(r"^([^\t#=:$][^:=]*):(?!=)(.*)$")
_REFERENCE = re.compile(r"\$[({]([A-Za-z_][\w]*)[)}]")


def _variables(lines: list[str]) -> dict[str, str]:
    variables = dict(DEFAULT_VARIABLES)
    for line in lines:
        match = _VARIABLE.match(line)
        if match and "$" not in match.group(2):
            variables[match.group(1)] = match.group(2).split("#", 1)[0].strip()
    return variables


def _logical_lines(text: str) -> list[str]:
    lines: list[str] = []
    for raw in text.splitlines():
        if lines and lines[-1].endswith("\\"):
            lines[-1] = lines[-1][:-1].rstrip() + " " + raw.strip()
        else:
            lines.append(raw.rstrip())
    return lines


def recipes(text: str) -> list[str]:
    """Recipe lines of the interesting targets, variables substituted, prefixes @-+ dropped."""
    lines = _logical_lines(text)
    variables = _variables(lines)
    found: list[str] = []
    wanted = False
    for line in lines:
        if line.startswith("\t"):
            if wanted:
                command = _REFERENCE.sub(
                    lambda m: variables.get(m.group(1), m.group(0)), line.strip()
                )
                command = command.lstrip("@-+ ").replace("$$", "$")
                if command and not command.startswith(("$", "#")):
                    found.append(command)
            continue
        rule = _RULE.match(line)
        if rule:
            names = rule.group(1).split()
            wanted = bool(TARGETS.intersection(names)) or any(
                n.startswith(("test-", "test_", "tests-")) for n in names
            )
        elif line.strip() and not line.lstrip().startswith("#"):
            wanted = False
    return found


def read_makefile(c: Collector) -> None:
    """Install and test commands of the Makefile's test/install targets."""
    for path in MAKEFILES:
        text = c.files.text(path)
        if text is not None:
            for command in recipes(text):
                c.command(command, path)
            return
