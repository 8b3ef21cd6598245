"""Read a Makefile's recipe for a target as shell commands: simple variable assignments
expanded, recipe prefixes (`@`, `-`) removed, `$(MAKE) other` followed."""

from __future__ import annotations

import re

_ASSIGNMENT = re.compile(r"^(?:export\s+)?(?P<name>[A-Za-z_][A-Za-z0-9_.]*)\s*(?:\?|:|::|\+)?=\s*(?P<value>.*)$")
_RULE = re.compile(r"^(?P<targets>[^\t#=:][^=:]*?)\s*::?(?!=)\s*(?P<prerequisites>[^=;]*)(?:;(?P<inline>.*))?$")
_REFERENCE = re.compile(r"\$(?:\((?P<paren>[A-Za-z_][A-Za-z0-9_.]*)\)|\{(?P<brace>[A-Za-z_][A-Za-z0-9_.]*)\})")
_MAX_DEPTH = 6


def recipe(makefile: str, target: str | None, depth: int = 0) -> list[str] | None:
    """The commands `make target` runs (its prerequisites' recipes first; the first target when
    `target` is None); None when the Makefile has no such target."""
    variables, rules, first = _read(makefile)
    name = target or first
    if name is None or name not in rules or depth > _MAX_DEPTH:
        return None
    prerequisites, lines = rules[name]
    commands: list[str] = []
    for prerequisite in prerequisites:
        if prerequisite in rules:
            commands += recipe(makefile, prerequisite, depth + 1) or []
    for line in lines:
        command = _expand(line.lstrip("@-+ \t"), variables)
        called = re.fullmatch(r"(?:\$\(MAKE\)|\$\{MAKE\}|make)\s+(?P<target>[\w.-]+)", command)
        if called and called["target"] in rules:
            commands += recipe(makefile, called["target"], depth + 1) or []
        elif command:
            commands.append(command)
    return commands


def _read(makefile: str) -> tuple[dict[str, str], dict[str, tuple[list[str], list[str]]], str | None]:
    variables: dict[str, str] = {}
    rules: dict[str, tuple[list[str], list[str]]] = {}
    first: str | None = None
    current: list[str] = []
    for raw in makefile.replace("\\\n", " ").splitlines():
        if raw.startswith("\t"):
            if raw.strip() and not raw.strip().startswith("#"):
                for name in current:
                    rules[name][1].append(raw.strip())
            continue
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if assignment := _ASSIGNMENT.match(line):
            variables.setdefault(assignment["name"], assignment["value"].strip())
            current = []
        elif rule := _RULE.match(line):
            current = [name for name in rule["targets"].split() if "%" not in name]
            for name in current:
                rules.setdefault(name, (rule["prerequisites"].split(), []))
                if rule["inline"] and rule["inline"].strip():
                    rules[name][1].append(rule["inline"].strip())
                if first is None and not name.startswith("."):
                    first = name
        else:
            current = []
    return variables, rules, first


def _expand(text: str, variables: dict[str, str], depth: int = 0) -> str:
    if depth > _MAX_DEPTH:
        return text

    def value(match: re.Match[str]) -> str:
        name = match["paren"] or match["brace"]
        if name == "MAKE":
            return match[0]
        return _expand(variables.get(name, ""), variables, depth + 1)

    return _REFERENCE.sub(value, text)
