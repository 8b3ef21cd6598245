"""The `benchsmith` command line: one module per command group, registered on one app.

``setup`` (setup, setup-batch, nearby), ``mining`` (candidates, mine, build, verify),
``evaluate`` (evaluate, report), ``docker`` (docker base/clean/build-env). Options shared by
several commands are declared once in :mod:`benchsmith.cli.options`.
"""

from __future__ import annotations

import signal
import sys

from benchsmith.cli import docker, evaluate, mining, setup
from benchsmith.cli.app import app, err
from benchsmith.core import BenchsmithError

__all__ = ["app", "main"]
_COMMAND_MODULES = (setup, mining, evaluate, docker)  # importing them registers their commands


def _on_sigterm(signum: int, frame: object) -> None:
    # Handled like Ctrl-C, so every `finally` removes its sandbox and temporary checkout.
    raise KeyboardInterrupt


def main() -> None:
    """Entry point: run the app, turning stray bad-input errors into one line."""
    # Sandboxes (temp dirs, process groups) are removed on SIGTERM too, not only on Ctrl-C.
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        app()
    except BenchsmithError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        sys.exit(2)
