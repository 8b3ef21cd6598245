"""The Typer application, its consoles and the one-line failure every command uses."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_show_locals=False,
                  help="Turn Python repositories into validated, historically accurate test environments.")
err = Console(stderr=True)
T = TypeVar("T")
out = Console()


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one red line on stderr and exit with `code` (2: bad input)."""
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def say(message: str) -> None:
    """A dim progress line on stderr (also readable when stderr is a file)."""
    err.print(f"[dim]{escape(message)}[/]", highlight=False, soft_wrap=True)


def read_input(reader: Callable[[Path], tuple[T, list[str]]], path: Path, label: str = "skipped") -> T:
    """What `reader` finds in `path`: an unreadable file ends the command with one line, and
    each record it could not use is one `label:` line on stderr (the rest goes on)."""
    from benchsmith.core import BenchsmithError

    try:
        items, problems = reader(path)
    except BenchsmithError as exc:
        fail(str(exc))
    for problem in problems:
        err.print(f"[yellow]{label}:[/] {escape(problem)}", highlight=False, soft_wrap=True)
    return items
