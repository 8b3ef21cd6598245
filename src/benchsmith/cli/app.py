"""The Typer application, its consoles and the one-line failure every command uses."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from typer import rich_utils
from typer.core import TyperGroup

# The help lists commands in the order of the work, not alphabetically or by module.
WORKFLOW = ("setup", "setup-batch", "nearby", "candidates", "mine", "build", "verify", "prepare",
            "evaluate", "generate", "export", "analyze", "setupbench", "refresh", "docker",
            "report")
WIDE = 4096  # columns when not writing to a terminal: a file or pipe gets whole lines


def _unlabelled_flags(params: list[Any]) -> None:
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""  # a flag takes no value: no `<bool>` in the help


class WorkflowGroup(TyperGroup):
    """A command group listed in workflow order whose flags show no value type in the help."""

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        rank = {name: n for n, name in enumerate(WORKFLOW)}
        return sorted(names, key=lambda name: (rank.get(name, len(rank)), names.index(name)))

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        _unlabelled_flags(params)
        return params

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None and not isinstance(command, TyperGroup):
            original = command.get_params

            def get_params(context: Any) -> list[Any]:
                params = original(context)
                _unlabelled_flags(params)
                return params

            setattr(command, "get_params", get_params)  # noqa: B010 (mypy: no method assignment)
        return command


def _console(stderr: bool) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    wide = not stream.isatty() and not os.environ.get("COLUMNS")
    return Console(stderr=stderr, width=WIDE if wide else None)


if not sys.stdout.isatty() and not os.environ.get("COLUMNS") and hasattr(rich_utils, "MAX_WIDTH"):
    rich_utils.MAX_WIDTH = rich_utils.MAX_WIDTH or 160  # help text piped: wider, still readable

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_show_locals=False,
                  cls=WorkflowGroup,
                  help="Turn repositories into validated, historically accurate test environments.")
err = _console(stderr=True)
T = TypeVar("T")
out = _console(stderr=False)


def _show_version(value: bool) -> None:
    if value:
        from benchsmith import __version__

        print(f"benchsmith {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: Annotated[bool, typer.Option(
        "--version", callback=_show_version, is_eager=True, help="Print the version and exit.")] = False,
) -> None:
    """Turn repositories into validated, historically accurate test environments."""


def error_line(message: str) -> None:
    """A red `error:` line on stderr (the one spelling of an error); the caller decides whether
    the command goes on."""
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one red `error:` line on stderr and exit with `code` (2: bad input)."""
    error_line(message)
    raise typer.Exit(code)


def warn(message: str) -> None:
    """A yellow `warning:` line on stderr; the command goes on."""
    err.print(f"[yellow]warning:[/] {escape(message)}", highlight=False, soft_wrap=True)


def say(message: str) -> None:
    """A dim progress line on stderr (also readable when stderr is a file)."""
    err.print(f"[dim]{escape(message)}[/]", highlight=False, soft_wrap=True)


def invalid(exc: Exception) -> str:
    """Why a record could not be read, in the user's words: "not valid JSON", "missing field X"
    or "field X: what is wrong" (never pydantic's "1 validation error for ...")."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        errors = exc.errors()
        first = errors[0]
        if first["type"] == "json_invalid":
            return "not valid JSON"
        where = ".".join(str(p) for p in first["loc"]) or "record"
        if first["type"] == "missing":
            missing = [".".join(str(p) for p in e["loc"]) for e in errors if e["type"] == "missing"]
            return f"missing field{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
        return f"field {where}: {first['msg']}"
    return "not valid JSON" if isinstance(exc, ValueError) else str(exc).splitlines()[0]


def read_input(reader: Callable[[Path], tuple[T, list[str]]], path: Path) -> T:
    """What `reader` finds in `path`: an unreadable file, or one without a usable record, ends
    the command with one line; each record it could not use is one `warning:` line (the rest
    goes on)."""
    from benchsmith.core import BenchsmithError

    try:
        items, problems = reader(path)
    except BenchsmithError as exc:
        fail(str(exc))
    if problems and not items:
        fail(nothing_usable(path, problems))
    for problem in problems:
        warn(problem if problem.endswith("skipped") else f"{problem}: skipped")
    return items


def nothing_usable(path: Path, problems: list[str]) -> str:
    """The one line for a file none of whose records can be used: its first problems."""
    more = f"; and {len(problems) - 3} more" if len(problems) > 3 else ""
    return f"no usable instance in {path}: {'; '.join(problems[:3])}{more}"


class WarningLines(logging.Handler):
    """Log records of the libraries benchsmith uses (the GitHub client's waits, ...) as the same
    `warning:` and `error:` lines as everything else."""

    def emit(self, record: logging.LogRecord) -> None:
        (error_line if record.levelno >= logging.ERROR else warn)(record.getMessage())
