"""SWT-bench's fault-tolerant "custom diff" format: parse it, apply it, turn it into a git diff.

A prediction is one or more blocks (text around them, such as Markdown fences, is ignored)::

    diff
    tests/test_x.py
    rewrite            (or insert)
    12                 (a rough line number, EOF or BOF)
    <a whole def / async def / class, possibly decorated; for insert any code>
    end diff

Edits replace or add whole line ranges of the original text, so everything else stays
byte-identical; the editing engine is :mod:`benchsmith.evaluation.custom_diff_apply`.
"""

from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel

from benchsmith.core import BenchsmithError
from benchsmith.evaluation.custom_diff_apply import apply_block

_BREAK = re.compile(r"\r\n|\r|\n")
_END = re.compile(r"end\s*diff", re.IGNORECASE)
_LOCATION = re.compile(r"(?:line\s*)?(\d+)", re.IGNORECASE)
_FENCE = ("```", "~~~")
_UNIFIED = re.compile(r"^--- .*\n\+\+\+ .*\n@@ ", re.MULTILINE)


class CustomDiffError(BenchsmithError):
    """A custom diff that cannot be read; the one-line message names the block and the problem."""


class DiffBlock(BaseModel):
    """One `diff ... end diff` block: where and how to put a piece of code."""

    path: str
    action: Literal["rewrite", "insert"]
    location: int | Literal["EOF", "BOF"]
    code: str


class AppliedBlock(BaseModel):
    """What happened to one definition of a block (1-based `block`); lines are of the text then.

    `target` is the replaced definition's qualified name, or for inserts BOF, EOF, the new
    member's `Class.name` or the inserted definition's name; `fallback` says what was improvised.
    """

    block: int
    path: str
    action: str
    target: str | None
    start_line: int
    fallback: str | None = None


class CustomDiffResult(BaseModel):
    """The new texts of the changed files, what each block did, and the same as a git diff."""

    files: dict[str, str]
    applied: list[AppliedBlock]
    unified_diff: str


def is_custom_diff(text: str) -> bool:
    """Cheap check: a line `diff` alone, later a line `end diff`, and no unified or git diff."""
    lines = _BREAK.split(text)
    if any(line.startswith("diff --git ") for line in lines) or _UNIFIED.search(text):
        return False
    starts = [index for index, line in enumerate(lines) if line.strip().lower() == "diff"]
    return bool(starts) and any(_END.fullmatch(line.strip()) for line in lines[starts[0] + 1:])


def parse_custom_diff(text: str) -> list[DiffBlock]:
    """Read all blocks of a prediction; raise CustomDiffError for any malformed block."""
    lines = [line.rstrip() for line in _BREAK.split(text)]
    blocks: list[DiffBlock] = []
    index = 0
    while index < len(lines):
        if lines[index].strip().lower() == "diff":
            block, index = _parse_block(lines, index + 1, len(blocks) + 1)
            blocks.append(block)
        else:
            index += 1
    if not blocks:
        raise CustomDiffError("no custom diff block found (a line 'diff' ... a line 'end diff')")
    return blocks


def format_custom_diff(blocks: list[DiffBlock]) -> str:
    """Write blocks in the custom diff format (the inverse of parse_custom_diff)."""
    return "".join(f"diff\n{block.path}\n{block.action}\n{block.location}\n"
                   f"{block.code.rstrip(chr(10))}\nend diff\n" for block in blocks)


def apply_custom_diff(text: str, read: Callable[[str], str | None]) -> CustomDiffResult:
    """Apply a prediction to files got from `read(path)` (None: no such file), in block order."""
    blocks = parse_custom_diff(text)
    originals: dict[str, str | None] = {}
    current: dict[str, str | None] = {}

    def load(path: str) -> str | None:
        if path not in current:
            originals[path] = current[path] = read(path)
        return current[path]

    applied: list[AppliedBlock] = []
    for number, block in enumerate(blocks, 1):
        path = block.path
        if path.startswith(("a/", "b/")) and load(path) is None and load(path[2:]) is not None:
            path = path[2:]
        new_text, steps = apply_block(load(path), block.action, block.location, block.code)
        current[path] = new_text
        applied.extend(AppliedBlock(block=number, path=path, action=block.action,
                                    target=step.target, start_line=step.start_line,
                                    fallback=step.fallback) for step in steps)
    files = {path: new for path, new in current.items()
             if new is not None and new != originals[path]}
    return CustomDiffResult(files=files, applied=applied,
                            unified_diff=unified_diff({p: originals[p] for p in files}, files))


