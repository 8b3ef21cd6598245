"""Every command, found by walking the app: its help has no markup debris, no value type on
flags, no text eaten by the markup parser and no option that does not exist; an empty or a
malformed input file is one `error:` line and a non-zero exit, never a traceback."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.text import Text
from typer.testing import CliRunner

from benchsmith.cli import app

ROOT = typer.main.get_command(app)
OPTION = re.compile(r"(?<![\w-])--[a-z][\w-]*")


def _walk(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    if hasattr(command, "list_commands"):
        context = typer.Context(command)
        for name in command.list_commands(context):
            yield from _walk(command.get_command(context, name), (*path, name))


COMMANDS = list(_walk(ROOT))
KNOWN = {"--help"} | {option for _, command in COMMANDS for param in command.params
                      for option in (*param.opts, *param.secondary_opts) if option.startswith("--")}


def _texts() -> Iterator[tuple[str, str]]:
    for path, command in COMMANDS:
        name = " ".join(path) or "benchsmith"
        yield f"{name} (description)", command.help or ""
        for param in command.params:
            if not getattr(param, "hidden", False):
                yield f"{name} {param.name}", getattr(param, "help", None) or ""


def test_the_walk_finds_every_command_and_subcommand() -> None:
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"setup", "setup-batch", "mine", "evaluate", "docker clean", "docker du",
            "setupbench run", "setupbench report"} <= names
    assert len(names) > 25


@pytest.mark.parametrize(("where", "text"), list(_texts()), ids=lambda value: str(value)[:60])
def test_help_text_is_clean(where: str, text: str) -> None:
    plain = Text.from_markup(text).plain
    assert plain == text.replace("\\[", "["), f"{where}: the markup parser ate part of {text!r}"
    assert "  " not in plain, f"{where}: doubled space in {plain!r}"
    for opening, closing in ("()", "[]", "``"):
        balanced = plain.count(opening) == plain.count(closing) if opening != closing \
            else plain.count(opening) % 2 == 0
        assert balanced, f"{where}: unbalanced {opening}{closing} in {plain!r}"
    unknown = set(OPTION.findall(plain)) - KNOWN
    assert not unknown, f"{where}: names options no command has: {sorted(unknown)}"


@pytest.mark.parametrize("path", [path for path, _ in COMMANDS], ids=lambda path: " ".join(path) or "root")
def test_rendered_help_has_no_debris(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    shown = result.output
    assert "Usage:" in shown
    for debris in ("<bool>", "BOOLEAN", "[/", "[bold", "[dim", "[red", "[yellow", "\\[", "[]"):
        assert debris not in shown, f"{' '.join(path)}: {debris!r} in its help:\n{shown}"
    # every bracket the help shows is closed on its line ([default: ...], [required], [NAME=])
    for line in shown.splitlines():
        assert line.count("[") == line.count("]"), f"{' '.join(path)}: unbalanced line {line!r}"


def _file_commands() -> Iterator[tuple[tuple[str, ...], Any]]:
    """Commands whose positional argument is a file or folder (a Path, or a FILE metavar)."""
    for path, command in COMMANDS:
        for param in command.params:
            if param.param_type_name == "argument" and (
                    param.type_descriptor.annotation is Path or "FILE" in (param.metavar or "")):
                yield path, command
                break


# What a command needs besides its file before it reads the file.
NEEDS = {"generate": ("--model", "scripted:answers.jsonl"), "evaluate": ("--predictions", "gold")}


@pytest.mark.parametrize("content", ["", "{not json\n\u0000\u0001 ]]\n"], ids=["empty", "malformed"])
@pytest.mark.parametrize("path", [path for path, _ in _file_commands()],
                         ids=lambda path: " ".join(path))
def test_an_empty_or_malformed_file_is_one_error_line(path: tuple[str, ...], content: str,
                                                      tmp_path: Path) -> None:
    command = dict(COMMANDS)[path]
    given = tmp_path / "input.jsonl"
    given.write_text(content)
    required = [arg for param in command.params if param.param_type_name == "option"
                and param.required and param.opts[0] not in NEEDS.get(" ".join(path), ())
                for arg in (param.opts[0], str(tmp_path / f"out-{param.name}"))]
    result = subprocess.run([sys.executable, "-m", "benchsmith.cli", *path, str(given), *required,
                             *NEEDS.get(" ".join(path), ())], capture_output=True, text=True,
                            timeout=300, cwd=tmp_path)
    assert result.returncode != 0, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr


def test_python_dash_m_runs_the_command() -> None:
    run = subprocess.run([sys.executable, "-m", "benchsmith", "--help"], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0 and "setup" in run.stdout, run.stderr
