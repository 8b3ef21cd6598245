"""Install and test commands shown in README, CONTRIBUTING and docs pages' code blocks."""

from __future__ import annotations

import os
import re
import textwrap

from benchsmith.setup.sources.collector import Collector
from benchsmith.setup.sources.commands import shell_lines

ROOT_PREFIXES = ("readme", "contributing", "hacking", "developing", "development")
DOC_DIRS = ("docs", "doc", ".github")
DOC_TOPICS = ("install", "test", "contribut", "develop", "hacking")
DOC_SUFFIXES = (".rst", ".md", ".markdown", ".txt", "")
MAX_DOC_DEPTH = 3
SHELL_LANGUAGES = frozenset(
    {
        "",
        "bash",
        "sh",
        "shell",
        "console",
        "shell-session",
        "sh-session",
        "bash-session",
        "shellsession",
        "zsh",
    }
)
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*\{?\.?([\w+-]*)")
_RST_DIRECTIVE = re.compile(r"^\s*\.\.\s+(?:code-block|code|sourcecode|prompt)::\s*([\w+-]*)")
_PROMPT = re.compile(r"^(?:\(\S+\)\s*)?[$%]\s+")
_DOC_COMMAND = re.compile(
    r"^(?:sudo\s+)?(?:pip3?|python3?\s+-m\s+pip|uv\s+(?:pip|sync)|poetry|pipenv|conda|pdm|hatch"
    r"|pytest|py\.test|python3?\s+-m\s+(?:pytest|unittest)|tox|nox|make|python3?\s+setup\.py"
    r"|nosetests|\./runtests\.py|python3?\s+runtests\.py|apt(?:-get)?)(?:\s|$)"
)


def doc_files(c: Collector) -> list[str]:
    """README*/CONTRIBUTING* at the root and install/test/contributing pages under docs/."""
    root = c.files.root
    found = [
        p.name for p in root.iterdir() if p.is_file() and p.name.lower().startswith(ROOT_PREFIXES)
    ]
    for path in (p for top in DOC_DIRS for p in c.files.walk(top, MAX_DOC_DEPTH)):
        stem = os.path.splitext(path.rsplit("/", 1)[-1].lower())[0]
        if any(topic in stem for topic in DOC_TOPICS):
            found.append(path)
    return sorted(path for path in found if os.path.splitext(path.lower())[1] in DOC_SUFFIXES)


def fenced_blocks(text: str) -> list[str]:
    """Contents of Markdown fenced code blocks in a shell language (or none)."""
    blocks: list[str] = []
    current: list[str] = []
    fence = language = ""
    for line in text.splitlines():
        match = _FENCE.match(line)
        if not fence and match:
            fence, language, current = match.group(1), match.group(2).lower(), []
        elif (
            fence
            and line.strip().startswith(fence[0] * len(fence))
            and not line.strip().strip(fence[0])
        ):
            if language in SHELL_LANGUAGES:
                blocks.append("\n".join(current))
            fence = ""
        elif fence:
            current.append(line)
    return blocks


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def rst_blocks(text: str) -> list[str]:
    """Contents of reST shell ``code-block`` directives and ``::`` literal blocks."""
    lines, blocks, i = text.splitlines(), [], 0
    while i < len(lines):
        line = lines[i]
        directive = _RST_DIRECTIVE.match(line)
        literal = line.rstrip().endswith("::") and not line.lstrip().startswith("..")
        i += 1
        if not (literal or (directive and directive.group(1).lower() in SHELL_LANGUAGES)):
            continue
        while i < len(lines) and (
            not lines[i].strip() or (directive and lines[i].strip().startswith(":"))
        ):
            i += 1
        block = []
        while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > _indent(line)):
            block.append(lines[i])
            i += 1
        blocks.append(textwrap.dedent("\n".join(block)))
    return blocks


def block_commands(block: str) -> list[str]:
    """Install/test-looking command lines of a code block; with prompts, only prompted lines."""
    lines = shell_lines(block)
    prompted = [line for line in lines if _PROMPT.match(line)]
    candidates = [_PROMPT.sub("", line) for line in prompted] if prompted else lines
    return [line for line in candidates if _DOC_COMMAND.match(line)]


def read_docs(c: Collector) -> None:
    """Commands from shell code blocks of README, CONTRIBUTING and docs pages."""
    for path in doc_files(c):
        text = c.files.text(path)
        if text is None:
            continue
        for block in fenced_blocks(text) + rst_blocks(text):
            for line in block_commands(block):
                c.command(line, path)