def unified_diff(original: dict[str, str | None], new: dict[str, str]) -> str:
    """A git-style diff from `original` (None: the file is new) to `new`, 3 lines of context."""
    out: list[str] = []
    for path in sorted(new):
        before, after = original.get(path), new[path]
        if before == after:
            continue
        out.append(f"diff --git a/{path} b/{path}\n")
        out.append("new file mode 100644\n--- /dev/null\n" if before is None else f"--- a/{path}\n")
        out.append(f"+++ b/{path}\n")
        old_lines, new_lines = _diff_lines(before or ""), _diff_lines(after)
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        for group in matcher.get_grouped_opcodes(3):
            old_range = _range(group[0][1], group[-1][2])
            new_range = _range(group[0][3], group[-1][4])
            out.append(f"@@ -{old_range} +{new_range} @@\n")
            for tag, i1, i2, j1, j2 in group:
                if tag == "equal":
                    out.extend(_diff_line(" ", line) for line in old_lines[i1:i2])
                    continue
                out.extend(_diff_line("-", line) for line in old_lines[i1:i2])
                out.extend(_diff_line("+", line) for line in new_lines[j1:j2])
    return "".join(out)


def _parse_block(lines: list[str], index: int, number: int) -> tuple[DiffBlock, int]:
    """Parse the block whose `diff` line is just above `index`; return it and the next index."""
    header: list[str] = []
    fields = ("path", "action", "location")
    while len(header) < 3:
        if index >= len(lines):
            raise _error(number, f"the text ends before the block's {fields[len(header)]}")
        line, index = lines[index].strip(), index + 1
        if _END.fullmatch(line):
            raise _error(number, f"'end diff' comes before the block's {fields[len(header)]}")
        if line:  # blank lines inside the header are tolerated
            header.append(line)
    path = _check_path(header[0], number)
    action: Literal["rewrite", "insert"] = "insert" if header[1].lower() == "insert" else "rewrite"
    if header[1].lower() != action:
        raise _error(number, f"unknown action {header[1][:60]!r} (expected rewrite or insert)")
    location = _check_location(header[2], number)
    code: list[str] = []
    while True:
        if index >= len(lines) or lines[index].lower() == "diff":
            raise _error(number, "missing 'end diff'")
        if _END.fullmatch(lines[index].strip()):
            break
        code.append(lines[index])
        index += 1
    if code and code[0].lstrip().startswith(_FENCE):  # a fence around the code itself
        code.pop(0)
    if code and code[-1].strip() in _FENCE:
        code.pop()
    while code and not code[0].strip():
        code.pop(0)
    while code and not code[-1].strip():
        code.pop()
    if not code:
        raise _error(number, "the block has no code")
    block = DiffBlock(path=path, action=action, location=location, code="\n".join(code))
    return block, index + 1


def _check_path(raw: str, number: int) -> str:
    path = raw.strip("`'\" \t").replace("\\", "/")
    if path.startswith("/") or re.match(r"[A-Za-z]:/", path) or path.startswith("~"):
        raise _error(number, f"path {raw[:80]!r} is absolute, not relative to the repository")
    normal = posixpath.normpath(path) if path else ""
    if normal in ("", ".") or normal == ".." or normal.startswith("../"):
        raise _error(number, f"path {raw[:80]!r} is not a file inside the repository")
    return normal


def _check_location(raw: str, number: int) -> int | Literal["EOF", "BOF"]:
    if raw.upper() == "EOF":
        return "EOF"
    if raw.upper() == "BOF":
        return "BOF"
    match = _LOCATION.fullmatch(raw)
    if not match:
        raise _error(number, f"bad location {raw[:60]!r} (expected a line number, EOF or BOF)")
    return int(match.group(1))


def _error(number: int, message: str) -> CustomDiffError:
    return CustomDiffError(f"custom diff block {number}: {message}")


def _diff_lines(text: str) -> list[str]:
    """Lines as git sees them: split after each "\\n" (a "\\r" stays in its line)."""
    return re.findall(r"[^\n]*\n|[^\n]+\Z", text)


def _diff_line(prefix: str, line: str) -> str:
    if line.endswith("\n"):
        return prefix + line
    return f"{prefix}{line}\n\\ No newline at end of file\n"


def _range(start: int, stop: int) -> str:
    """A hunk range as `diff -u` writes it (difflib's convention)."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"
