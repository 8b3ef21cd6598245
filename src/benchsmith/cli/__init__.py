"""The `benchsmith` command line: one module per command group, registered on one app.

``setup`` (setup, setup-batch, nearby), ``mining`` (candidates, mine, build, verify),
``evaluate`` (evaluate, report), ``datasets`` (prepare), ``docker`` (docker base/clean/build-env). Options shared by
several commands are declared once in :mod:`benchsmith.cli.options`.
"""

from __future__ import annotations

import logging
import signal
import sys

from rich.markup import escape

from benchsmith.cli import datasets, docker, evaluate, generate, mining, setup, setupbench
from benchsmith.cli.app import WarningLines, app, err
from benchsmith.core import BenchsmithError

__all__ = ["app", "main"]
# importing them registers their commands
_COMMAND_MODULES = (setup, mining, evaluate, datasets, docker, generate, setupbench)


def _on_sigterm(signum: int, frame: object) -> None:
    # Handled like Ctrl-C, so every `finally` removes its sandbox and temporary checkout.
    raise KeyboardInterrupt


def main() -> None:
    """Entry point: run the app; bad input (unknown options, invalid values, BenchsmithError)
    becomes one line on stderr and exit status 2, a failing machine (OSError: disk full) one
    line and status 1."""
    from typer import Abort

    try:  # newer typer vendors click ...
        from typer._click.exceptions import (  # type: ignore[import-not-found,unused-ignore]
            NoArgsIsHelpError,
            UsageError,
        )
    except ImportError:  # ... older typer used click itself
        from click.exceptions import (  # type: ignore[assignment,no-redef,unused-ignore]
            NoArgsIsHelpError,
            UsageError,
        )

    # Sandboxes (temp dirs, process groups) are removed on SIGTERM too, not only on Ctrl-C.
    signal.signal(signal.SIGTERM, _on_sigterm)
    logging.getLogger().addHandler(WarningLines(logging.WARNING))
    try:
        code = app(standalone_mode=False)
    except NoArgsIsHelpError as exc:
        print(exc.ctx.get_help() if exc.ctx else "", file=sys.stderr)
        sys.exit(2)
    except UsageError as exc:
        names: list[str] = []
        ctx = exc.ctx
        while ctx is not None and ctx.parent is not None:  # the command, without the program
            names.insert(0, ctx.info_name or "")
            ctx = ctx.parent
        hint = f" (see: benchsmith {' '.join([*names, '--help'])})"
        err.print(f"[bold red]error:[/] {escape(exc.format_message())}{escape(hint)}", highlight=False,
                  soft_wrap=True)
        sys.exit(2)
    except Abort:
        err.print("[bold red]error:[/] interrupted", highlight=False)
        sys.exit(130)
    except BenchsmithError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except OSError as exc:  # the machine, not the input: a full disk, a vanished folder
        where = f": {exc.filename}" if exc.filename else ""
        err.print(f"[bold red]error:[/] {escape(exc.strerror or str(exc))}{escape(str(where))} "
                  "(results written before this are kept)", highlight=False, soft_wrap=True)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
