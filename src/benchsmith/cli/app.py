"""The Typer application, its consoles and the one-line failure every command uses."""

from __future__ import annotations

from typing import NoReturn

import typer
from rich.console import Console

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_show_locals=False,
                  help="Turn Python repositories into validated, historically accurate test environments.")
err = Console(stderr=True)
out = Console()


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one red line on stderr and exit with `code` (2: bad input)."""
    err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def say(message: str) -> None:
    """A dim progress line on stderr (also readable when stderr is a file)."""
    err.print(f"[dim]{message}[/]", highlight=False, soft_wrap=True)
