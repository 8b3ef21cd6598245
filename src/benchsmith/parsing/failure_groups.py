"""Group a run's failing tests by their error (pytest, sympy's `bin/test`), and read pytest's
collection errors: what a run that falls short says about the next thing to repair."""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import BaseModel

from benchsmith.parsing import pytest_rootdir
from benchsmith.parsing.bintest_log import bintest_failure_messages
from benchsmith.parsing.pytest_log import failure_details, failure_messages, split_lines

_EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt|"
                        r"Failed|NotFound|Skipped|error))(?::\s*(?P<message>.*))?$")
_E_LINE = re.compile(r"^E\s+(?P<text>\S.*)$")
_COLLECTING = re.compile(r"^_+ ERROR collecting (?P<path>\S+) _+$")
_HEADER = re.compile(r"^=+ (?P<title>.*?) =+\s*$")
_SECTION = re.compile(r"^_{3,} .+ _{3,}$")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_TEMP_PATH = re.compile(r"/(?:tmp|var/folders|private)/\S*|\(/[^)]*\)")
_ESCAPE = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})")


class FailureGroup(BaseModel):
    """Failing tests that share one error: its type and normalised message."""

    error: str
    count: int
    example: str  # one test of the group


class CollectionError(BaseModel):
    """A test module that could not be imported, and the exception that stopped it."""

    path: str
    error: str  # "ModuleNotFoundError: No module named 'x'"
    location: str = ""  # the checkout's file a SyntaxError points at


def normalise(error: str) -> str:
    """`error`'s first line, with what varies from test to test (numbers, addresses,
    temporary paths) made alike, at most 160 characters."""
    first = error.strip().splitlines()[0] if error.strip() else ""
    if first.startswith("assert "):
        first = "AssertionError: " + first
    first = _TEMP_PATH.sub("<path>", _ADDRESS.sub("<address>", _ESCAPE.sub("<char>", first)))
    return _NUMBER.sub("<n>", first)[:160]


def _error_of(message: str, details: str) -> str:
    """The exception line of a failure: the last ``E   Type: message`` line of its section
    (whole), else the summary's message (cut to the terminal's width there)."""
    for line in reversed(details.splitlines()):
        found = _E_LINE.match(line)
        if found and _EXCEPTION.match(found["text"]):
            return found["text"]
    return message.removesuffix("...") or "unknown error"


def failure_groups(output: str) -> list[FailureGroup]:
    """The failing tests of a pytest run grouped by error, largest group first."""
    details = failure_details(output)
    return _grouped((test, _error_of(message, details.get(test, "")))
                    for test, message in failure_messages(output).items())


def bintest_failure_groups(output: str) -> list[FailureGroup]:
    """The failing tests of a `bin/test` run grouped by error: the last exception line of each
    failure's traceback section."""
    return _grouped((test, _last_exception(text))
                    for test, text in bintest_failure_messages(output).items())


def _last_exception(text: str) -> str:
    """A traceback section's last exception line, else its last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return next((line for line in reversed(lines) if _EXCEPTION.match(line)),
                lines[-1] if lines else "unknown error")


def _grouped(errors: Iterable[tuple[str, str]]) -> list[FailureGroup]:
    """(test, error) pairs grouped by the normalised error, largest group first; each group's
    example is its first test."""
    groups: dict[str, FailureGroup] = {}
    for test, error in errors:
        key = normalise(error)
        if key in groups:
            groups[key].count += 1
        else:
            groups[key] = FailureGroup(error=key, count=1, example=test)
    return sorted(groups.values(), key=lambda g: -g.count)


def collection_errors(output: str) -> list[CollectionError]:
    """The test modules pytest could not import, with the exception each raised (the last
    ``E`` line of its "ERROR collecting" section)."""
    root = (pytest_rootdir(output) or "") + "/"
    found: dict[str, CollectionError] = {}
    path: str | None = None
    lines: list[str] = []

    def close() -> None:
        if path is None:
            return
        texts = [m["text"] for line in lines if (m := _E_LINE.match(line))]
        error = next((t for t in reversed(texts) if _EXCEPTION.match(t)), texts[-1] if texts else "")
        where = next((m[1] for t in texts if (m := re.match(r'File "([^"]+)", line (\d+)', t))), "")
        found.setdefault(path, CollectionError(path=path, error=error.strip(),
                                               location=where.removeprefix(root)))

    for line in split_lines(output):
        if (collecting := _COLLECTING.match(line)) or _HEADER.match(line) or _SECTION.match(line):
            close()
            path, lines = (collecting["path"] if collecting else None), []
        elif path is not None:
            lines.append(line)
    close()
    return list(found.values())
