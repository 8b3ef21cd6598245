"""tox configuration: tox.ini, setup.cfg [tox:tox], pyproject legacy_tox_ini, native TOML."""

from __future__ import annotations

import configparser
import re
from dataclasses import dataclass, field
from typing import Any

from benchsmith.setup.sources.coerce import as_dict, as_list, as_str, as_str_list, ini_list
from benchsmith.setup.sources.collector import Collector
from benchsmith.setup.sources.commands import (
    is_min_versions_env,
    is_non_test_env,
    join_args,
    settings_assignments,
)
from benchsmith.setup.sources.repo_files import load_ini
from benchsmith.setup.sources.versions import expand_braces, split_envlist, tox_env_pythons

_PYPY_ONLY = re.compile(r"^pypy[\w.]*(,\s*pypy[\w.]*)*$")
_FACTOR_PREFIX = re.compile(r"^!?[\w.{},!\-]+:\s+(?=\S)")
_REFERENCE = re.compile(r"^\{\[([^\]]+)\]([\w\-]+)\}$")
_COMMAND_SUBSTITUTIONS = (
    (re.compile(r"\{toxinidir\}"), "."),
    (re.compile(r"\{(envpython|envbindir/python)\}"), "python"),
    (re.compile(r"\{envbindir\}/"), ""),
    (re.compile(r"\{env:[\w]+:([^{}]*)\}"), r"\1"),
    (re.compile(r"\{/\}"), "/"),
    # a default that holds substitutions of its own ({toxworkdir}, {envname})
    (re.compile(r"\{posargs:((?:[^{}]|\{[^{}]*\})*)\}"), r"\1"),
    (re.compile(r"\{posargs\}|^\[\]$|\s\[\]"), ""),
)


def _python_factor(name: str) -> bool:
    return name in ("py", "py3", "python", "python3") or bool(tox_env_pythons(name))


def _holds(condition: str, factors: set[str] | None) -> bool:
    """Whether a factor condition ("dbt017,dbt018", "py{37,38}-!django") holds for an env with
    `factors` (None: unknown, everything holds). Python factors always hold: the Python
    is chosen separately."""
    if factors is None:
        return True
    for alternative in (a for e in expand_braces(condition) for a in e.split(",")):
        truths = []
        for factor in (f.strip() for f in alternative.split("-") if f.strip()):
            name = factor.lstrip("!")
            truth = _python_factor(name) or name in factors
            truths.append(not truth if factor.startswith("!") and not _python_factor(name) else truth)
        if truths and all(truths):
            return True
    return False


def _without_factor(line: str, factors: set[str] | None = None) -> str:
    """Drop a "py38: " factor prefix; drop the whole line if its condition does not hold for
    the chosen env (`factors`) or only PyPy envs use it."""
    match = _FACTOR_PREFIX.match(line)
    if not match:
        return line
    condition = match.group(0).rstrip().rstrip(":")
    if _PYPY_ONLY.match(condition) or not _holds(condition, factors):
        return ""
    return line[match.end() :]


def chosen_factors(envlist: list[str]) -> set[str]:
    """The non-Python factors of the env a plain test run uses: of the envlist's test envs, the
    one with the fewest such factors (one alternative per factor group, never their union)."""
    best: set[str] | None = None
    for env in envlist:
        if is_non_test_env(env) or is_min_versions_env(env) or _PYPY_ONLY.match(env):
            continue
        extra = {f for f in env.split("-") if f and not _python_factor(f)}
        if best is None or len(extra) < len(best):
            best = extra
    return best or set()


def _ini_lines(ini: configparser.ConfigParser, value: str, depth: int = 0,
               factors: set[str] | None = None) -> list[str]:
    """Logical lines of a tox value: continuations joined, factor prefixes and comments dropped
    (lines whose factors do not hold for the chosen env too), ``{[section]key}`` references
    expanded."""
    lines: list[str] = []
    pending = ""
    for raw in value.splitlines():
        text = raw.strip()
        continued = text.endswith("\\")
        piece = _without_factor(text[:-1].rstrip() if continued else text, factors)
        line = f"{pending} {piece}".strip()
        pending = line if continued else ""
        if continued or not line or line.startswith("#"):
            continue
        reference = _REFERENCE.match(line)
        if reference and depth < 3:
            section, key = reference.groups()
            if ini.has_option(section, key):
                lines += _ini_lines(ini, ini.get(section, key), depth + 1, factors)
            continue
        lines.append(line)
    return lines


def tox_command(line: str) -> str:
    """A tox command line with tox's substitutions resolved and its "-"/"!" prefix dropped."""
    for pattern, replacement in _COMMAND_SUBSTITUTIONS:
        line = pattern.sub(replacement, line)
    return " ".join(line.lstrip("-!").split())


def _setenv(lines: list[str]) -> dict[str, str]:
    """``KEY = value`` lines of tox's `setenv`, with ``{env:NAME:default}`` read as its default."""
    found: dict[str, str] = {}
    for line in lines:
        key, sep, value = line.partition("=")
        if sep and key.strip().isidentifier():
            value = re.sub(r"\{env:[^:}]+:([^}]*)\}", r"\1", value.strip())
            found[key.strip()] = value.replace("{toxinidir}", ".")
    return found


