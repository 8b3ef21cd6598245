"""Read the shell commands projects write (CI steps, tox, Makefiles) into structured pieces."""

from __future__ import annotations

import re
import shlex

from pydantic import BaseModel, Field

from benchsmith.harness.render import PYTEST_VALUE_OPTIONS, positional_args

__all__ = ["PYTEST_VALUE_OPTIONS", "positional_args"]  # re-exported for the setup rules

# Options dropped from a project's command: they stop early, write reports, or measure coverage.
_DROP_FLAGS = {"-x", "--exitfirst", "-q", "--quiet", "-qq", "-v", "-vv", "-vvv", "--verbose",
               "-s", "--lf", "--ff", "--sw", "--stepwise", "--cov", "--no-cov", "--isort",
               "--flake8", "--mypy", "--black", "--pylint", "--pep8", "--codestyle", "--ruff",
               "--benchmark-only", "--benchmark-autosave", "--cache-clear"}
# Options that run tests needing the network (which sandboxes do not have).
_NETWORK_ON = {"--remote-data", "--run-network", "--run-online", "--online", "--run-internet"}
_DROP_VALUE_OPTIONS = {"--maxfail", "--cov", "--cov-report", "--cov-config", "--junitxml",
                       "--junit-xml", "--durations", "--color", "--tb", "--html", "--cov-fail-under",
                       "--basetemp", "-r", "--benchmark-columns", "--benchmark-sort",
                       "--benchmark-group-by"}
_PYTEST_CALL = re.compile(r"(?:^|\s)(?:python[\d.]*\s+-m\s+)?(?:py\.test|pytest)(?:\s|$)")


class InstallCommand(BaseModel):
    """What a `pip install` line asks for."""

    editable_extras: list[str] = Field(default_factory=list)
    installs_project: bool = False
    requirement_files: list[str] = Field(default_factory=list)
    packages: list[str] = Field(default_factory=list)


def _segments(line: str) -> list[str]:
    return [part.strip() for part in re.split(r"&&|\|\||;|\|", line) if part.strip()]


def _words(segment: str) -> list[str]:
    try:
        return shlex.split(segment, comments=True)
    except ValueError:
        return segment.split()


def split_install_command(line: str) -> InstallCommand:
    """Parse `pip install ...` / `uv pip install ...` / `python -m pip install ...`."""
    result = InstallCommand()
    for segment in _segments(line):
        words = _words(segment)
        if "install" not in words or not any(w in words for w in ("pip", "pip3", "uv")) and not any(
            w.endswith("pip") for w in words[:3]
        ):
            continue
        rest = words[words.index("install") + 1:]
        index = 0
        while index < len(rest):
            word = rest[index]
            if word in ("-r", "--requirement", "-c", "--constraint") and index + 1 < len(rest):
                if word in ("-r", "--requirement"):
                    result.requirement_files.append(rest[index + 1])
                index += 2
                continue
            if word.startswith("-r") and len(word) > 2:
                result.requirement_files.append(word[2:])
            elif word in ("-e", "--editable") and index + 1 < len(rest):
                index += 1
                _project_target(rest[index], result)
            elif word.startswith("-"):
                pass
            elif word.startswith(".") or word.startswith("{toxinidir}"):
                _project_target(word, result)
            else:
                result.packages.append(word)
            index += 1
    return result


def _project_target(target: str, result: InstallCommand) -> None:
    target = target.replace("{toxinidir}", ".")
    match = re.fullmatch(r"\.?/?\.?(?:\[([^\]]*)\])?", target.strip("'\""))
    if match is None:
        return
    result.installs_project = True
    if match.group(1):
        result.editable_extras += [e.strip() for e in match.group(1).split(",") if e.strip()]


def pytest_args_from_command(line: str, value_options: frozenset[str] = frozenset()) -> list[str] | None:
    """The arguments of a pytest call in `line` with report/early-exit options removed.

    `value_options`: the project's own long options that take a value (its conftest.py
    ``addoption`` calls); their value is glued on (``--run-optional=x``) so that it is never
    mistaken for a test path. Returns None when the line does not run pytest.
    """
    for segment in _segments(line):
        if not _PYTEST_CALL.search(segment):
            continue
        words = _words(segment)
        for index, word in enumerate(words):
            if word in ("pytest", "py.test") or word.endswith("/pytest"):
                return clean_pytest_args(_glue(words[index + 1:], value_options))
    return None


def _glue(args: list[str], value_options: frozenset[str]) -> list[str]:
    glued: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        if word in value_options and index + 1 < len(args):
            glued.append(f"{word}={args[index + 1]}")
            index += 2
            continue
        glued.append(word)
        index += 1
    return glued


def clean_pytest_args(args: list[str]) -> list[str]:
    """Drop placeholders and options that stop early, write reports, or need coverage."""
    kept: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        name = word.split("=", 1)[0]
        takes_value = name in PYTEST_VALUE_OPTIONS and "=" not in word
        value = args[index + 1] if takes_value and index + 1 < len(args) else None
        step = 2 if value is not None else 1
        placeholder = "{" in word or word.startswith("$") or word == "--"
        # "-rs", "-rfE": a report selection glued to -r; ours (-rap) already reports every outcome.
        report_chars = word.startswith("-r") and len(word) > 2 and not word.startswith("--")
        if name in _NETWORK_ON:  # flags that turn network tests on; never a separate value
            index += 1
            continue
        if placeholder or report_chars or word in _DROP_FLAGS or name in _DROP_VALUE_OPTIONS or (
            name.startswith("--cov") or name.startswith("--junit") or name.startswith("--benchmark-save")
        ):
            if name == "--cov" and value is not None and value.startswith("-"):
                step = 1  # bare --cov followed by another option
            index += step
            continue
        kept.append(word)
        if value is not None:
            kept.append(value)
        index += step
    return kept