def tox_dep(line: str) -> str:
    """A deps line as a requirement string or "-r file" / "-c file"."""
    line = line.split(" #", 1)[0].strip().replace("{toxinidir}/", "").replace("{toxinidir}", ".")
    flag = re.match(r"^(-r|-c|--requirement|--constraint)\s*=?\s*(\S.*)$", line)
    if flag:
        kind = "-c" if flag.group(1) in ("-c", "--constraint") else "-r"
        return f"{kind} {flag.group(2).strip()}"
    return line


@dataclass
class ToxEnv:
    """The parts of one tox environment that matter for installing and testing."""

    name: str
    commands: list[str] = field(default_factory=list)
    deps: list[str] = field(default_factory=list)
    extras: list[str] = field(default_factory=list)
    basepython: str = ""
    setenv: dict[str, str] = field(default_factory=dict)


def _record_env(c: Collector, env: ToxEnv, source: str) -> None:
    for name in split_envlist(env.name) if env.name else []:
        for minor in tox_env_pythons(name):
            c.python(minor, source)
    c.python(env.basepython, source)
    for command in env.commands:
        c.command(tox_command(command), source)
    for dep in env.deps:
        c.hint(c.ctx.tox_deps, tox_dep(dep), source)
    for extra in env.extras:
        c.hint(c.ctx.tox_extras, extra, source)
    for setting in settings_assignments(env.setenv):
        c.hint(c.ctx.settings_env, setting, source)


def read_tox_ini(
    c: Collector, ini: configparser.ConfigParser, source: str, main_section: str
) -> None:
    """envlist Pythons and every test-like [testenv*] section's commands, deps and extras."""
    if not ini.has_section(main_section) and not ini.has_section("testenv"):
        return
    main = ini[main_section] if ini.has_section(main_section) else {}
    envlist = split_envlist(main.get("envlist", main.get("env_list", "")))
    for env in envlist:
        for minor in tox_env_pythons(env):
            c.python(minor, source)
    factors = chosen_factors(envlist)
    for section in ini.sections():
        name = section.partition(":")[2].strip()
        if (section != "testenv" and not section.startswith("testenv:")) or is_non_test_env(name) \
                or is_min_versions_env(name):
            continue
        values = ini[section]
        tox_env = ToxEnv(
            name=name,
            commands=_ini_lines(ini, values.get("commands_pre", ""), factors=factors)
            + _ini_lines(ini, values.get("commands", ""), factors=factors),
            deps=_ini_lines(ini, values.get("deps", ""), factors=factors),
            extras=[
                e for line in _ini_lines(ini, values.get("extras", ""), factors=factors)
                for e in ini_list(line)
            ],
            basepython=values.get("basepython", ""),
            setenv=_setenv(_ini_lines(ini, values.get("setenv", ""), factors=factors)),
        )
        _record_env(c, tox_env, source)


def _toml_command(command: Any) -> str:
    parts: list[str] = []
    for item in as_list(command):
        if isinstance(item, str):
            parts.append(item)
        elif as_dict(item).get("replace") == "posargs":
            parts += as_str_list(as_dict(item).get("default"))
    return join_args(parts)


def read_tox_toml(c: Collector, table: dict[str, Any], source: str) -> None:
    """tox 4 native TOML configuration ([tool.tox] or tox.toml)."""
    for env in as_str_list(table.get("env_list")):
        for minor in tox_env_pythons(env):
            c.python(minor, source)
    envs = {"": as_dict(table.get("env_run_base"))} | as_dict(table.get("env"))
    for name, values in envs.items():
        values = as_dict(values)
        if not values or is_non_test_env(name) or is_min_versions_env(name):
            continue
        commands = as_list(values.get("commands_pre")) + as_list(values.get("commands"))
        tox_env = ToxEnv(
            name=name,
            commands=[_toml_command(command) for command in commands],
            deps=as_str_list(values.get("deps")),
            extras=as_str_list(values.get("extras")),
            basepython=next(iter(as_str_list(values.get("base_python"))), ""),
        )
        _record_env(c, tox_env, source)


def read_tox(c: Collector) -> None:
    """Every tox configuration the repository has."""
    ini = c.files.ini("tox.ini")
    if ini is not None:
        read_tox_ini(c, ini, "tox.ini", "tox")
    cfg = c.files.ini("setup.cfg")
    if cfg is not None and cfg.has_section("tox:tox"):
        read_tox_ini(c, cfg, "setup.cfg", "tox:tox")
    tox_table = as_dict(as_dict((c.files.toml("pyproject.toml") or {}).get("tool")).get("tox"))
    legacy = as_str(tox_table.get("legacy_tox_ini"))
    legacy_ini = load_ini(legacy) if legacy else None
    if legacy_ini is not None:
        read_tox_ini(c, legacy_ini, "pyproject.toml", "tox")
    elif tox_table:
        read_tox_toml(c, tox_table, "pyproject.toml")
    native = c.files.toml("tox.toml")
    if native is not None:
        read_tox_toml(c, native, "tox.toml")
